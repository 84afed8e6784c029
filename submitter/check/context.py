"""What the checker's rules look at: the whole tree, one result with everything that belongs to it, or one
performance run (a result's own, or the performance run of a TEST01/TEST04 audit, checked the same way)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Any

from msgspec import Struct

from submitter.check.accuracy_judgement import AccuracyJudgement, judge
from submitter.check.detect import Detection
from submitter.check.load import EntryFiles, FileIndex, JsonFile
from submitter.check.tree import ResultEntry, Scope
from submitter.fileformats.mlperf_log import DetailLog
from submitter.rounds.models import BenchmarkRules, RoundRules, Scenario
from submitter.rule_registry import RuleSet

SystemKey = tuple[str, str, str]  # division, submitter, system
CLOSED_DIVISIONS = ("closed", "network")


class TreeContext(Struct, frozen=True):
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


class ResultContext(Struct, frozen=True, dict=True):
    """(`dict=True` lets the judgements several rules share be computed once, as cached properties.)"""

    files: EntryFiles
    rules: RoundRules
    index: FileIndex
    system: Mapping[str, Any] | None  # the parsed system description, if it is a readable object
    nameplate_file: JsonFile | None = None  # the system's <system>_power.yaml (v6.1), if read

    @property
    def nameplate(self) -> Any:
        """The parsed nameplate YAML; None where there is none or it could not be read."""
        return self.nameplate_file.data if self.nameplate_file is not None else None

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
    def required_audits(self) -> tuple[str, ...]:
        """The compliance tests the check holds this result to: a closed (or network) LoadGen result's
        tests of the round; an endpoints result carries audits of its own (audit/), an open one none."""
        if not self.closed or self.endpoints or self.bench is None:
            return ()
        return tuple(test for test in self.bench.compliance_tests if test in self.rules.compliance)

    @property
    def perf_log_path(self) -> str:
        return f"{self.files.performance_dir}/mlperf_log_detail.txt"

    @cached_property
    def accuracy_judgement(self) -> AccuracyJudgement | None:
        """accuracy.txt judged against the scenario's targets, as the official checker judges it."""
        accuracy, bench = self.files.accuracy, self.bench
        if accuracy is None or bench is None or self.endpoints:
            return None
        targets = bench.accuracy.targets_for(self.scenario)
        return judge(accuracy.lines, targets, bench.accuracy.upper_limits, self.rules.accuracy_patterns)

    @cached_property
    def power_issues(self) -> list[Any]:
        """What the Power WG's checks find in a power result's session (they read an hour of PTD logs)."""
        if self.files.power_files is None:
            return []
        from submitter.check.power import verify_power_session

        return verify_power_session(self.files.power_files, self.rules.power)


class PerformanceRun(Struct, frozen=True):
    """A performance log and what judging it needs: the result's own run, or an audit's."""

    parsed: DetailLog | None  # as read, with the lines that could not be read
    log_path: str
    context: ResultContext
    audit: str | None = None  # TEST01 or TEST04 when this is an audit's run

    @property
    def log(self) -> DetailLog | None:
        """The log the rules judge: None when it is missing or could not be read (empty, garbled), which
        PERF-LOG reports once, rather than every rule reporting each value it lacks as wrong."""
        parsed = self.parsed
        return parsed if parsed is not None and not parsed.problems else None

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
        return (
            Scenario.from_name(self.scenario_name) if self.context.endpoints else _exact(self.scenario_name)
        )

    @property
    def scenario_name(self) -> object:
        """The scenario as the official checker names it: the log's, or its reading of an endpoints run's."""
        logged = self.log.get("effective_scenario") if self.log is not None else None
        if not self.context.endpoints:
            return logged
        directory = self.context.files.entry.scenario.lower()
        if directory == "singlestream":
            return Scenario.SINGLE_STREAM.value
        if directory == "interactive" or str(logged).lower() == "interactive":
            return Scenario.INTERACTIVE.value
        if str(logged).lower() == "online":
            return Scenario.SERVER.value
        return logged


def _exact(name: object) -> Scenario | None:
    return Scenario(name) if isinstance(name, str) and name in Scenario._value2member_map_ else None


def system_json_path(rules: RoundRules, division: str, submitter: str, system: str) -> str:
    return rules.layout.system_json.format(division=division, submitter=submitter, system=system)


TREE_RULES: RuleSet[TreeContext] = RuleSet("submission tree")
RESULT_RULES: RuleSet[ResultContext] = RuleSet("results")
PERFORMANCE_RULES: RuleSet[PerformanceRun] = RuleSet("performance runs")
