"""`submitter check` on Red Hat's real v5.1 tree and on broken copies of it: one test per rule."""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import SHARED, run_cli
from treecopy import H100, L40S, add_error_record, copy_tree, edit_json, set_log_value, to_v6_layout

from submitter.check.checker import check_tree

EXPECTED_CSV = SHARED / "fixtures" / "expected" / "redhat-v5.1-summary.csv"
H100_OFFLINE_PERF = f"{H100}/Offline/performance/run_1/mlperf_log_detail.txt"
H100_SERVER_PERF = f"{H100}/Server/performance/run_1/mlperf_log_detail.txt"
H100_OFFLINE_ACC = f"{H100}/Offline/accuracy"


@pytest.fixture
def tree(redhat_tree, tmp_path) -> Path:
    return copy_tree(redhat_tree, tmp_path / "tree")


def errors_after(tree: Path, change: Callable[[Path], None], round_name: str | None = "v5.1") -> set[str]:
    change(tree)
    report = check_tree(tree, round_name)
    return {finding.rule for finding in report.findings if finding.severity == "error"}


def test_the_published_tree_passes(redhat_tree):
    report = check_tree(redhat_tree, "v5.1")
    assert report.errors == 0
    assert [(r.system, r.scenario, r.metric) for r in report.results] == [
        ("IBM_Cloud_gx3-48x240x2l40s_vLLM", "Offline", 1642.22),
        ("IBM_Cloud_gx3-48x240x2l40s_vLLM", "Server", 1207.14),
        ("XE8640_4xH100_vLLM", "Offline", 5777.08),
        ("XE8640_4xH100_vLLM", "Server", 5103.99),
    ]


def test_the_lint_beyond_the_official_checker_warns(redhat_tree):
    warnings = {f.rule for f in check_tree(redhat_tree, "v5.1").findings if f.severity == "warning"}
    assert {"SYS-MEMORY-TYPE", "SYS-ID-ACCELERATORS", "SYS-PLACEHOLDER"} <= warnings


def test_csv_matches_the_official_summary_but_location(redhat_tree, tmp_path):
    out = tmp_path / "out.csv"
    result = run_cli("check", str(redhat_tree), "--round", "v5.1", "--csv", str(out), cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    ours, official = list(csv.reader(out.open())), list(csv.reader(EXPECTED_CSV.open()))
    location = official[0].index("Location")
    assert ours[0] == official[0]
    assert [r[:location] + r[location + 1 :] for r in ours] == [
        r[:location] + r[location + 1 :] for r in official
    ]
    assert out.read_text().splitlines()[1].startswith('"RedHat","available"')  # every value quoted


def test_round_is_detected_from_seeds_and_layout(redhat_tree, tmp_path):
    result = run_cli("check", str(redhat_tree), cwd=tmp_path)
    assert result.returncode == 0
    assert "round v5.1 detected: 4 result(s) carry the v5.1 LoadGen seeds" in result.stderr
    assert "v5.1 directory layout agrees" in result.stderr


def test_v6_1_rejects_the_tree_naming_seeds_and_layout(redhat_tree):
    report = check_tree(redhat_tree, "v6.1")
    rules = {f.rule for f in report.findings if f.severity == "error"}
    assert {"PERF-SEED", "STRUCT-LAYOUT"} <= rules
    seed = next(f for f in report.findings if f.rule == "PERF-SEED")
    assert "these logs were made for v5.1" in seed.message and "LoadGen 6.0.17" in seed.fix


def test_json_output(redhat_tree, tmp_path):
    result = run_cli("check", str(redhat_tree), "--json", cwd=tmp_path)
    document = json.loads(result.stdout)
    assert document["schema_version"] == 2 and document["round"] == "v5.1"
    assert {r["verdict"] for r in document["results"]} == {"valid"}
    assert all({"rule", "severity", "path", "message", "fix"} <= set(f) for f in document["findings"])


def test_a_v6_layout_tree_from_the_same_logs_only_fails_its_seeds(tree):
    to_v6_layout(tree)
    report = check_tree(tree, "v6.0")
    assert {f.rule for f in report.findings if f.severity == "error"} == {"PERF-SEED"}
    assert check_tree(tree).rules.name == "v5.1"  # the seeds outvote the layout


def test_usage_errors(tmp_path):
    assert run_cli("check", str(tmp_path / "nowhere"), cwd=tmp_path).returncode == 2
    plain = tmp_path / "plain"
    plain.mkdir()
    result = run_cli("check", str(plain), cwd=tmp_path)
    assert result.returncode == 2 and "is not a submission tree" in result.stderr


def _write(relative: str, text: str | bytes) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text) if isinstance(text, bytes) else path.write_text(text)

    return change


