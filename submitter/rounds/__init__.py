"""The rules of each MLPerf round, loaded from the TOML packs beside this module."""

from submitter.rounds.models import BenchmarkRules, RoundRules, Scenario, SystemTypeTable
from submitter.rounds.registry import available_rounds, load_round

__all__ = ["BenchmarkRules", "RoundRules", "Scenario", "SystemTypeTable", "available_rounds", "load_round"]
