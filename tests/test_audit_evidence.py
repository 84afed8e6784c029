"""Audit evidence the official checker takes on faith: what TEST07's and TEST09's verifications print, the
accuracy log TEST07 scored, the validity of the TEST01/TEST04 runs, and a Server run's measured p99.

Each rule is shown on a valid minimal tree, first without a finding, then on a broken copy. The changes are
also the cases of these rules in tests/test_check_rules.py (`CHANGES`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner
from minitree import (
    MiniTree,
    WrittenResult,
    build_tree,
    write_test07_verification,
    write_test09_verification,
)
from treecopy import set_log_value

from submitter.check.checker import CheckReport, check_tree
from submitter.cli import cli
from submitter.rule_registry import Finding, Severity

GPT_OSS = ("gpt-oss-120b", "Offline")
RESNET = ("resnet", "Offline")
DLRM_SERVER = ("dlrm-v3", "Server")
LLAMA_SERVER = ("llama3.1-8b", "Server")
EDGE = ("SingleStream", "MultiStream", "Offline")
NS_PER_MS = 1_000_000

# The trees the changes start from: (round, results, system type), as tests/test_check_rules.py's BASES.
TREES: dict[str, tuple[str, tuple[tuple[str, str, str], ...], str]] = {
    "gpt-oss": (
        "v6.0",
        (("Sys", "gpt-oss-120b", "Offline"), ("Sys", "gpt-oss-120b", "Interactive")),
        "datacenter",
    ),
    "resnet": ("v6.0", tuple(("Sys", "resnet", scenario) for scenario in EDGE), "edge"),
    "dlrm-v3": ("v6.0", (("Sys", "dlrm-v3", "Offline"), ("Sys", "dlrm-v3", "Server")), "datacenter"),
    "llama": ("v6.0", (("Sys", "llama3.1-8b", "Offline"), ("Sys", "llama3.1-8b", "Server")), "datacenter"),
}


def build(root: Path, name: str) -> MiniTree:
    round_name, results, system_type = TREES[name]
    tree = build_tree(root, round_name, results, system_type=system_type)
    for result in tree.results:  # the verifications as the official scripts print them, numbers included
        if "TEST07" in result.audits:
            write_test07_verification(result)
        if "TEST09" in result.audits:
            write_test09_verification(result)
    return tree


# --- the changes (also the cases of tests/test_check_rules.py) ---------------------------------------------


def mean_outside_test09_bounds(tree: MiniTree) -> None:
    """A mean of 1000 tokens, checked against wider bounds than the audit.config's, says TEST PASS."""
    write_test09_verification(tree.result(*GPT_OSS), mean=1000, bounds=(900.0, 1500.0))


def score_under_test07_threshold(tree: MiniTree) -> None:
    """A score of 55.0 under the audit's 60.698, checked against 50.0 instead, says TEST PASS."""
    write_test07_verification(tree.result(*GPT_OSS), score=55.0, threshold=50.0)


def without_test07_log(tree: MiniTree) -> None:
    (tree.result(*GPT_OSS).audits["TEST07"] / "accuracy" / "mlperf_log_accuracy.json").unlink()


def invalid_test01_run(tree: MiniTree) -> None:
    invalidate_audit_run(tree.result(*RESNET), "TEST01")


def invalidate_audit_run(result: WrittenResult, test: str) -> None:
    log = result.audits[test] / "performance" / "run_1" / "mlperf_log_detail.txt"
    set_log_value(log, "result_validity", "INVALID")
    set_log_value(log, "result_min_duration_met", False)


def server_p99_over_limit(tree: MiniTree) -> None:
    """dlrm-v3's Server p99 one nanosecond over its 60 s limit, LoadGen's early stopping and verdict met."""
    result = tree.result(*DLRM_SERVER)
    limit = result.bench.latency_constraint_ns[result.logged]
    set_log_value(result.performance_log, "result_99.00_percentile_latency_ns", limit + 1)


# rule id -> (tree, change, the result it concerns)
CHANGES: dict[str, tuple[str, Callable[[MiniTree], None], tuple[str, str]]] = {
    "COMP-TEST09-LENGTH": ("gpt-oss", mean_outside_test09_bounds, GPT_OSS),
    "COMP-TEST07-SCORE": ("gpt-oss", score_under_test07_threshold, GPT_OSS),
    "COMP-TEST07-LOG": ("gpt-oss", without_test07_log, GPT_OSS),
    "COMP-AUDIT-VALIDITY": ("resnet", invalid_test01_run, RESNET),
    "PERF-SERVER-P99": ("dlrm-v3", server_p99_over_limit, DLRM_SERVER),
}


