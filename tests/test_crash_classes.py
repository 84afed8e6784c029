"""Crash classes a fuzzing campaign found in `check` and `report`, each now a finding (or valid output).

1. A LoadGen detail log holding an integer past the range of a double (309 digits or more): the official
   checker's float() of it raises OverflowError, and so did submitter's. Now a finding naming the file,
   the line and the key: an error where the checker reads the value, a warning for a later repeat of
   the key, which the checker skips. In an endpoints result's JSON (no LoadGen log) it is not a number.
2. A power nameplate YAML whose anchors make a list or map that holds itself (RecursionError), or whose
   aliases expand ten levels deep ("billion laughs": a hang). Now refused while the YAML is read.
3. A results folder that cannot be listed (mode 000) was skipped without a word: `check` passed.
4. `check --csv` left double quotes inside a quoted field undoubled: the file was not CSV.

Each test runs the commands as a user does where the crash showed (a fresh process, a time limit) or
checks the parsed tree in-process where the finding's fields are the point.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import SHARED, readable_folder, remove_folder
from test_check_rules import build as build_rule_tree

from submitter.check.checker import CheckReport, check_tree
from submitter.check.metric import performance_metric
from submitter.check.summary import CSV_COLUMNS
from submitter.fileformats.mlperf_log import MLLOG_PREFIX, DetailLog, LogRecord, parse_detail_log
from submitter.fileio import YamlAliasError, load_yaml_text
from submitter.report.render import format_number
from submitter.rounds.models import Scenario
from submitter.rounds.registry import load_round
from submitter.rule_registry import Finding, Severity

SUBMITTER = "closed/Org"
OFFLINE = f"{SUBMITTER}/results/sys/llama3.1-8b/Offline"
SERVER = f"{SUBMITTER}/results/sys/llama3.1-8b/Server"
OFFLINE_PERF_LOG = f"{OFFLINE}/performance/run_1/mlperf_log_detail.txt"
SERVER_PERF_LOG = f"{SERVER}/performance/run_1/mlperf_log_detail.txt"
OFFLINE_ACCURACY_LOG = f"{OFFLINE}/accuracy/mlperf_log_detail.txt"
SYSTEM = f"{SUBMITTER}/systems/sys.json"
TIMEOUT_S = 60
PAST_A_DOUBLE = "9" * 309  # 309 digits, over 1.8e308: float() raises OverflowError
FAR_PAST_A_DOUBLE = "1" + "0" * 400
WITHIN_A_DOUBLE = "1" + "0" * 308  # 1e308: 309 digits, yet a double holds it
EXPECTED_REDHAT_CSV = SHARED / "fixtures" / "expected" / "redhat-v5.1-summary.csv"  # the official checker's
REDHAT_ROOT_IN_OFFICIAL_CSV = b"/tmp/redhat_base"  # the --input the official checker was given


# --- trees and commands -----------------------------------------------------------------------------


@pytest.fixture
def tree(valid_llm_tree: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(valid_llm_tree, tmp_path / "tree", symlinks=True))


def run(
    command: str, folder: Path, cwd: Path, *options: str, prefix: tuple[str, ...] = ()
) -> tuple[int, str]:
    """The command on `folder` in a fresh process: (exit code, the text its findings are in: stdout, or
    review.md for `report`). Fails on an internal error, a traceback or a run past the time limit."""
    out = cwd / f"out-{command}"
    args = [command, str(folder), *options, *(["--out", str(out)] if command == "report" else [])]
    try:
        done = subprocess.run(
            [*prefix, sys.executable, "-m", "submitter", *args],
            capture_output=True,
            timeout=TIMEOUT_S,
            cwd=cwd,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"`submitter {command}` still ran after {TIMEOUT_S} s")
    stderr = done.stderr.decode("utf-8", "backslashreplace")
    assert "internal error" not in stderr and "Traceback" not in stderr, stderr
    if command == "report":
        assert done.returncode == 0, stderr  # the review is written whatever it finds
        return done.returncode, (out / "review.md").read_text(encoding="utf-8")
    return done.returncode, done.stdout.decode("utf-8")


def line_naming(text: str, *parts: str) -> str:
    """The one line of the output that names every part (a path:line, a key, a rule)."""
    found = [line for line in text.splitlines() if all(part in line for part in parts)]
    assert found, f"no line names {parts}:\n{text}"
    return found[0]


def findings_of(report: CheckReport, rule: str) -> list[Finding]:
    return [finding for finding in report.findings if finding.rule == rule]


def verdicts(report: CheckReport) -> dict[str, bool]:
    return {row.scenario: row.valid for row in report.results}


# --- 1. integers past the range of a double in a LoadGen log -------------------------------------------


def record_line(key: str, raw: str) -> str:
    record = {
        "key": key,
        "value": "@",
        "time_ms": 0.001,
        "metadata": {"is_error": False, "is_warning": False},
    }
    return MLLOG_PREFIX + json.dumps(record).replace('"@"', raw)


def set_value(path: Path, key: str, raw: str) -> int:
    """The value of the key's record becomes `raw` (JSON text); the record's line number."""
    lines = path.read_text().split("\n")
    number = next(n for n, line in enumerate(lines, start=1) if f'"key": "{key}"' in line)
    lines[number - 1] = record_line(key, raw)
    path.write_text("\n".join(lines))
    return number


def repeat_key(path: Path, key: str, raw: str, before: bool) -> tuple[int, int]:
    """A second record of the key holding `raw`, before or after the first: (the line the checker reads,
    the line it skips), as the log now numbers them."""
    lines = path.read_text().split("\n")
    index = next(n for n, line in enumerate(lines) if f'"key": "{key}"' in line)
    lines.insert(index if before else index + 1, record_line(key, raw))
    path.write_text("\n".join(lines))
    return index + 1, index + 2  # the first of the two is read, the second skipped


HUGE_VALUES = {
    # case: (log, key)
    "throughput": (OFFLINE_PERF_LOG, "result_samples_per_second"),
    "tokens per second": (OFFLINE_PERF_LOG, "result_tokens_per_second"),
    "latency percentile": (SERVER_PERF_LOG, "result_99.00_percentile_latency_ns"),
    "query count": (OFFLINE_PERF_LOG, "effective_min_query_count"),
    "qsl count": (OFFLINE_ACCURACY_LOG, "qsl_reported_total_count"),
}


def _rule_of(log: str) -> str:
    return "ACC-LOG" if "/accuracy/" in log else "PERF-LOG"


def test_an_integer_within_a_double_is_read_and_one_past_it_is_a_problem_of_its_line():
    text = "\n".join(
        [
            record_line("a", WITHIN_A_DOUBLE),
            record_line("b", PAST_A_DOUBLE),
            record_line("c", f"-{PAST_A_DOUBLE}"),
        ]
    )
    log = parse_detail_log(text, "log")
    assert log.get("a") == 10**308
    assert [(problem.line, problem.key) for problem in log.problems] == [(2, "b"), (3, "c")]
    assert "an integer of 309 digits" in log.problems[0].message


@pytest.mark.parametrize("case", sorted(HUGE_VALUES))
@pytest.mark.parametrize("digits", [PAST_A_DOUBLE, FAR_PAST_A_DOUBLE], ids=["309-digits", "401-digits"])
def test_an_integer_past_a_double_is_an_error_naming_file_line_and_key(case, digits, tree):
    log, key = HUGE_VALUES[case]
    line = set_value(tree / log, key, digits)
    report = check_tree(tree / SUBMITTER, "v6.1")
    [finding] = findings_of(report, _rule_of(log))
    assert (finding.path, finding.line, finding.field, finding.severity) == (log, line, key, Severity.ERROR)
    assert f"an integer of {len(digits)} digits" in finding.message
    assert "raw logs are never edited" in finding.fix
    assert verdicts(report)["Server" if log == SERVER_PERF_LOG else "Offline"] is False


@pytest.mark.parametrize("command", ["check", "report"])
@pytest.mark.parametrize("case", sorted(HUGE_VALUES))
def test_commands_report_an_integer_past_a_double_without_a_traceback(command, case, tree, tmp_path):
    log, key = HUGE_VALUES[case]
    line = set_value(tree / log, key, FAR_PAST_A_DOUBLE)
    code, text = run(command, tree / SUBMITTER, tmp_path, "--round", "v6.1")
    assert code == (1 if command == "check" else 0)
    line_naming(text, f"{log}:{line}", key, _rule_of(log), "401 digits")


@pytest.mark.parametrize("command", ["check", "report"])
def test_a_repeated_key_past_a_double_that_the_checker_skips_is_a_warning(command, tree, tmp_path):
    _, skipped = repeat_key(tree / OFFLINE_PERF_LOG, "result_samples_per_second", PAST_A_DOUBLE, before=False)
    code, text = run(command, tree / SUBMITTER, tmp_path, "--round", "v6.1")
    assert code == 0  # the checker reads the first record, which LoadGen wrote
    found = line_naming(text, f"{OFFLINE_PERF_LOG}:{skipped}", "result_samples_per_second", "PERF-LOG-LINES")
    assert "warning" in found


def test_a_repeated_key_whose_first_record_is_past_a_double_is_an_error(tree):
    read, _ = repeat_key(tree / OFFLINE_PERF_LOG, "result_samples_per_second", PAST_A_DOUBLE, before=True)
    report = check_tree(tree / SUBMITTER, "v6.1")
    [finding] = findings_of(report, "PERF-LOG")
    assert (finding.line, finding.field, finding.severity) == (
        read,
        "result_samples_per_second",
        Severity.ERROR,
    )
    assert verdicts(report) == {"Offline": False, "Server": True}


@pytest.mark.parametrize("command", ["check", "report"])
def test_an_endpoints_score_past_a_double_is_not_a_number(command, tmp_path):
    """The same number in an endpoints result's accuracy_results.json (JSON holds any integer)."""
    built = build_rule_tree(tmp_path / "endpoints", "endpoints")
    results = next(built.submitter_dir.rglob("accuracy/accuracy_results.json"))
    data = json.loads(results.read_text())
    data["accuracy_scores"][0]["score"] = {"f1": "@"}
    results.write_text(json.dumps(data).replace('"@"', PAST_A_DOUBLE))
    code, text = run(command, built.submitter_dir, tmp_path, "--round", "v6.1")
    assert code == (1 if command == "check" else 0)
    line_naming(text, "ACC-SCORE", "is not a number")


