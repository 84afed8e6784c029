"""What the checker's rules look at: the whole tree, or one result with everything that belongs to it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from submitter.check.detect import Detection
from submitter.check.load import EntryFiles, FileIndex, JsonFile
from submitter.check.tree import Scope
from submitter.rounds.models import BenchmarkRules, RoundRules, Scenario
from submitter.rules import RuleSet

SystemKey = tuple[str, str, str]  # division, submitter, system


@dataclass(frozen=True)
class TreeContext:
    scope: Scope
    rules: RoundRules
    detection: Detection | None  # None when the user named the round
    index: FileIndex
    entries: tuple[EntryFiles, ...]
    systems: Mapping[SystemKey, JsonFile | None]
    unreadable: Mapping[str, str]  # path -> why it could not be read
    path: str = "."


@dataclass(frozen=True)
class ResultContext:
    files: EntryFiles
    rules: RoundRules
    index: FileIndex
    system: Mapping[str, Any] | None  # the parsed system description, if it is a readable object

    @property
    def path(self) -> str:
        return self.files.results_dir

    @property
    def result(self) -> str:
        return self.files.entry.id

    @property
    def bench(self) -> BenchmarkRules | None:
        return self.rules.benchmarks.get(self.files.entry.benchmark)

    @property
    def scenario(self) -> Scenario | None:
        """The directory's scenario; the official checker compares names case-insensitively."""
        name = self.files.entry.scenario.lower()
        return next((scenario for scenario in Scenario if scenario.value.lower() == name), None)

    @property
    def closed(self) -> bool:
        return self.files.entry.division in ("closed", "network")

    @property
    def perf_log_path(self) -> str:
        return f"{self.files.performance_dir}/mlperf_log_detail.txt"


def system_json_path(rules: RoundRules, division: str, submitter: str, system: str) -> str:
    return rules.layout.system_json.format(division=division, submitter=submitter, system=system)


TREE_RULES: RuleSet[TreeContext] = RuleSet("submission tree")
RESULT_RULES: RuleSet[ResultContext] = RuleSet("results")