# --- helpers ------------------------------------------------------------------------------------------------


def check(tree: MiniTree) -> CheckReport:
    return check_tree(tree.root, tree.rules.name)


def found(report: CheckReport, rule: str) -> list[Finding]:
    return [finding for finding in report.findings if finding.rule == rule]


def verdicts(report: CheckReport) -> dict[tuple[str, str], bool]:
    return {(row.benchmark, row.scenario): row.valid for row in report.results}


def broken(tmp_path: Path, rule: str) -> tuple[MiniTree, CheckReport, list[Finding]]:
    """The rule's tree, checked clean first (no finding at all), then with its change."""
    name, change, concerned = CHANGES[rule]
    tree = build(tmp_path, name)
    clean = check(tree)
    assert [f"{f.rule} {f.path}: {f.message}" for f in clean.findings] == []
    change(tree)
    report = check(tree)
    findings = found(report, rule)
    assert findings, sorted(f"{f.rule}: {f.message}" for f in report.findings)
    assert {finding.severity for finding in findings} == {Severity.ERROR}
    assert {key for key, valid in verdicts(report).items() if not valid} == {concerned}
    return tree, report, findings


# --- TEST09 -------------------------------------------------------------------------------------------------


def test_a_test09_pass_with_a_mean_outside_the_audit_bounds_is_an_error(tmp_path):
    tree, report, (finding,) = broken(tmp_path, "COMP-TEST09-LENGTH")
    audit = tree.result(*GPT_OSS).audits["TEST09"] / "verify_output_len.txt"
    assert finding.path == audit.relative_to(tree.root).as_posix()
    assert "1000.0 tokens" in finding.message and "[1150.38, 1406.02]" in finding.message
    assert "compliance/TEST09/gpt-oss-120b/audit.config" in finding.message
    assert "checked against [900.0, 1500.0]" in finding.message
    assert [f.rule for f in report.findings] == ["COMP-TEST09-LENGTH"]  # the official checker passes it


def test_test09_bounds_are_the_benchmarks_own(tmp_path):
    """e2e-rag-qna's audit.config bounds (246.43 to 301.19), not gpt-oss-120b's, judge its TEST09."""
    tree = build_tree(tmp_path, "v6.1", [("Sys", "e2e-rag-qna", "Offline")])
    result = tree.result("e2e-rag-qna", "Offline")
    write_test09_verification(result)
    assert found(check(tree), "COMP-TEST09-LENGTH") == []
    write_test09_verification(result, mean=1278, bounds=(1150.38, 1406.02))
    (finding,) = found(check(tree), "COMP-TEST09-LENGTH")
    assert "1278.0 tokens" in finding.message and "[246.43, 301.19]" in finding.message


# --- TEST07 -------------------------------------------------------------------------------------------------


def test_a_test07_pass_under_the_threshold_or_against_another_is_an_error(tmp_path):
    _, _, findings = broken(tmp_path, "COMP-TEST07-SCORE")
    by_field = {finding.field: finding.message for finding in findings}
    assert set(by_field) == {"Accuracy score", "Accuracy threshold"}
    assert "55.0" in by_field["Accuracy score"] and "60.698" in by_field["Accuracy score"]
    assert "50.0" in by_field["Accuracy threshold"] and "60.698" in by_field["Accuracy threshold"]
    assert (
        "test07_accuracy_threshold in compliance/TEST07/gpt-oss-120b/audit.config"
        in by_field["Accuracy score"]
    )


def test_a_test07_score_over_the_threshold_checked_against_another_is_an_error(tmp_path):
    tree = build(tmp_path, "gpt-oss")
    write_test07_verification(tree.result(*GPT_OSS), score=70.0, threshold=65.0)
    (finding,) = found(check(tree), "COMP-TEST07-SCORE")
    assert finding.field == "Accuracy threshold" and "65.0" in finding.message


