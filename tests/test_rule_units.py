"""Rules judged on small contexts built directly: a handful of log records, no tree on disk.

The whole-tree tests (test_check_rules.py and others) prove the rules in place; these pin each rule's
own logic to the round pack's numbers, quickly, one record at a time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from submitter.check.context import PERFORMANCE_RULES, PerformanceRun, ResultContext
from submitter.check.load import EntryFiles, FileIndex
from submitter.check.rules import performance  # noqa: F401  (registers the performance rules)
from submitter.check.tree import ResultEntry
from submitter.fileformats.mlperf_log import parse_detail_log
from submitter.rounds.registry import available_rounds, load_round
from tests.minitree import mllog

ROUND = available_rounds()[-1]
BENCHMARK = "llama3.1-8b"
LOG_PATH = "closed/Org/results/sys/llama3.1-8b/Offline/performance/run_1/mlperf_log_detail.txt"


def valid_records() -> dict[str, Any]:
    """The records a valid Offline run of the newest round logs, taken from its pack."""
    rules = load_round(ROUND)
    seeds = rules.loadgen.seeds
    return {
        "effective_scenario": "Offline",
        "result_validity": "VALID",
        "effective_performance_sample_count": rules.benchmark(BENCHMARK).dataset.performance_sample_count,
        "effective_min_duration_ms": rules.limits.min_duration_ms,
        "effective_qsl_rng_seed": seeds.qsl_rng_seed,
        "effective_sample_index_rng_seed": seeds.sample_index_rng_seed,
        "effective_schedule_rng_seed": seeds.schedule_rng_seed,
    }


def performance_run(records: dict[str, Any]) -> PerformanceRun:
    text = "\n".join(mllog(key, value) for key, value in records.items()) + "\n"
    log = parse_detail_log(text, LOG_PATH)
    folder = LOG_PATH.rsplit("/performance/", 1)[0]
    entry = ResultEntry(Path("."), "closed", "Org", "sys", BENCHMARK, "Offline")
    files = EntryFiles(
        entry=entry,
        benchmark=BENCHMARK,
        results_dir=folder,
        performance_dir=f"{folder}/performance/run_1",
        accuracy_dir=f"{folder}/accuracy",
        measurements_dir=folder,
        compliance_dir=folder,
        performance_log=log,
        accuracy_log=None,
        accuracy=None,
        measurements=None,
        measurements_path=None,
    )
    index = FileIndex(
        files={LOG_PATH: len(text)}, dirs=frozenset(), symlinks={}, listing={}, empty_dirs=frozenset()
    )
    context = ResultContext(files=files, rules=load_round(ROUND), index=index, system=None)
    return PerformanceRun(parsed=log, log_path=LOG_PATH, context=context)


def findings(rule_id: str, records: dict[str, Any]) -> list[str]:
    check = PERFORMANCE_RULES[rule_id].check
    return [f"{problem.field}: {problem.message}" for problem in check(performance_run(records))]


@pytest.mark.parametrize("rule_id", ["PERF-SAMPLE-COUNT", "PERF-MIN-DURATION", "PERF-SEED", "PERF-VALIDITY"])
def test_a_valid_runs_records_pass(rule_id: str) -> None:
    assert findings(rule_id, valid_records()) == []


def test_one_sample_fewer_than_the_pack_requires_is_an_error() -> None:
    records = valid_records()
    needed = records["effective_performance_sample_count"]
    records["effective_performance_sample_count"] = needed - 1
    assert findings("PERF-SAMPLE-COUNT", records) == [
        f"effective_performance_sample_count: is {needed - 1}, needs to be >= {needed}"
    ]


def test_a_shortened_run_is_named_in_milliseconds() -> None:
    records = valid_records()
    records["effective_min_duration_ms"] = 10_000
    minimum = load_round(ROUND).limits.min_duration_ms
    assert findings("PERF-MIN-DURATION", records) == [
        f"effective_min_duration_ms: is 10000 ms, needs to be >= {minimum} ms"
    ]


def test_a_seed_of_another_round_names_the_seed_and_the_round() -> None:
    records = valid_records()
    records["effective_schedule_rng_seed"] += 1
    wrong = records["effective_schedule_rng_seed"]
    (found,) = findings("PERF-SEED", records)
    assert found.startswith(f"effective_schedule_rng_seed: is {wrong}, round {ROUND} requires {wrong - 1}")


def test_an_invalid_run_is_an_error() -> None:
    records = valid_records()
    records["result_validity"] = "INVALID"
    assert len(findings("PERF-VALIDITY", records)) == 1
