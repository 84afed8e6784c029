"""Hostile trees: what a fuzzer found ending `check`, `report` or `package` in an internal error, or a hang.

Each test breaks a copy of a valid tree in one way and runs the commands as a user would, in a fresh
process with a time limit (a hang fails the test instead of blocking the suite). Each command ends with its
usual exit code and no internal error, and the finding names the file and the reason: on stdout for
`check` and `package`, in review.md for `report`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from submitter.fileformats.mlperf_log import MLLOG_PREFIX

SUBMITTER = "closed/Org"
RESULT = f"{SUBMITTER}/results/sys/llama3.1-8b/Offline"
PERF_LOG = f"{RESULT}/performance/run_1/mlperf_log_detail.txt"
ACCURACY_LOG = f"{RESULT}/accuracy/mlperf_log_accuracy.json"
MEASUREMENTS = f"{RESULT}/measurements.json"
SYSTEM = f"{SUBMITTER}/systems/sys.json"
COMMANDS = ("check", "report", "package")
ERRORS_FOUND = {"check": 1, "report": 0, "package": 1}  # report exits 0 once the review is written
TIMEOUT_S = 60
HUGE = "9" * 5000  # int() converts at most 4300 digits


@pytest.fixture
def tree(valid_llm_tree: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(valid_llm_tree, tmp_path / "tree", symlinks=True))


def run(command: str, tree: Path, tmp_path: Path, expected: int, *options: str) -> str:
    """Run the command on the tree; the text its findings are in (stdout, or the review)."""
    out = tmp_path / f"out-{command}"
    args = [command, str(tree / SUBMITTER), "--round", "v6.1", *options]
    if command != "check":
        args += ["--out", str(out)]
    try:
        done = subprocess.run(
            [sys.executable, "-m", "submitter", *args], capture_output=True, timeout=TIMEOUT_S, cwd=tmp_path
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"`submitter {command}` still ran after {TIMEOUT_S} s")
    stderr = done.stderr.decode("utf-8", "backslashreplace")
    assert "internal error" not in stderr and "Traceback" not in stderr, stderr
    assert done.returncode == expected, stderr
    if command == "report":
        return (out / "review.md").read_text(encoding="utf-8")
    return done.stdout.decode("utf-8")  # strict: what is printed is UTF-8, whatever the tree's names


def set_mllog_value(path: Path, key: str, raw: str) -> int:
    """The value of a record becomes `raw` (JSON text); the record's line number."""
    lines = path.read_text().split("\n")
    number = next(n for n, line in enumerate(lines, start=1) if f'"key": "{key}"' in line)
    record = json.loads(lines[number - 1].removeprefix(MLLOG_PREFIX))
    record["value"] = "@"
    lines[number - 1] = MLLOG_PREFIX + json.dumps(record).replace('"@"', raw)
    path.write_text("\n".join(lines))
    return number


def add_to_object(path: Path, key: str, raw: str) -> None:
    """A member `"key": raw` (raw JSON text) added to the file's object."""
    text = path.read_text().rstrip().removesuffix("}")
    path.write_text(f'{text}, "{key}": {raw}}}\n')


@pytest.mark.parametrize("command", COMMANDS)
def test_an_mllog_value_nested_20000_deep_is_a_finding_on_its_line(command, tree, tmp_path):
    line = set_mllog_value(tree / PERF_LOG, "result_validity", "[" * 20_000 + "]" * 20_000)
    text = run(command, tree, tmp_path, ERRORS_FOUND[command])
    assert f"{PERF_LOG}:{line}" in text
    assert "nested too deeply" in text


@pytest.mark.parametrize("command", COMMANDS)
def test_a_measurements_json_nested_50000_deep_is_a_finding(command, tree, tmp_path):
    (tree / MEASUREMENTS).write_text("[" * 50_000 + "]" * 50_000)
    text = run(command, tree, tmp_path, ERRORS_FOUND[command])
    found = next(line for line in text.splitlines() if MEASUREMENTS in line and "nested too deeply" in line)
    assert "at most 100 levels of nesting" in found or command == "report"  # the review: its own layout


@pytest.mark.parametrize("command", COMMANDS)
def test_a_5000_digit_integer_in_measurements_json_is_a_finding(command, tree, tmp_path):
    add_to_object(tree / MEASUREMENTS, "big", HUGE)
    text = run(command, tree, tmp_path, ERRORS_FOUND[command])
    assert next(line for line in text.splitlines() if MEASUREMENTS in line and "4300 digits" in line)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_5000_digit_integer_in_an_mllog_value_is_a_finding_on_its_line(command, tree, tmp_path):
    line = set_mllog_value(tree / PERF_LOG, "result_validity", HUGE)
    text = run(command, tree, tmp_path, ERRORS_FOUND[command])
    assert next(row for row in text.splitlines() if f"{PERF_LOG}:{line}" in row and "4300 digits" in row)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_5000_digit_key_and_value_in_a_system_json_is_a_finding(command, tree, tmp_path):
    add_to_object(tree / SYSTEM, HUGE, HUGE)
    text = run(command, tree, tmp_path, ERRORS_FOUND[command])
    found = next(line for line in text.splitlines() if SYSTEM in line and "4300 digits" in line)
    assert "fewer digits" in found or command == "report"