def test_a_result_past_a_double_among_json_values_is_no_metric():
    """Endpoints results become a DetailLog of their JSON values, where no parser stands guard."""
    rules = load_round("v6.1")
    key = rules.results.keys[Scenario.OFFLINE]
    log = DetailLog("result_summary.json", {key: LogRecord(key, 0, decoded=10**400)})
    metric = performance_metric(log, rules, rules.benchmarks["resnet"], Scenario.OFFLINE, "Offline")
    assert metric.value is None and metric.problem is not None and "not a number" in metric.problem


def test_the_review_prints_an_integer_past_a_double_whole():
    assert format_number(10**400) == f"{10**400:,}"
    assert format_number(1234) == "1,234" and format_number(1234.5) == "1,234.5"


# --- 2. anchors and aliases in a power nameplate YAML --------------------------------------------------

SELF_REFERENCES = {
    "a list holding itself": "Server:\n  PSUs: &psus [*psus]\n  Min PSUs Needed: 1\n",
    "a map holding itself": "Server: &server\n  PSUs: []\n  Min PSUs Needed: 1\n  Spare: *server\n",
    "the document holding itself": "&all [*all]\n",
}


def alias_bomb(levels: int = 10, width: int = 10) -> str:
    """`levels` anchors, each a list of `width` aliases of the one before: width**levels values."""
    lines = [f"l0: &l0 [{', '.join(['lol'] * width)}]"]
    lines += [f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * width)}]" for n in range(1, levels)]
    return "\n".join(lines) + "\nServer:\n  PSUs:\n    - PowerCapacityWatts: 2000\n  Min PSUs Needed: 1\n"