def _remove(relative: str) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        path = root / relative
        if path.is_dir():
            import shutil

            shutil.rmtree(path)
        else:
            path.unlink()

    return change


def _log(relative: str, key: str, value: object) -> Callable[[Path], None]:
    return lambda root: set_log_value(root / relative, key, value)


def _json(relative: str, **changes: object) -> Callable[[Path], None]:
    return lambda root: edit_json(root / relative, **changes)


def _replace(relative: str, old: str, new: str) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        path = root / relative
        text = path.read_text()
        assert old in text
        path.write_text(text.replace(old, new))

    return change


def _symlink(root: Path) -> None:
    os.symlink("README.md", root / "closed/RedHat/documentation/link.md")


def _sparse(root: Path) -> None:
    with (root / "closed/RedHat/documentation/big.bin").open("wb") as stream:
        stream.truncate(51 * 1024 * 1024)


SYSTEM = "closed/RedHat/systems/XE8640_4xH100_vLLM.json"
MEASUREMENTS = "closed/RedHat/measurements/XE8640_4xH100_vLLM/llama3.1-8b/Offline"
TEST06 = "closed/RedHat/compliance/XE8640_4xH100_vLLM/llama3.1-8b"

BROKEN = {
    "STRUCT-CODE": _remove("closed/RedHat/code"),
    "STRUCT-UNREADABLE": _write(f"{H100_OFFLINE_ACC}/accuracy.txt", b"\xff\xfe not text"),
    "STRUCT-SCENARIOS": _remove(f"{H100}/Server"),
    "STRUCT-BENCHMARK": lambda root: (root / H100).rename(root / H100.replace("llama3.1-8b", "llama9-8b")),
    "STRUCT-ENDPOINTS": lambda root: [
        _remove(f"{H100}/Offline/{d}/mlperf_log_detail.txt")(root) for d in ("performance/run_1", "accuracy")
    ],
    "SYS-FILE": _remove(SYSTEM),
    "SYS-DIRECTORY": _json(SYSTEM, submitter="SomeoneElse"),
    "SYS-MISSING": _json(SYSTEM, cooling=None),
    "SYS-EMPTY": _json(SYSTEM, framework=""),
    "SYS-STATUS": _json(SYSTEM, status="shipping"),
    "SYS-SYSTEM-TYPE": _json(SYSTEM, system_type="server"),  # the official checker crashes on this
    "SYS-COUNT": _json(SYSTEM, number_of_nodes="one"),  # ... and on this, when writing the CSV
    "SYS-NETWORK": _json(SYSTEM, is_network=False),
    "MEAS-FILE": _remove(f"{MEASUREMENTS}/XE8640_4xH100_vLLM.json"),
    "MEAS-FIELDS": _json(f"{MEASUREMENTS}/XE8640_4xH100_vLLM.json", retraining=""),
    "MEAS-COMPANIONS": _write(f"{MEASUREMENTS}/user.conf", ""),
    "PERF-LOG": _replace(H100_OFFLINE_PERF, ':::MLLOG {"key": "effective_scenario"', ':::MLLOG {"garbled'),
    "PERF-VALIDITY": _log(H100_OFFLINE_PERF, "result_validity", "INVALID"),
    "PERF-LOADGEN-ERROR": lambda root: add_error_record(
        root / H100_OFFLINE_PERF, "Loadgen built with uncommitted changes!"
    ),
    "PERF-SEED": _log(H100_OFFLINE_PERF, "effective_qsl_rng_seed", 1),
    "PERF-SAMPLE-COUNT": _log(H100_OFFLINE_PERF, "effective_performance_sample_count", 1000),
    "PERF-MIN-DURATION": _log(H100_SERVER_PERF, "effective_min_duration_ms", 120000),
    "PERF-MIN-QUERIES": _log(H100_OFFLINE_PERF, "effective_samples_per_query", 13000),
    "PERF-EARLY-STOPPING": _log(H100_SERVER_PERF, "early_stopping_met", False),
    "PERF-LATENCY-CONSTRAINT": _log(H100_SERVER_PERF, "effective_target_latency_ns", 30_000_000_000),
    "PERF-TOKEN-LATENCIES": _log(H100_OFFLINE_PERF, "requested_use_token_latencies", False),
    "PERF-EQUAL-ISSUE": _log(H100_OFFLINE_PERF, "effective_sample_concatenate_permutation", False),
    "PERF-TTFT-TPOT": _log(H100_SERVER_PERF, "result_first_token_99.00_percentile_latency_ns", 2_100_000_000),
    "PERF-SCENARIO": _log(H100_SERVER_PERF, "effective_scenario", "SingleStream"),
    "PERF-NETWORK": lambda root: (root / "closed").rename(root / "network"),
    "PERF-RESULT": _log(H100_OFFLINE_PERF, "result_tokens_per_second", None),
    "ACC-FILES": _remove(f"{H100_OFFLINE_ACC}/mlperf_log_accuracy.json"),
    "ACC-LOG": _replace(
        f"{H100_OFFLINE_ACC}/mlperf_log_detail.txt", ':::MLLOG {"key": "effective_scenario"', ":::MLLOG {x"
    ),
    "ACC-LOADGEN-ERROR": lambda root: add_error_record(
        root / f"{H100_OFFLINE_ACC}/mlperf_log_detail.txt", "boom"
    ),
    "ACC-TARGET": _replace(f"{H100_OFFLINE_ACC}/accuracy.txt", "'rouge1': '38.7898'", "'rouge1': '38.1'"),
    "ACC-UPPER-LIMIT": _replace(
        f"{H100_OFFLINE_ACC}/accuracy.txt", "'gen_len': 8163079", "'gen_len': 9163079"
    ),
    "ACC-HASH": _replace(f"{H100_OFFLINE_ACC}/accuracy.txt", "hash=", "sha="),
    "ACC-TRUNCATED": _write(f"{H100_OFFLINE_ACC}/mlperf_log_accuracy.json", "[" + " " * 20000 + "]"),
    "ACC-DATASET": _log(f"{H100_OFFLINE_ACC}/mlperf_log_detail.txt", "qsl_reported_total_count", 5000),
    "COMP-MISSING": _remove(f"{TEST06}/Offline/TEST06/verify_accuracy.txt"),
    "COMP-TEST06": _replace(
        f"{TEST06}/Server/TEST06/verify_accuracy.txt", "EOS check pass: True", "EOS check pass: False"
    ),
}
# Findings about form: the official checker accepts them, so `check` warns and the results stay valid.
WARNED = {
    "STRUCT-CALIBRATION": _remove("closed/RedHat/documentation/calibration.md"),
    "STRUCT-FILESET": _write(f"{H100_OFFLINE_ACC}/notes.txt", "extra"),
    "HYG-NAME": _write("closed/RedHat/documentation/my notes.md", "x"),
    "HYG-PYCACHE": _write("closed/RedHat/code/__pycache__/x.pyc", "x"),
    "HYG-SYMLINK": _symlink,
    "HYG-EMPTY-DIR": lambda root: (root / "closed/RedHat/documentation/empty").mkdir(),
    "HYG-FILE-SIZE": _sparse,
    "HYG-DIVISION-FILE": _write("closed/notes.txt", "x"),
    "HYG-ROOT-FILE": _write("summary.csv", "x"),
    "SYS-HAS-RESULTS": _write("closed/RedHat/systems/Orphan.json", "{}"),
    "PERF-LOG-LINES": _replace(H100_OFFLINE_PERF, ':::MLLOG {"key": "test_datetime"', 'garbled {"key": "x"'),
    "SYS-COUNT-TEXT": _json(SYSTEM, host_processor_core_count="64 (2 x 32)"),
}