@pytest.mark.parametrize("command", COMMANDS)
def test_a_5000_digit_count_written_as_text_in_a_system_json_is_a_finding(command, tree, tmp_path):
    add_to_object(tree / SYSTEM, "host_processors_per_node", f'"{HUGE}"')
    # A warning in check (exit 0); package holds its warnings as errors only with --strict.
    text = run(command, tree, tmp_path, 0)
    assert next(line for line in text.splitlines() if "SYS-COUNT-TEXT" in line and SYSTEM in line)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_folder_named_with_bytes_that_are_not_utf8_is_printed_escaped(command, tree, tmp_path):
    os.mkdir(os.fsencode(tree / RESULT) + b"/\xff\xfe\x80abc")  # empty: HYG-EMPTY-DIR names it
    # A warning in check; a repository rule, so an error, in package.
    text = run(command, tree, tmp_path, 1 if command == "package" else 0)
    assert f"{RESULT}/\\xff\\xfe\\x80abc" in text


@pytest.mark.parametrize("format_name", ["text", "json", "github", "junit", "sarif"])
def test_lone_surrogates_in_a_system_json_are_printed_escaped_in_every_format(format_name, tree, tmp_path):
    # JSON escapes, which json.loads makes lone surrogates; SYS-UNKNOWN-KEY (a warning) names the key.
    add_to_object(tree / SYSTEM, "k\\udcff\\ud800", "1")
    text = run("check", tree, tmp_path, 0, "--format", format_name)
    assert "k\\xff\\ud800" in text.replace("\\\\", "\\")  # JSON doubles the backslash


def test_lone_surrogates_in_a_system_json_are_printed_escaped_in_the_review(tree, tmp_path):
    add_to_object(tree / SYSTEM, "k\\udcff\\ud800", "1")
    assert "k\\xff\\ud800" in run("report", tree, tmp_path, 0)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_detail_log_replaced_by_a_fifo_is_a_finding_not_a_hang(command, tree, tmp_path):
    (tree / PERF_LOG).unlink()
    os.mkfifo(tree / PERF_LOG)
    text = run(command, tree, tmp_path, ERRORS_FOUND[command])
    assert next(line for line in text.splitlines() if PERF_LOG in line and "named pipe (FIFO)" in line)


def test_package_never_opens_an_accuracy_log_replaced_by_a_fifo(tree, tmp_path):
    (tree / ACCURACY_LOG).unlink()
    os.mkfifo(tree / ACCURACY_LOG)
    text = run("package", tree, tmp_path, 1)
    assert next(line for line in text.splitlines() if ACCURACY_LOG in line and "named pipe (FIFO)" in line)
    assert not list((tmp_path / "out-package").glob("*.tar.gz"))


@pytest.mark.parametrize("command", COMMANDS)
def test_a_link_to_the_root_of_the_file_system_is_a_loop_not_a_walk_of_everything(command, tree, tmp_path):
    os.symlink("/", tree / SUBMITTER / "src" / "everything")
    text = run(command, tree, tmp_path, 1 if command == "package" else 0)  # a symlink: a repository rule
    link = f"{SUBMITTER}/src/everything"
    assert next(line for line in text.splitlines() if link in line and "loops back on itself" in line)


@pytest.mark.slow
@pytest.mark.parametrize("command", COMMANDS)
def test_folders_nested_1500_deep_are_walked_without_exhausting_the_recursion(command, tree, tmp_path):
    top = folder = tree / SUBMITTER / "src"
    for _ in range(1500):  # deeper than Python's recursion limit; the deepest is empty: HYG-EMPTY-DIR
        folder /= "d"
        folder.mkdir()
    try:
        text = run(command, tree, tmp_path, 1 if command == "package" else 0)
        assert next(line for line in text.splitlines() if "HYG-EMPTY-DIR" in line and "/d/d/d" in line)
    finally:  # from the bottom up: pytest's clean-up (shutil.rmtree) would recurse 1500 deep
        while folder != top:
            folder.rmdir()
            folder = folder.parent


def test_a_walk_past_the_entry_budget_stops_with_a_finding(tree, monkeypatch):
    from submitter.check import load
    from submitter.check.checker import check_tree

    folder = tree / SUBMITTER / "src" / "vast"
    folder.mkdir()
    for number in range(50):
        (folder / f"f{number}").write_text("x")
    walked = check_tree(tree / SUBMITTER, "v6.1")
    monkeypatch.setattr(load, "MAX_WALKED_ENTRIES", len(walked.index.files) + len(walked.index.dirs) - 25)
    stopped = check_tree(tree / SUBMITTER, "v6.1")
    [finding] = [finding for finding in stopped.findings if finding.rule == "STRUCT-UNREADABLE"]
    assert "files and folders with what lies below it, so the rest was not read" in finding.message
    assert "symbolic links that lead out of the tree" in finding.fix
    assert len(stopped.index.files) < len(walked.index.files)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_sparse_64_gib_log_is_reported_over_the_limit_and_never_read_whole(command, tree, tmp_path):
    os.truncate(tree / PERF_LOG, 64 << 30)  # text, then 64 GiB of zeros that use no disk
    text = run(command, tree, tmp_path, ERRORS_FOUND[command] if command != "report" else 0)
    assert next(line for line in text.splitlines() if "HYG-FILE-SIZE" in line and PERF_LOG in line)


def test_package_does_not_scan_a_file_over_the_limit(tree, tmp_path):
    os.truncate(tree / ACCURACY_LOG, 64 << 30)
    text = run("package", tree, tmp_path, 1)
    assert "1 file(s) over the size limit not scanned" in text


def test_a_fifo_beside_the_division_folders_is_a_finding_not_a_hang(tree, tmp_path):
    os.mkfifo(tree / "NOTES.md")
    done = subprocess.run(
        [sys.executable, "-m", "submitter", "package", str(tree), "--round", "v6.1", "--dry-run"],
        capture_output=True,
        timeout=TIMEOUT_S,
        cwd=tmp_path,
        text=True,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert next(line for line in done.stdout.splitlines() if "NOTES.md" in line and "named pipe" in line)