NAMEPLATES = {**SELF_REFERENCES, "a ten-level alias bomb": alias_bomb()}


@pytest.fixture(scope="module")
def valid_power_tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A v6.1 edge tree whose resnet Offline result is a power result: (root, its nameplate's path)."""
    root = tmp_path_factory.mktemp("valid-power")
    built = build_rule_tree(root, "power-v6.1")
    nameplate = built.path(built.rules.layout.nameplate_power or "", system="Sys")
    assert nameplate.is_file()
    return root, nameplate.relative_to(root).as_posix()


@pytest.mark.parametrize("case", sorted(NAMEPLATES))
def test_self_reference_and_alias_bombs_are_refused_in_well_under_a_second(case):
    start = time.monotonic()
    with pytest.raises(YamlAliasError):
        load_yaml_text(NAMEPLATES[case])
    assert time.monotonic() - start < 0.5


def test_a_few_aliases_that_repeat_a_psu_still_read():
    text = "psu: &psu {PowerCapacityWatts: 2000}\nServer:\n  PSUs: [*psu, *psu]\n  Min PSUs Needed: 2\n"
    assert load_yaml_text(text)["Server"]["PSUs"] == [{"PowerCapacityWatts": 2000}] * 2


def with_nameplate(valid_power_tree: tuple[Path, str], tmp_path: Path, text: str) -> tuple[Path, str]:
    """A copy of the power tree whose nameplate YAML holds `text`: (its submitter folder, the YAML's path)."""
    root, nameplate = valid_power_tree
    copy = Path(shutil.copytree(root, tmp_path / "tree", symlinks=True))
    (copy / nameplate).write_text(text)
    return copy / SUBMITTER, nameplate


@pytest.mark.parametrize("case", sorted(SELF_REFERENCES))
def test_a_nameplate_that_holds_itself_is_an_error_naming_it(case, valid_power_tree, tmp_path):
    """In-process: the RecursionError it was came quickly (the bomb's hang is tested in a process below)."""
    folder, nameplate = with_nameplate(valid_power_tree, tmp_path, SELF_REFERENCES[case])
    report = check_tree(folder, "v6.1")
    [finding] = findings_of(report, "SYS-NAMEPLATE")
    assert finding.path == nameplate and finding.severity is Severity.ERROR
    assert "lies inside its own anchor" in finding.message and "anchors and aliases" in finding.fix
    assert verdicts(report)["Offline"] is False


@pytest.mark.parametrize("case", sorted(NAMEPLATES))
def test_check_on_a_nameplate_that_holds_itself_or_explodes_ends_with_an_error(
    case, valid_power_tree, tmp_path
):
    folder, nameplate = with_nameplate(valid_power_tree, tmp_path, NAMEPLATES[case])
    start = time.monotonic()
    code, text = run("check", folder, tmp_path, "--round", "v6.1")
    assert time.monotonic() - start < 30  # a process start and the check: the YAML itself is refused at once
    assert code == 1
    found = line_naming(text, f"{nameplate}: SYS-NAMEPLATE error", "alias")
    assert "anchors and aliases" in found


@pytest.mark.parametrize("case", ["a list holding itself", "a ten-level alias bomb"])
def test_report_on_a_nameplate_that_holds_itself_or_explodes_writes_its_documents(
    case, valid_power_tree, tmp_path
):
    folder, nameplate = with_nameplate(valid_power_tree, tmp_path, NAMEPLATES[case])
    _, review = run("report", folder, tmp_path, "--round", "v6.1")
    line_naming(review, nameplate, "SYS-NAMEPLATE", "alias")


# --- 3. a folder that cannot be listed --------------------------------------------------------------

NOBODY = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")


def unprivileged() -> tuple[str, ...]:
    """The prefix that runs a command as a user whom a mode of 000 stops (root passes every check)."""
    if os.geteuid() != 0:
        return ()
    if shutil.which("setpriv") is None:
        pytest.skip("running as root needs util-linux's setpriv to make a folder really unreadable")
    return NOBODY


@pytest.mark.parametrize("folder", [OFFLINE, f"{OFFLINE}/performance", f"{SUBMITTER}/results/sys"])
def test_a_folder_that_cannot_be_listed_is_an_error_naming_it(folder, valid_llm_tree):
    prefix = unprivileged()
    base = readable_folder("submitter-unlistable-")
    try:
        copy = Path(shutil.copytree(valid_llm_tree, base / "tree", symlinks=True))
        copy.chmod(0o755)  # a copy of pytest's folder, private to its owner
        (copy / folder).chmod(0)
        code, text = run("check", copy / SUBMITTER, base, "--round", "v6.1", prefix=prefix)
        found = line_naming(text, f"{folder}:", "STRUCT-UNREADABLE")
        assert "cannot be listed" in found and "chmod" in found
        assert code == 1
    finally:
        remove_folder(base)


def test_a_folder_that_cannot_be_listed_is_recorded_by_the_walk(tree, monkeypatch):
    """The same, in-process and whoever runs it: listing the folder fails as it does for mode 000."""
    from submitter.check import load

    locked = (tree / f"{OFFLINE}/performance").resolve()
    real_scandir = os.scandir

    def scandir(path: str) -> object:
        if Path(path).resolve() == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(load.os, "scandir", scandir)
    report = check_tree(tree / SUBMITTER, "v6.1")
    [finding] = findings_of(report, "STRUCT-UNREADABLE")
    assert finding.path == f"{OFFLINE}/performance" and finding.severity is Severity.ERROR
    assert "cannot be listed (Permission denied)" in finding.message
    assert verdicts(report) == {"Offline": False, "Server": True}


# --- 4. summary.csv -----------------------------------------------------------------------------------

HOSTILE_TEXT = {
    "system_name": 'The "Big" One',
    "framework": 'vLLM, "patched"',
    "operating_system": "Ubuntu\n24.04",
    "hw_notes": "carriage\r\nreturn, and a lone \ud800 surrogate",
}


def test_summary_csv_of_the_published_tree_is_byte_identical_to_the_official_one(redhat_tree, tmp_path):
    if not EXPECTED_REDHAT_CSV.is_file():
        pytest.skip("../shared/fixtures holds no official summary.csv")
    out = tmp_path / "summary.csv"
    result = subprocess.run(
        [sys.executable, "-m", "submitter", "check", str(redhat_tree), "--round", "v5.1", "--csv", str(out)],
        capture_output=True,
        cwd=tmp_path,
        timeout=TIMEOUT_S,
    )
    assert result.returncode == 0, result.stderr
    # Location is the only column that depends on where the tree lies: the official run's root stands in.
    root = str(redhat_tree.resolve().parents[1]).encode()
    assert out.read_bytes().replace(root, REDHAT_ROOT_IN_OFFICIAL_CSV) == EXPECTED_REDHAT_CSV.read_bytes()


def test_quotes_commas_newlines_and_surrogates_in_a_description_read_back_through_csv(tree, tmp_path):
    system = json.loads((tree / SYSTEM).read_text())
    system.update(HOSTILE_TEXT)
    (tree / SYSTEM).write_text(json.dumps(system))  # \ud800 written as a JSON escape: a lone surrogate
    out = tmp_path / "summary.csv"
    code, _ = run("check", tree / SUBMITTER, tmp_path, "--round", "v6.1", "--csv", str(out))
    assert code == 0
    text = out.read_bytes().decode("utf-8")  # strict, and no newline translated
    rows = list(csv.reader(io.StringIO(text, newline=""), strict=True))
    assert rows[0] == list(CSV_COLUMNS) and len(rows) == 3
    assert all(len(row) == len(CSV_COLUMNS) == 31 for row in rows)
    for row in rows[1:]:
        by_column = dict(zip(CSV_COLUMNS, row, strict=True))
        assert by_column["SystemName"] == HOSTILE_TEXT["system_name"]
        assert by_column["framework"] == HOSTILE_TEXT["framework"]
        assert by_column["operating_system"] == HOSTILE_TEXT["operating_system"]
        assert by_column["notes"].startswith("carriage\r\nreturn, and a lone \\ud800 surrogate")  # escaped
