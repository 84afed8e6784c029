"""What the checker's rules look at: the whole tree, one result with everything that belongs to it, or one
performance run (a result's own, or the performance run of a TEST01/TEST04 audit, checked the same way)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from submitter.check.detect import Detection
from submitter.check.load import EntryFiles, FileIndex, JsonFile
from submitter.check.mlperf_log import DetailLog
from submitter.check.tree import ResultEntry, Scope
from submitter.rounds.models import BenchmarkRules, RoundRules, Scenario
from submitter.rules import RuleSet

SystemKey = tuple[str, str, str]  # division, submitter, system
CLOSED_DIVISIONS = ("closed", "network")


@dataclass(frozen=True)
class TreeContext:
    scope: Scope
    rules: RoundRules
    detection: Detection | None  # None when the user named the round
    index: FileIndex
    entries: tuple[EntryFiles, ...]
    systems: Mapping[SystemKey, JsonFile | None]
    unreadable: Mapping[str, str]  # path -> why it could not be read
    model_mappings: Mapping[tuple[str, str], JsonFile | None]  # (division, submitter) -> model_mapping.json
    nameplates: Mapping[SystemKey, JsonFile | None]  # v6.1 <system>_power.yaml, parsed
    path: str = "."


@dataclass(frozen=True)
class ResultContext:
    files: EntryFiles
    rules: RoundRules
    index: FileIndex
    system: Mapping[str, Any] | None  # the parsed system description, if it is a readable object
    nameplate: Any = None  # the system's parsed <system>_power.yaml (v6.1), if any

    @property
    def path(self) -> str:
        return self.files.results_dir

    @property
    def result(self) -> str:
        return self.files.entry.id

    @property
    def entry(self) -> ResultEntry:
        return self.files.entry

    @property
    def bench(self) -> BenchmarkRules | None:
        return self.rules.benchmarks.get(self.files.benchmark)

    @property
    def scenario(self) -> Scenario | None:
        """The directory's scenario; the official checker compares names case-insensitively."""
        return Scenario.from_name(self.files.entry.scenario)

    @property
    def closed(self) -> bool:
        return self.files.entry.division in CLOSED_DIVISIONS

    @property
    def endpoints(self) -> bool:
        return self.files.endpoints is not None

    @property
    def perf_log_path(self) -> str:
        return f"{self.files.performance_dir}/mlperf_log_detail.txt"


@dataclass(frozen=True)
class PerformanceRun:
    """A performance log and what judging it needs: the result's own run, or an audit's."""

    log: DetailLog | None
    log_path: str
    context: ResultContext
    audit: str | None = None  # TEST01 or TEST04 when this is an audit's run

    @property
    def path(self) -> str:
        return self.log_path

    @property
    def result(self) -> str:
        return self.context.result

    @property
    def bench(self) -> BenchmarkRules | None:
        return self.context.bench

    @property
    def rules(self) -> RoundRules:
        return self.context.rules

    @property
    def logged_scenario(self) -> Scenario | None:
        """The scenario LoadGen ran (Server for an Interactive result); endpoints name it themselves."""
        if self.log is None:
            return None
        logged = self.log.get("effective_scenario")
        if self.context.endpoints:
            return _endpoints_scenario(logged, self.context.files.entry.scenario)
        return Scenario(logged) if logged in Scenario._value2member_map_ else None


def _endpoints_scenario(logged: object, directory: str) -> Scenario | None:
    """How the official checker names an endpoints run's scenario (its `online` is LoadGen's Server)."""
    if directory.lower() == "singlestream":
        return Scenario.SINGLE_STREAM
    if directory.lower() == "interactive" or str(logged).lower() == "interactive":
        return Scenario.INTERACTIVE
    if str(logged).lower() == "online":
        return Scenario.SERVER
    return Scenario.from_name(logged)


def system_json_path(rules: RoundRules, division: str, submitter: str, system: str) -> str:
    return rules.layout.system_json.format(division=division, submitter=submitter, system=system)


TREE_RULES: RuleSet[TreeContext] = RuleSet("submission tree")
RESULT_RULES: RuleSet[ResultContext] = RuleSet("results")
PERFORMANCE_RULES: RuleSet[PerformanceRun] = RuleSet("performance runs")
