"""Endpoints-format results read as the official checker's EndpointsParser reads them, and never raising."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from submitter.check.endpoints import AuditOutcome, EndpointsResult, read_audit, read_endpoints_result
from submitter.fileformats.mlperf_log import DetailLog

FIXTURES = Path(__file__).parent / "fixtures" / "endpoints"
WHERE = "closed/Org/results/sys/bench/Offline"
SHA = "ea3327530376fef63d706f4105612e17c2c80a8d"


def _from_folder(folder: Path, config: str = "config.yaml") -> EndpointsResult:
    def text(relative: str) -> str | None:
        path = folder / relative
        return path.read_text(encoding="utf-8") if path.is_file() else None

    return read_endpoints_result(
        text(config),
        text("performance/result_summary.json"),
        text("accuracy/accuracy_results.json"),
        f"closed/Org/results/sys/{folder.parent.name}/{folder.name}",
        config_name=config,
    )


def _read(
    config: str | None = "",
    summary: Any = None,
    accuracy: Any = None,
) -> EndpointsResult:
    """A result from inline content: dicts become JSON, None a missing file."""

    def text(data: Any) -> str | None:
        return None if data is None else data if isinstance(data, str) else json.dumps(data)

    return read_endpoints_result(config, text(summary), text(accuracy), WHERE)


def _values(log: DetailLog) -> dict[str, Any]:
    return {key: record.value for key, record in log.records.items()}


def _assert_values(log: DetailLog, expected: dict[str, Any]) -> None:
    values = _values(log)
    assert values == expected
    assert {k: type(v) for k, v in values.items()} == {k: type(v) for k, v in expected.items()}
    assert all(record.line == 0 for record in log.records.values())


# --- the fixtures, every mapped field -------------------------------------------------------------------

LLAMA_CONFIG_VALUES = {
    "loadgen_version": "1.0",  # config.yaml's `version`: the config's own version, as the official maps it
    "effective_scenario": "offline",
    "streaming": "off",
    "load_pattern": "max_throughput",
    "effective_min_duration_ms": 600000,
    "effective_max_duration_ms": 0,  # 0 is a value, not an absence
    "effective_min_query_count": 13368,
    "effective_sample_index_rng_seed": 111,
    "effective_schedule_rng_seed": 137,
}


def test_offline_llm_performance_fields() -> None:
    result = _from_folder(FIXTURES / "llama3.1-8b" / "Offline")
    assert result.problems == ()
    assert result.performance.path == "closed/Org/results/sys/llama3.1-8b/Offline"
    _assert_values(
        result.performance,
        {
            "loadgen_version": "1.0",
            "loadgen_git_commit_hash": SHA,
            "test_datetime": 0,
            "qsl_reported_total_count": 13368,
            "qsl_reported_performance_count": 13368,
            "effective_scenario": "offline",
            "streaming": "off",
            "min_output_tokens": 12,
            "max_output_tokens": 128,
            "load_pattern": "max_throughput",
            "effective_min_duration_ms": 600000,
            "effective_max_duration_ms": 0,
            "effective_min_query_count": 13368,
            "effective_sample_index_rng_seed": 111,
            "effective_schedule_rng_seed": 137,
            "generated_query_count": 13368,
            "generated_query_duration": 557000000000,
            "result_completed_samples_per_sec": 24.0,
            "result_min_latency_ns": 1203456789,
            "result_max_latency_ns": 549876543210,
            "result_mean_latency_ns": 281236377178.59485,
            "result_50.00_percentile_latency_ns": 280667788990.0,
            "result_90.00_percentile_latency_ns": 503887766554.0,
            "result_95.00_percentile_latency_ns": 522998998998.0,
            "result_99.00_percentile_latency_ns": 541002003004.0,
            # p99.9 early stopping is null (too few samples); TTFT/TPOT are all-null maps: absent
            "result_completed_tokens_per_second": 2304.0,
            "result_query_count": 13368,
            "num_errors": 0,
            "mean_output_tokens": 96.0,
            # 13368 issued / 557 s: Offline's key is never stated, so always inferred
            "result_samples_per_second": 24.0,
        },
    )


def test_offline_llm_accuracy_fields() -> None:
    result = _from_folder(FIXTURES / "llama3.1-8b" / "Offline")
    rouge = {
        "rouge1": "38.7792",
        "rouge2": "15.9075",
        "rougeL": "24.4957",
        "rougeLsum": "35.7946",
        "gen_len": "8167644",
        "gen_num": 13368,
    }
    _assert_values(
        result.accuracy,
        {
            **LLAMA_CONFIG_VALUES,
            "effective_accuracy_sample_count": 13368,
            "qsl_reported_total_count": 13368,
            "generated_query_count": 13368,
            "num_errors": 0,
            "accuracy_score": rouge,
        },
    )
    assert result.accuracy_scores == (rouge,)


def test_online_server_llm_performance_fields() -> None:
    result = _from_folder(FIXTURES / "gpt-oss-120b" / "online")
    assert result.problems == ()
    _assert_values(
        result.performance,
        {
            "loadgen_version": "1.0",
            "loadgen_git_commit_hash": SHA,
            "test_datetime": 0,
            "qsl_reported_total_count": 3612,
            "qsl_reported_performance_count": 3612,
            "effective_scenario": "online",
            "streaming": "on",
            "min_output_tokens": 17,
            "max_output_tokens": 32768,
            "load_pattern": "poisson",
            "effective_min_duration_ms": 600000,
            "effective_max_duration_ms": 0,
            "effective_sample_index_rng_seed": 42,
            "effective_schedule_rng_seed": 42,
            "generated_query_count": 3612,
            "generated_query_duration": 602345678901,
            "effective_target_qps": 6.0,
            "result_completed_samples_per_sec": 6.0,  # stated (legacy window), so not inferred
            "result_min_latency_ns": 1123456789,
            "result_max_latency_ns": 598765432101,
            "result_mean_latency_ns": 57277008310.249306,
            "result_50.00_percentile_latency_ns": 50334455667.0,
            "result_90.00_percentile_latency_ns": 151776655443.0,
            "result_95.00_percentile_latency_ns": 202665544332.0,
            "result_99.00_percentile_latency_ns": 305998877665.0,
            "result_first_token_min_latency_ns": 61234567,
            "result_first_token_max_latency_ns": 2987654321,
            "result_first_token_mean_latency_ns": 500034198.5565097,
            "result_first_token_50.00_percentile_latency_ns": 403112233.0,
            "result_first_token_90.00_percentile_latency_ns": 902112233.0,
            "result_first_token_95.00_percentile_latency_ns": 1104332211.0,
            "result_first_token_99.00_percentile_latency_ns": 1510998877.0,
            "result_time_per_output_token_50.00_percentile_ns": 17556677.0,
            "result_time_per_output_token_90.00_percentile_ns": 23112233.0,
            "result_time_per_output_token_95.00_percentile_ns": 24223344.0,
            "result_time_per_output_token_99.00_percentile_ns": 27112233.0,
            "result_time_per_output_token_min": 6234567,
            "result_time_per_output_token_max": 31234567,
            "result_time_per_output_token_mean": 18000000.0,
            "result_completed_tokens_per_second": 19456.0,
            "result_query_count": 3610,
            "num_errors": 2,
            "mean_output_tokens": 3241.7684210526318,
        },
    )


def test_online_accuracy_sums_the_accuracy_datasets_only() -> None:
    result = _from_folder(FIXTURES / "gpt-oss-120b" / "online")
    _assert_values(
        result.accuracy,
        {
            "loadgen_version": "1.0",
            "effective_scenario": "online",
            "streaming": "on",
            "load_pattern": "poisson",
            "effective_min_duration_ms": 600000,
            "effective_max_duration_ms": 0,
            "effective_sample_index_rng_seed": 42,
            "effective_schedule_rng_seed": 42,
            "effective_target_qps": 6.0,
            "effective_accuracy_sample_count": 2175,  # 945 + 240 + 990; the performance entry's 3612 is not
            "qsl_reported_total_count": 2175,
            "generated_query_count": 2175,
            "num_errors": 0,
            "accuracy_score": 0.7122,
        },
    )
    # Every entry's score, the performance entry's included, as the official parser lists them.
    assert result.accuracy_scores == (0.7122, 0.8917, 0.7788, 0.7391)


def test_qwen3_vl_score_dict_and_config_yml() -> None:
    result = _from_folder(FIXTURES / "qwen3-vl-235b-a22b" / "Offline", config="config.yml")
    assert result.problems == ()
    assert result.accuracy_scores == ({"f1": 0.80124},)
    assert result.accuracy.get("accuracy_score") == {"f1": 0.80124}
    assert result.accuracy.get("effective_accuracy_sample_count") == 48289
    performance = _values(result.performance)
    assert "result_completed_samples_per_sec" not in performance  # qps is null
    assert "loadgen_git_commit_hash" not in performance  # git_sha is null
    assert performance["result_samples_per_second"] == 25.0  # 10000 issued / 400 s
    assert performance["num_errors"] == 2
    assert performance["result_query_count"] == 9998


def test_problems_name_the_config_file_given() -> None:
    result = read_endpoints_result("[", "{}", "{}", WHERE, config_name="config.yml")
    assert result.problems == (f"{WHERE}/config.yml: is not valid YAML (ParserError)",)


def test_config_yml_beside_an_unreadable_config_yaml() -> None:
    good, bad = "type: online", "type: [online"
    result = read_endpoints_result(bad, "{}", "{}", WHERE, fallback_config_text=good)
    assert result.performance.get("effective_scenario") == "online"
    assert result.problems == (f"{WHERE}/config.yaml: is not valid YAML (ParserError)",)
    missing = read_endpoints_result(None, "{}", "{}", WHERE, fallback_config_text=good)
    assert (missing.problems, missing.performance.get("effective_scenario")) == ((), "online")
    # Only a parse failure moves on: an empty or valid config.yaml is the one read.
    assert (
        "effective_scenario"
        not in read_endpoints_result("", "{}", "{}", WHERE, fallback_config_text=good).performance
    )
    valid = read_endpoints_result("type: offline", "{}", "{}", WHERE, fallback_config_text=good)
    assert valid.performance.get("effective_scenario") == "offline"


# --- audits ---------------------------------------------------------------------------------------------


def _audit(case: str) -> AuditOutcome:
    path = FIXTURES / "audits" / case / "audit_output_caching_test.json"
    return read_audit(path.read_text(encoding="utf-8"), f"{WHERE}/audit/audit_output_caching_test.json")


def test_audit_files() -> None:
    assert _audit("passed") == AuditOutcome("output_caching_test", True, None)
    assert _audit("failed") == AuditOutcome("output_caching_test", False, None)
    assert _audit("wrong_test") == AuditOutcome("accuracy_in_performance_test", True, None)
    unreadable = _audit("unreadable")
    assert (unreadable.test, unreadable.passed) == (None, None)
    assert unreadable.problem is not None
    assert unreadable.problem.startswith(f"{WHERE}/audit/audit_output_caching_test.json: is not valid JSON")
    server = FIXTURES / "gpt-oss-120b" / "online" / "audit" / "audit_output_caching_test.json"
    assert read_audit(server.read_text(encoding="utf-8"), "a.json") == AuditOutcome(
        "output_caching_test", True, None
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (None, AuditOutcome(None, None, "a.json: missing")),
        ("null", AuditOutcome(None, None, "a.json: is not a JSON object")),
        ('["test"]', AuditOutcome(None, None, "a.json: is not a JSON object")),
        ('{"passed": true}', AuditOutcome(None, None, "a.json: has no 'test'")),
        # The name is judged before "passed", so a file without "passed" still names its test.
        (
            '{"test": "output_caching_test"}',
            AuditOutcome("output_caching_test", None, "a.json: has no 'passed'"),
        ),
        ('{"test": 4, "passed": true}', AuditOutcome("4", True, None)),
        ('{"test": null, "passed": true}', AuditOutcome("None", True, None)),
        # Truthiness, as the official `not test_file["passed"]`.
        ('{"test": "t", "passed": "false"}', AuditOutcome("t", True, None)),
        ('{"test": "t", "passed": 0}', AuditOutcome("t", False, None)),
        ('{"test": "t", "passed": null}', AuditOutcome("t", False, None)),
    ],
)
def test_audit_edges(text: str | None, expected: AuditOutcome) -> None:
    assert read_audit(text, "a.json") == expected


# --- the official parser's quirks -----------------------------------------------------------------------


def test_result_summary_wins_over_config_and_config_map_before_direct_path() -> None:
    config = (
        "type: online\neffective_scenario: offline\nload_pattern: burst\nsettings: {load_pattern: {type: x}}"
    )
    result = _read(config, {"load_pattern": "concurrency", "effective_scenario": "offline"}, {})
    assert result.performance.get("load_pattern") == "concurrency"
    assert result.performance.get("effective_scenario") == "offline"
    # In config.yaml the mapped path (`type`, settings.load_pattern.type) comes before the direct one.
    assert result.accuracy.get("effective_scenario") == "online"
    assert result.accuracy.get("load_pattern") == "x"
    assert _read("effective_scenario: offline", {}, {}).performance.get("effective_scenario") == "offline"


def test_alternative_json_paths_come_after_the_direct_path() -> None:
    summary = {"result": {"total": 7, "failed": 3}, "n_samples_completed": 9, "n_samples_failed": 1}
    values = _values(_read("", summary, {}).performance)
    assert (values["result_query_count"], values["num_errors"]) == (7, 3)
    summary = {"generated_query_count": 5, "n_samples_issued": 8, "n_samples_from_dataset": 2}
    values = _values(_read("", summary, {}).performance)
    assert values["generated_query_count"] == 5
    assert values["qsl_reported_performance_count"] == 2
    assert values["qsl_reported_total_count"] == 8


def test_dotted_lookup_is_greedy() -> None:
    summary = {
        "latency.avg": 1,  # a literal dotted key beats the nested one
        "latency": {
            "avg": 2,
            "early_stopping_percentiles": {"99.9": 3, "50": 4, "90": {"0": 5}, "95": [6], "99": 7},
        },
        "ttft": {"early_stopping_percentiles": {"99": 8}},
    }
    values = _values(_read("", summary, {}).performance)
    assert values["result_mean_latency_ns"] == 1
    assert values["result_99.90_percentile_latency_ns"] == 3
    assert values["result_50.00_percentile_latency_ns"] == 4  # "50.0" finds key "50" and its scalar
    assert values["result_90.00_percentile_latency_ns"] == 5  # ... or key "50" then key "0"
    assert "result_95.00_percentile_latency_ns" not in values  # a list with ".0" left over is no value
    assert values["result_99.00_percentile_latency_ns"] == 7
    assert "result_first_token_99.90_percentile_latency_ns" not in values  # "99" with ".9" left: nothing
    assert values["result_first_token_99.00_percentile_latency_ns"] == 8


def test_empty_containers_are_absent_but_falsy_scalars_are_values() -> None:
    summary = {"latency": {"min": {}, "max": [], "avg": 0}, "ttft": {"min": "", "max": False}, "tps": None}
    values = _values(_read("", summary, {}).performance)
    assert "result_min_latency_ns" not in values
    assert "result_max_latency_ns" not in values
    assert "result_completed_tokens_per_second" not in values
    assert values["result_mean_latency_ns"] == 0
    assert values["result_first_token_min_latency_ns"] == ""
    assert values["result_first_token_max_latency_ns"] is False
    # An empty container in the JSON lets config.yaml's value through.
    assert (
        _read("load_pattern: poisson", {"load_pattern": {}}, {}).performance.get("load_pattern") == "poisson"
    )


def test_a_stated_total_count_survives_the_accuracy_count() -> None:
    accuracy = {"n_samples_issued": 7, "accuracy_scores": [{"total_samples": 10, "score": 1.0}]}
    values = _values(_read("", {}, accuracy).accuracy)
    assert values["qsl_reported_total_count"] == 7  # setdefault: the stated one stays
    assert values["effective_accuracy_sample_count"] == 10
    assert values["generated_query_count"] == 7  # accuracy_results.json's n_samples_issued, via its alt path


def test_accuracy_sample_count_sources_and_filters() -> None:
    entries = [
        {"total_samples": 10, "response_counts": {"issued": 99}},
        {"response_counts": {"issued": "5"}},  # total_samples absent: response_counts.issued, through int()
        {"total_samples": 3.9, "dataset_type": "accuracy"},  # int() truncates
        {"total_samples": True},
        {"total_samples": 1000, "dataset_type": "performance"},
        {"total_samples": 1000, "dataset_type": 7},
        {"response_counts": {"scored": 4}},
        {"score": 0.5},
        "not an entry",  # skipped by the count, fatal to the scores (below)
    ]
    result = _read("", {}, {"accuracy_scores": entries})
    assert result.accuracy.get("effective_accuracy_sample_count") == 10 + 5 + 3 + 1
    assert result.accuracy_scores == (0.5,)
    assert result.problems == (
        f"{WHERE}/accuracy/accuracy_results.json: accuracy_scores[8] is 'not an entry', not an object"
        " (the official checker stops here)",
    )


def test_no_stated_count_means_no_accuracy_count() -> None:
    values = _values(
        _read("", {}, {"accuracy_scores": [{"score": 0.5}, {"dataset_type": "accuracy"}]}).accuracy
    )
    assert "effective_accuracy_sample_count" not in values
    assert "qsl_reported_total_count" not in values
    assert "generated_query_count" not in values


def test_scores_keep_file_order_and_skip_only_null() -> None:
    entries = [{"score": None}, {"score": {}}, {"score": 0}, {"no": "score"}, {"score": "0.7"}]
    result = _read("", {}, {"accuracy_scores": entries})
    assert result.accuracy_scores == ({}, 0, "0.7")
    assert result.accuracy.get("accuracy_score") == {}
    assert _read("", {}, {"accuracy_scores": []}).accuracy_scores == ()
    assert "accuracy_score" not in _read("", {}, {}).accuracy


def test_qps_is_inferred_only_when_absent() -> None:
    base = {"n_samples_issued": 300, "duration_ns": 60_000_000_000}
    server = _values(_read("type: online", base, {}).performance)
    assert server["result_completed_samples_per_sec"] == 5.0
    stated = _values(_read("type: online", {**base, "qps": 4.5}, {}).performance)
    assert stated["result_completed_samples_per_sec"] == 4.5
    # Offline's key is never stated, so it is always inferred, beside the stated completed rate.
    offline = _values(_read("type: Offline", {**base, "qps": 4.5}, {}).performance)
    assert (offline["result_samples_per_second"], offline["result_completed_samples_per_sec"]) == (5.0, 4.5)
    for missing in ("n_samples_issued", "duration_ns"):
        values = _values(
            _read("type: online", {k: v for k, v in base.items() if k != missing}, {}).performance
        )
        assert "result_completed_samples_per_sec" not in values
    assert "result_completed_samples_per_sec" not in _values(_read("", base, {}).performance)
    zero = _values(_read("type: online", {**base, "duration_ns": 0}, {}).performance)
    assert "result_completed_samples_per_sec" not in zero


def test_qps_uses_only_a_stated_count() -> None:
    # The count inferred from qsl_reported_total_count comes after the official parser snapshots its keys.
    config = "type: offline\nn_samples_issued: 300\nduration_ns: 60000000000"
    values = _values(_read(config, {}, {}).performance)
    assert values["generated_query_count"] == 300
    assert "result_samples_per_second" not in values
    config = "type: offline\ngenerated_query_count: 300\nduration_ns: 60000000000"
    assert _values(_read(config, {}, {}).performance)["result_samples_per_second"] == 5.0


def test_binary_scenario_is_not_offline() -> None:
    # yaml's !!binary gives bytes, whose .lower() never equals "offline": the Server key.
    config = "type: !!binary b2ZmbGluZQ==\ngenerated_query_count: 10\nduration_ns: 1000000000"
    values = _values(_read(config, {}, {}).performance)
    assert values["effective_scenario"] == b"offline"
    assert values["result_completed_samples_per_sec"] == 10.0


@pytest.mark.parametrize(("failed", "expected"), [(None, 0), (0, 0), (0.0, 0), ("", 0), (False, 0), (3, 3)])
def test_num_errors_defaults_to_zero(failed: Any, expected: Any) -> None:
    summary = {} if failed is None else {"n_samples_failed": failed}
    log = _read("", summary, {}).performance
    assert log.get("num_errors") == expected
    assert type(log.get("num_errors")) is type(expected)


# --- malformed input: problems, never exceptions --------------------------------------------------------


def test_missing_files_are_problems_and_values_still_come() -> None:
    result = read_endpoints_result(None, None, None, WHERE)
    assert result.problems == (
        f"{WHERE}/config.yaml: missing",
        f"{WHERE}/performance/result_summary.json: missing",
        f"{WHERE}/accuracy/accuracy_results.json: missing",
    )
    assert _values(result.performance) == {"num_errors": 0}
    assert _values(result.accuracy) == {"num_errors": 0}
    perf_only = read_endpoints_result("type: offline", json.dumps({"n_samples_issued": 4}), None, WHERE)
    assert perf_only.problems == (f"{WHERE}/accuracy/accuracy_results.json: missing",)
    assert perf_only.performance.get("qsl_reported_total_count") == 4


@pytest.mark.parametrize(
    ("summary", "reason"),
    [
        ("{", "is not valid JSON: Expecting property name enclosed in double quotes at line 1 column 2"),
        ("", "is not valid JSON: Expecting value at line 1 column 1"),
        ("\ufeff{}", "is not valid JSON: Unexpected UTF-8 BOM (decode using utf-8-sig) at line 1 column 1"),
        (
            "1" * 5000,
            "cannot be read as JSON (Exceeds the limit (4300 digits) for integer string conversion: "
            "value has 5000 digits)",
        ),
        ("[" * 100_000, "is nested too deeply to read (lists or objects more than 100 levels deep)"),
        ("[" * 101 + "]" * 101, "is nested too deeply to read (lists or objects more than 100 levels deep)"),
        ("[1, 2]", "is not a JSON object"),
        ("null", "is not a JSON object"),
        ('"text"', "is not a JSON object"),
    ],
)
def test_unreadable_result_summary(summary: str, reason: str) -> None:
    result = read_endpoints_result("type: offline", summary, "{}", WHERE)
    assert result.problems == (f"{WHERE}/performance/result_summary.json: {reason}",)
    assert result.performance.get("effective_scenario") == "offline"  # config.yaml still answers


@pytest.mark.parametrize(
    ("config", "reason"),
    [
        ("a: [", "is not valid YAML (ParserError)"),
        ("d: 2001-13-01", "is not valid YAML (ValueError)"),  # PyYAML's timestamps raise plain ValueError
        ("a: " + "[" * 700, "is not valid YAML (RecursionError)"),
        ("- type: offline", "is not a mapping"),
        ("offline", "is not a mapping"),
    ],
)
def test_unreadable_config(config: str, reason: str) -> None:
    result = read_endpoints_result(config, "{}", "{}", WHERE)
    assert result.problems == (f"{WHERE}/config.yaml: {reason}",)
    assert "effective_scenario" not in result.performance


@pytest.mark.parametrize("config", ["", "# nothing", "null", "0", "[]", "false"])
def test_empty_config_is_no_problem(config: str) -> None:
    assert read_endpoints_result(config, "{}", "{}", WHERE).problems == ()


@pytest.mark.parametrize(
    ("accuracy", "reason"),
    [
        ("[]", "is not a JSON object"),
        ({"accuracy_scores": None}, "accuracy_scores is None, not a list (the official checker stops here)"),
        ({"accuracy_scores": 5}, "accuracy_scores is 5, not a list (the official checker stops here)"),
        ({"accuracy_scores": "ab"}, "accuracy_scores is 'ab', not a list (the official checker stops here)"),
        (
            {"accuracy_scores": {"a": 1}},
            "accuracy_scores is a dict, not a list (the official checker stops here)",
        ),
        (
            {"accuracy_scores": [{"total_samples": "many"}]},
            "accuracy_scores[0] states no integer sample count (the official checker stops here)",
        ),
        (
            {"accuracy_scores": [{"total_samples": 1}, {"response_counts": [3]}]},
            "accuracy_scores[1] states no integer sample count (the official checker stops here)",
        ),
        (
            {"accuracy_scores": [{"response_counts": None}]},
            "accuracy_scores[0] states no integer sample count (the official checker stops here)",
        ),
        (
            {"accuracy_scores": [{"total_samples": float("inf")}]},
            "accuracy_scores[0] states no integer sample count (the official checker stops here)",
        ),
        (
            {"accuracy_scores": [{"total_samples": "9" * 5000}]},
            "accuracy_scores[0] states no integer sample count (the official checker stops here)",
        ),
    ],
)
def test_malformed_accuracy_results(accuracy: Any, reason: str) -> None:
    result = _read("", {}, accuracy)
    assert result.problems == (f"{WHERE}/accuracy/accuracy_results.json: {reason}",)
    assert "effective_accuracy_sample_count" not in result.accuracy


def test_empty_dict_or_text_accuracy_scores_are_no_entries() -> None:
    for empty in ({}, ""):
        result = _read("", {}, {"accuracy_scores": empty})
        assert (result.problems, result.accuracy_scores) == ((), ())


@pytest.mark.parametrize(
    ("config", "summary", "reason"),
    [
        ("type: 5", {"n_samples_issued": 1, "duration_ns": 1}, "the scenario 5 is not text"),
        ("type: [offline]", {"n_samples_issued": 1, "duration_ns": 1}, "the scenario a list is not text"),
        ("type: offline", {"n_samples_issued": "1", "duration_ns": 1}, "'1' queries in 1 ns give no queries"),
        ("type: offline", {"n_samples_issued": 1, "duration_ns": 1e-320}, "1 queries in 1e-320 ns give no"),
        ("type: offline", {"n_samples_issued": 10**400, "duration_ns": 1}, "queries in 1 ns give no queries"),
        (
            "type: offline\ngenerated_query_count: 5\nduration_ns: " + ":".join(["59"] * 3000),  # sexagesimal
            {},
            "5 queries in a huge int ns give no queries per second",
        ),
    ],
)
def test_qps_the_official_parser_raises_on(config: str, summary: dict[str, Any], reason: str) -> None:
    result = _read(config, summary, {})
    assert len(result.problems) == 1
    assert result.problems[0].startswith(f"{WHERE}: ")
    assert reason in result.problems[0]
    assert result.problems[0].endswith(" (the official checker stops here)")
    assert "result_samples_per_second" not in result.performance


def test_a_stated_server_rate_spares_the_division() -> None:
    summary = {"n_samples_issued": "many", "duration_ns": 1, "qps": 2.0}
    result = _read("type: online", summary, {})
    assert result.problems == ()
    assert result.performance.get("result_completed_samples_per_sec") == 2.0


# --- never raising, whatever the content ----------------------------------------------------------------

KEYS = st.sampled_from(
    [
        "latency",
        "ttft",
        "tpot",
        "min",
        "avg",
        "50",
        "50.0",
        "99.9",
        "0",
        "early_stopping_percentiles",
        "n_samples_issued",
        "generated_query_count",
        "duration_ns",
        "qps",
        "type",
        "effective_scenario",
        "settings",
        "accuracy_scores",
        "score",
        "total_samples",
        "response_counts",
        "issued",
        "dataset_type",
        "accuracy",
        "test",
        "passed",
    ]
)
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats()
    | st.text(max_size=8)
    | st.sampled_from(["offline", "online", "Offline", "accuracy", "performance"]),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(KEYS | st.text(max_size=4), children, max_size=5)
    ),
    max_leaves=25,
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=200), st.text(max_size=200), st.text(max_size=200), st.text(max_size=200))
def test_arbitrary_text_never_raises(config: str, summary: str, accuracy: str, audit: str) -> None:
    result = read_endpoints_result(config, summary, accuracy, WHERE)
    assert all(isinstance(problem, str) for problem in result.problems)
    assert isinstance(read_audit(audit, "a.json"), AuditOutcome)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(JSON, JSON, JSON)
def test_arbitrary_json_never_raises(config: Any, summary: Any, accuracy: Any) -> None:
    texts = [json.dumps(value) for value in (config, summary, accuracy)]
    result = read_endpoints_result(*texts, WHERE)
    assert isinstance(result.performance.get("num_errors"), object)
    assert all(isinstance(problem, str) for problem in result.problems)
    outcome = read_audit(texts[1], "a.json")
    assert (outcome.problem is None) == (outcome.test is not None and outcome.passed is not None)


def test_importing_does_not_load_yaml() -> None:
    code = "import sys, submitter.check.endpoints; print('yaml' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