@pytest.mark.parametrize("rule", sorted(BROKEN))
def test_each_rule_fails_its_broken_copy(tree, rule):
    assert rule in errors_after(tree, BROKEN[rule])


@pytest.mark.parametrize("rule", sorted(WARNED))
def test_form_findings_warn_and_leave_the_results_valid(tree, rule):
    WARNED[rule](tree)
    report = check_tree(tree, "v5.1")
    assert rule in {f.rule for f in report.findings if f.severity == "warning"}
    assert report.errors == 0 and all(row.valid for row in report.results)
    assert rule in {f.rule for f in check_tree(tree, "v5.1", strict=True).findings if f.severity == "error"}


def test_numpy_scalars_in_accuracy_txt_are_named(tree):
    _replace(f"{H100_OFFLINE_ACC}/accuracy.txt", "'gen_len': 8163079", "'gen_len': np.int64(8163079)")(tree)
    finding = next(f for f in check_tree(tree, "v5.1").findings if f.rule == "ACC-TARGET")
    assert "np.int64" in finding.message and finding.field == "GEN_LEN"


def test_interactive_uses_interactive_latency_limits(tree):
    """Red Hat's Server run (p99 TTFT 1.91 s) passes Server limits, which the official checker applies to
    Interactive results too, but not Interactive's 500 ms."""
    (tree / H100 / "Server").rename(tree / H100 / "Interactive")
    (tree / f"{TEST06}/Server").rename(tree / f"{TEST06}/Interactive")
    measurements = tree / "closed/RedHat/measurements/XE8640_4xH100_vLLM/llama3.1-8b"
    (measurements / "Server").rename(measurements / "Interactive")
    findings = [f for f in check_tree(tree, "v5.1").findings if f.severity == "error"]
    assert {f.rule for f in findings} == {"PERF-INTERACTIVE-LIMITS"}
    assert "Interactive limit is < 500 ms" in findings[0].message