def test_a_test07_score_without_the_summary_is_read_as_the_official_script_reads_it(tmp_path):
    """No 'Accuracy score:' line: the first 'exact_match' of the accuracy script's output is the score."""
    tree = build(tmp_path, "gpt-oss")
    verification = tree.result(*GPT_OSS).audits["TEST07"] / "verify_accuracy.txt"
    verification.write_text("{'exact_match': 40.5, 'tokens_per_sample': 900.0}\nTEST PASS\n")
    (finding,) = found(check(tree), "COMP-TEST07-SCORE")
    assert "40.5" in finding.message and "60.698" in finding.message


def test_a_test07_folder_without_its_accuracy_log_is_an_error(tmp_path):
    _, _, (finding,) = broken(tmp_path, "COMP-TEST07-LOG")
    assert finding.path.endswith("gpt-oss-120b/Offline/TEST07/accuracy/mlperf_log_accuracy.json")
    assert "verify_accuracy.txt" in finding.message


# --- TEST01 and TEST04 performance runs ---------------------------------------------------------------------


def test_an_invalid_test01_run_is_an_error(tmp_path):
    _, report, (finding,) = broken(tmp_path, "COMP-AUDIT-VALIDITY")
    assert finding.path.endswith("resnet/Offline/TEST01/performance/run_1/mlperf_log_detail.txt")
    assert finding.field == "result_validity" and finding.line
    assert "'INVALID'" in finding.message and "result_min_duration_met is false" in finding.message
    assert found(report, "PERF-VALIDITY") == []  # which judges the result's own run only


def test_an_invalid_test04_run_is_an_error_too(tmp_path):
    """TEST04's verify_performance.py fails an INVALID run as TEST01's does."""
    tree = build(tmp_path, "resnet")
    invalidate_audit_run(tree.result(*RESNET), "TEST04")
    (finding,) = found(check(tree), "COMP-AUDIT-VALIDITY")
    assert "TEST04" in finding.path and "TEST04 audit" in finding.message


def test_an_audit_run_without_a_verdict_says_so(tmp_path):
    tree = build(tmp_path, "resnet")
    log = tree.result(*RESNET).audits["TEST01"] / "performance" / "run_1" / "mlperf_log_detail.txt"
    log.write_text(
        "".join(line + "\n" for line in log.read_text().splitlines() if "result_validity" not in line)
    )
    (finding,) = found(check(tree), "COMP-AUDIT-VALIDITY")
    assert finding.message.startswith("is missing: LoadGen logged no verdict on the TEST01 audit's")


# --- Server p99 ---------------------------------------------------------------------------------------------


def test_a_server_p99_over_the_limit_with_early_stopping_met_is_an_error(tmp_path):
    _, report, (finding,) = broken(tmp_path, "PERF-SERVER-P99")
    assert finding.path.endswith("dlrm-v3/Server/performance/run_1/mlperf_log_detail.txt")
    assert finding.field == "result_99.00_percentile_latency_ns"
    assert "60000000001 ns" in finding.message and "limit of 60000000000 ns" in finding.message
    assert [f.rule for f in report.findings] == ["PERF-SERVER-P99"]  # the official checker passes it


def test_early_stopping_not_met_is_left_to_its_own_rule(tmp_path):
    tree = build(tmp_path, "dlrm-v3")
    server_p99_over_limit(tree)
    set_log_value(tree.result(*DLRM_SERVER).performance_log, "early_stopping_met", False)
    assert {f.rule for f in check(tree).findings} == {"PERF-EARLY-STOPPING"}


def test_llm_server_latency_is_judged_once_by_its_ttft(tmp_path):
    """An LLM's p99 TTFT over the limit is PERF-TTFT-TPOT's finding (the official checker's), not twice."""
    tree = build(tmp_path, "llama")
    result = tree.result(*LLAMA_SERVER)
    limit_ns = int(result.bench.token_latency_limits[result.logged].ttft_ms * NS_PER_MS)
    set_log_value(result.performance_log, "result_first_token_99.00_percentile_latency_ns", limit_ns + 1)
    set_log_value(result.performance_log, "result_99.00_percentile_latency_ns", 10**12)
    assert [f.rule for f in check(tree).findings] == ["PERF-TTFT-TPOT"]


def test_submitter_rules_lists_each_as_an_error_of_check():
    listing = json.loads(CliRunner().invoke(cli, ["rules", "--json"]).output)
    listed = {row["rule"]: row["severity"].get("check") for row in listing}
    assert {rule: listed.get(rule) for rule in CHANGES} == dict.fromkeys(CHANGES, "error")
