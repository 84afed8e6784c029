"""Rules judged on small contexts built directly: a handful of log records, no tree on disk.

The whole-tree tests (test_check_rules.py and others) prove the rules in place; these pin each rule's
own logic to the round pack's numbers, quickly, one record at a time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from minitree import mllog

from submitter.check.context import PERFORMANCE_RULES, RESULT_RULES, PerformanceRun, ResultContext
from submitter.check.load import EntryFiles, FileIndex
from submitter.check.rules import performance  # noqa: F401  (registers the performance rules)
from submitter.check.tree import ResultEntry
from submitter.fileformats.accuracy_txt import parse_accuracy_txt
from submitter.fileformats.mlperf_log import parse_detail_log
from submitter.rounds.registry import available_rounds, load_round

ROUND = available_rounds()[-1]
BENCHMARK = "llama3.1-8b"
LOG_PATH = "closed/Org/results/sys/llama3.1-8b/Offline/performance/run_1/mlperf_log_detail.txt"
ACCURACY_PATH = "closed/Org/results/sys/llama3.1-8b/Offline/accuracy/accuracy.txt"
# accuracy.txt's metric names as the reference prints them, for the checker's metric names.
PRINTED = {
    "ROUGE1": "rouge1",
    "ROUGE2": "rouge2",
    "ROUGEL": "rougeL",
    "ROUGELSUM": "rougeLsum",
    "GEN_LEN": "gen_len",
}


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


def result_context(records: dict[str, Any], accuracy_txt: str | None = None) -> ResultContext:
    """A closed result of the newest round: its performance log's records, and accuracy.txt if given."""
    text = "\n".join(mllog(key, value) for key, value in records.items()) + "\n"
    log = parse_detail_log(text, LOG_PATH)
    rules = load_round(ROUND)
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
        accuracy=parse_accuracy_txt(accuracy_txt, ACCURACY_PATH, rules.accuracy_patterns)
        if accuracy_txt is not None
        else None,
        measurements=None,
        measurements_path=None,
    )
    index = FileIndex(
        files={LOG_PATH: len(text)}, dirs=frozenset(), symlinks={}, listing={}, empty_dirs=frozenset()
    )
    return ResultContext(files=files, rules=rules, index=index, system=None)


def performance_run(records: dict[str, Any]) -> PerformanceRun:
    context = result_context(records)
    return PerformanceRun(parsed=context.files.performance_log, log_path=LOG_PATH, context=context)


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


def accuracy_txt(values: dict[str, float]) -> str:
    """accuracy.txt as the llama3.1-8b reference prints it, with the hash line truncation adds."""
    printed = {PRINTED[metric]: value for metric, value in values.items()}
    return f"\nResults\n\n{printed}\n\nhash={'0' * 64}\n"


def reference_values() -> dict[str, float]:
    """Every metric at the pack's reference value: above each target, under each upper limit."""
    accuracy = load_round(ROUND).benchmark(BENCHMARK).accuracy
    return {bound.metric: bound.reference for bound in (*accuracy.targets, *accuracy.upper_limits)}


def accuracy_findings(rule_id: str, text: str) -> list[str]:
    check = RESULT_RULES[rule_id].check
    return [f"{problem.field}: {problem.message}" for problem in check(result_context(valid_records(), text))]


@pytest.mark.parametrize("rule_id", ["ACC-TARGET", "ACC-UPPER-LIMIT", "ACC-HASH", "ACC-VALUE"])
def test_reference_values_pass_the_accuracy_rules(rule_id: str) -> None:
    assert accuracy_findings(rule_id, accuracy_txt(reference_values())) == []


def test_a_metric_under_its_target_is_named_with_the_target() -> None:
    bound = next(b for b in load_round(ROUND).benchmark(BENCHMARK).accuracy.targets if b.metric == "ROUGE2")
    values = reference_values() | {"ROUGE2": round(bound.threshold - 0.01, 4)}
    target = f"{bound.threshold:.6f} ({bound.reference} x {bound.factor})"
    assert accuracy_findings("ACC-TARGET", accuracy_txt(values)) == [
        f"ROUGE2: is {values['ROUGE2']}, the target is >= {target}"
    ]


def test_gen_len_over_its_upper_limit_is_an_error_and_a_missing_hash_too() -> None:
    (limit,) = load_round(ROUND).benchmark(BENCHMARK).accuracy.upper_limits
    values = reference_values() | {"GEN_LEN": int(limit.threshold) + 1}
    assert len(accuracy_findings("ACC-UPPER-LIMIT", accuracy_txt(values))) == 1
    without_hash = accuracy_txt(reference_values()).replace(f"hash={'0' * 64}\n", "")
    assert accuracy_findings("ACC-HASH", without_hash) == ["None: has no hash=<sha256> line"]