def test_first_token_skipped_is_only_right_for_offline(tree):
    _replace(
        f"{TEST06}/Server/TEST06/verify_accuracy.txt",
        "First token check pass: True",
        "First token check pass: Skipped",
    )(tree)
    finding = next(f for f in check_tree(tree, "v5.1").findings if f.rule == "COMP-TEST06-SKIPPED")
    assert "only Offline may skip it" in finding.message


def test_missing_test06_log_is_a_warning(tree):
    _remove(f"{TEST06}/Offline/TEST06/accuracy")(tree)
    findings = check_tree(tree, "v5.1").findings
    assert [f.severity for f in findings if f.rule == "COMP-TEST06-LOG"] == ["warning"]


def test_a_failing_result_is_left_out_of_the_csv(tree, tmp_path):
    _log(H100_OFFLINE_PERF, "result_validity", "INVALID")(tree)
    out = tmp_path / "out.csv"
    result = run_cli("check", str(tree), "--round", "v5.1", "--csv", str(out), cwd=tmp_path)
    assert result.returncode == 1
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 3 and ("XE8640_4xH100_vLLM", "Offline") not in {
        (r["Platform"], r["Scenario"]) for r in rows
    }


def test_submitter_folder_and_division_folder_are_accepted(redhat_tree, tmp_path):
    assert check_tree(redhat_tree.parent, "v5.1").errors == 0
    assert run_cli("check", str(redhat_tree.parent), "--submitter", "RedHat", cwd=tmp_path).returncode == 0
    assert L40S.startswith("closed/RedHat")


def test_an_error_on_a_folder_invalidates_every_result_in_it(tree):
    _remove("closed/RedHat/code")(tree)
    report = check_tree(tree, "v5.1")
    assert [r.valid for r in report.results] == [False] * 4


def test_power_folders_need_their_exact_files(tree):
    _write(f"{H100}/Offline/performance/power/client.json", "{}")(tree)
    findings = [f for f in check_tree(tree, "v5.1").findings if f.rule == "POWER-FILES"]
    messages = {f.path: f.message for f in findings}
    assert "missing client.log" in messages[f"{H100}/Offline/performance/power"]
    assert "missing spl.txt" in messages[f"{H100}/Offline/performance/run_1"]


@pytest.mark.parametrize(("round_name", "design_power"), [("v5.1", ""), ("v6.1", None)])
def test_summary_csv_design_power_comes_from_the_round(redhat_tree, round_name, design_power):
    """v6.1's official summary.csv writes "None" for results without power; earlier rounds an empty value."""
    from submitter.check.context import ResultContext
    from submitter.check.rules.power import design_power_watts
    from submitter.rounds.registry import load_round

    files = check_tree(redhat_tree, "v5.1").entries[0]
    context = ResultContext(files=files, rules=load_round(round_name), index=None, system={})  # type: ignore[arg-type]
    assert design_power_watts(context) == design_power
