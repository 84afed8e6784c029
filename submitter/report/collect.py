"""From a submission tree to the review's data: the checker's verdicts, the parsed logs, the headroom.

This is the report's only reader of files, and it decides nothing: `check_tree` gives the findings,
each result's verdict, figure and unit (the system lint included), and the parsed tree they were judged
on, so the review and `submitter check` never disagree about a result or what a file says.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from submitter.check.accuracy_judgement import samples_covered
from submitter.check.checker import check_tree
from submitter.check.context import ResultContext, system_json_path
from submitter.check.load import EntryFiles
from submitter.check.summary import ResultRow
from submitter.fileformats.mlperf_log import DetailLog
from submitter.report.headroom import result_headroom
from submitter.report.model import (
    AccuracyFacts,
    Percentile,
    PerformanceFacts,
    ResultReview,
    Review,
    SystemReview,
)
from submitter.rounds.models import Scenario
from submitter.rule_registry import Finding, Severity

NS_PER_MS = 1_000_000
# LoadGen's percentile keys; the number in each is the percentile ("99.00").
_PERCENTILE_KEYS = {
    "query_latency": re.compile(r"^result_(\d+(?:\.\d+)?)_percentile_latency_ns$"),
    "ttft": re.compile(r"^result_first_token_(\d+(?:\.\d+)?)_percentile_latency_ns$"),
    "tpot": re.compile(r"^result_time_per_output_token_(\d+(?:\.\d+)?)_percentile_ns$"),
}
_SAMPLES_PER_SECOND_KEYS = ("result_samples_per_second", "result_completed_samples_per_sec")
SystemKey = tuple[str, str, str]  # division, submitter, system
ResultKey = tuple[str, str, str]  # division, submitter, system/benchmark/scenario
TREE = ("", "", "")  # the owner of findings that belong to no result and no system


def build_review(path: Path, round_name: str | None = None) -> Review:
    """The review of the tree at `path` (any scope `submitter check` takes) in the named or detected
    round."""
    report = check_tree(path, round_name)
    rules = report.rules
    system_paths = {system_json_path(rules, *key): key for key in sorted(report.systems)}
    owned = _findings_by_owner(
        report.findings, {_result_key(ctx.files) for ctx in report.contexts}, system_paths
    )

    results: dict[SystemKey, list[ResultReview]] = defaultdict(list)
    for ctx, row in zip(report.contexts, report.results, strict=True):
        entry = ctx.entry
        review = _result(ctx, row, owned.get(_result_key(ctx.files), []))
        results[(entry.division, entry.submitter, entry.system)].append(review)
    systems = []
    for json_path, key in system_paths.items():
        description = report.systems.get(key)
        systems.append(
            SystemReview(
                division=key[0],
                submitter=key[1],
                system=key[2],
                path=json_path,
                description=description.data
                if description is not None and isinstance(description.data, dict)
                else None,
                findings=tuple(owned.get(key, [])),
                results=tuple(sorted(results[key], key=_reading_order)),
            )
        )
    return Review(
        tree=str(path),
        round=rules.name,
        detected=report.detection.reason if report.detection else None,
        systems=tuple(systems),
        tree_findings=tuple(owned.get(TREE, [])),
    )


def _result_key(files: EntryFiles) -> ResultKey:
    return files.entry.division, files.entry.submitter, files.entry.id


def _findings_by_owner(
    findings: list[Finding], results: set[ResultKey], systems: dict[str, SystemKey]
) -> dict[tuple[str, str, str], list[Finding]]:
    """Each finding shown once: with its result, else with the system whose description it is about,
    else with the tree."""
    owned: dict[tuple[str, str, str], list[Finding]] = defaultdict(list)
    for finding in findings:
        division, _, rest = (finding.result or finding.path).partition("/")
        key: ResultKey = (division, rest.partition("/")[0], finding.result or "")
        if key in results:
            owned[key].append(finding)
        elif finding.path in systems:
            owned[systems[finding.path]].append(finding)
        else:
            owned[TREE].append(finding)
    return owned


def _reading_order(result: ResultReview) -> tuple[str, int, str]:
    """Benchmarks by name, then scenarios in the rules' order (Offline, Server, Interactive, ...)."""
    scenario = Scenario.from_name(result.scenario)
    order = list(Scenario).index(scenario) if scenario is not None else len(Scenario)
    return result.benchmark, order, result.scenario


def _result(ctx: ResultContext, row: ResultRow, findings: list[Finding]) -> ResultReview:
    entry, files = ctx.entry, ctx.files
    performance = performance_facts(files.performance_log)
    accuracy = accuracy_facts(files)
    errors = [finding for finding in findings if finding.severity is Severity.ERROR]
    return ResultReview(
        division=entry.division,
        submitter=entry.submitter,
        system=entry.system,
        benchmark=entry.benchmark,
        scenario=entry.scenario,
        metric=row.metric,
        units=row.units,
        valid=row.valid,
        performance=performance,
        accuracy=accuracy,
        headroom=result_headroom(ctx, errors, accuracy),
        findings=tuple(findings),
    )


def performance_facts(log: DetailLog | None) -> PerformanceFacts | None:
    if log is None:
        return None
    series: dict[str, list[Percentile]] = defaultdict(list)
    for key, record in log.records.items():
        for name, pattern in _PERCENTILE_KEYS.items():
            match = pattern.match(key)
            if match and _is_number(record.value):
                series[name].append(Percentile(percentile=float(match.group(1)), ms=record.value / NS_PER_MS))
    samples = next((log.get(key) for key in _SAMPLES_PER_SECOND_KEYS if _is_number(log.get(key))), None)
    validity, scenario = log.get("result_validity"), log.get("effective_scenario")
    return PerformanceFacts(
        validity=validity if isinstance(validity, str) else None,
        logged_scenario=scenario if isinstance(scenario, str) else None,
        samples_per_second=samples,
        **{name: tuple(sorted(points, key=lambda p: p.percentile)) for name, points in series.items()},
    )


def accuracy_facts(files: EntryFiles) -> AccuracyFacts | None:
    accuracy = files.accuracy
    if accuracy is None:
        return None
    return AccuracyFacts(
        path=accuracy.path,
        values={metric: value.raw for metric, value in accuracy.values.items()},
        samples=_accuracy_samples(files.accuracy_log),
    )


def _accuracy_samples(log: DetailLog | None) -> int | None:
    return samples_covered(log) if log is not None else None


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
