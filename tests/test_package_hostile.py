"""`submitter package` on hostile trees: links out of the tree, into /proc, and files that cannot be read.

What a link leads to outside the tree is never read, scanned or archived: the link is a finding of its
own, and when it leads to a folder `check` would walk (it follows links as the official checker does),
`check` does not run either. A file that cannot be read is a finding naming the reason the system gave.
With `--json` the document is on stdout whatever was found, and the exit code is 1.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
from pathlib import Path
from typing import Any

import minitree
import pytest
from click.testing import CliRunner
from conftest import run_cli

import submitter.package.leaks as leaks
from submitter.cli import cli
from submitter.package.packaging import PackageReport, PackageRequest, Sensitive, package_tree

SUBMITTER = "closed/Acme"
SRC = f"{SUBMITTER}/src"
HF_TOKEN = "hf_" + "Qm7XkP2vLs9TzR4wNc8YbJ5eHd3UaG6fKi"  # made up, in the real format
SENSITIVE = Sensitive.build(hosts=["gpu-node-7"], users=["alice"])  # never this machine's names

needs_proc = pytest.mark.skipif(
    not (os.path.exists("/proc/self/mem") and os.path.exists("/proc/self/cwd")), reason="needs Linux /proc"
)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A valid v6.1 tree of llama3.1-8b (Offline and Server) that `package` archives without a finding."""
    root = tmp_path / "tree"
    minitree.build_tree(
        root, "v6.1", [("sys_1xH100", "llama3.1-8b", s) for s in ("Offline", "Server")], submitter="Acme"
    )
    return root


def package(tree: Path, tmp_path: Path, **options: Any) -> PackageReport:
    request = PackageRequest(
        path=tree / SUBMITTER, out_dir=tmp_path / "out", round_name="v6.1", sensitive=SENSITIVE
    )
    return package_tree(dataclasses.replace(request, **options))


def regular_files(folder: Path) -> list[str]:
    """The regular files of `folder` as they lie, no link followed."""
    return [
        str(Path(top, name))
        for top, _, names in os.walk(folder)
        for name in names
        if not os.path.islink(Path(top, name))
    ]


def json_package(tree: Path, cwd: Path, *options: str) -> tuple[int, dict[str, Any], str]:
    """`submitter package --json` in a fresh process: exit code, the document on stdout, stderr."""
    done = run_cli(
        "package",
        str(tree / SUBMITTER),
        "--round",
        "v6.1",
        "--out",
        str(cwd / "out"),
        "--json",
        *options,
        cwd=cwd,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout), done.stderr


def finding_at(document: dict[str, Any], path: str) -> dict[str, Any]:
    [finding] = [finding for finding in document["findings"] if finding["path"] == path]
    return finding


@needs_proc
def test_a_link_to_proc_self_mem_is_a_finding_in_the_json_document(tree, tmp_path):
    (tree / SRC / "mem.txt").symlink_to("/proc/self/mem")
    code, document, stderr = json_package(tree, tmp_path)
    assert code == 1
    finding = finding_at(document, f"{SRC}/mem.txt")
    assert finding["rule"] == "HYG-SYMLINK" and finding["severity"] == "error"
    assert "/proc/self/mem" in finding["message"] and "outside the tree" in finding["message"]
    assert "permission" not in json.dumps(document).lower() + stderr.lower()
    assert document["archive"] is None and not (tmp_path / "out").exists()


@needs_proc
def test_a_link_to_proc_self_cwd_is_reported_and_nothing_behind_it_is_read(tree, tmp_path):
    """The working folder (where the command runs) holds a token: read through the link, it would be a
    LEAK-TOKEN finding; it is not read, and nothing below the link is listed."""
    working = tmp_path / "working"
    (working / "deep").mkdir(parents=True)
    (working / "deep" / "secrets.env").write_text(f"HF_TOKEN={HF_TOKEN}\n")
    for number in range(200):
        (working / "deep" / f"log{number}.txt").write_text("ssh rhel@10.0.0.5\n")
    (tree / SRC / "README.md.d").symlink_to("/proc/self/cwd")
    code, document, _ = json_package(tree, working, "--dry-run")
    assert code == 1
    link = f"{SRC}/README.md.d"
    finding = finding_at(document, link)
    assert finding["rule"] == "HYG-SYMLINK"
    assert "/proc/self/cwd" in finding["message"] and "check was not run" in finding["message"]
    assert [f for f in document["findings"] if f["path"].startswith(link + "/")] == []
    assert not {"LEAK-TOKEN", "LEAK-IP"} & {f["rule"] for f in document["findings"]}
    assert document["scanned_files"] == len(regular_files(tree / SUBMITTER))


@needs_proc
def test_a_link_into_proc_is_refused_even_where_it_shows_the_tree_itself(tree):
    """Run from inside the tree, /proc/self/cwd leads back into it: what it shows depends on who reads."""
    (tree / SRC / "here").symlink_to("/proc/self/cwd")
    out = str(tree.parent / "out")
    done = run_cli(
        "package", str(tree / SUBMITTER), "--round", "v6.1", "--out", out, "--dry-run", cwd=tree / SUBMITTER
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    [line] = [line for line in done.stdout.splitlines() if f"{SRC}/here:" in line]
    assert "HYG-SYMLINK error" in line and "/proc/self/cwd" in line and "/proc" in line


def test_a_link_to_a_file_outside_the_tree_is_reported_and_not_read(tree, tmp_path):
    outside = tmp_path / "outside.env"
    outside.write_text(f"HF_TOKEN={HF_TOKEN}\n")
    (tree / SRC / "env.txt").symlink_to(outside)
    report = package(tree, tmp_path)
    [finding] = report.findings
    assert (finding.rule, finding.path) == ("HYG-SYMLINK", f"{SRC}/env.txt")
    assert str(outside) in finding.message and "outside the tree" in finding.message
    assert report.blocked and report.written is None
    assert report.check.results  # a link to a file: check ran, its walk stays in the tree


def test_a_link_to_a_folder_outside_the_tree_is_not_walked_and_check_does_not_run(tree, tmp_path):
    outside = tmp_path / "elsewhere"
    (outside / "__pycache__").mkdir(parents=True)
    (outside / "notes.txt").write_text(f"HF_TOKEN={HF_TOKEN}\n")
    (tree / SRC / "vendor").symlink_to(outside)
    report = package(tree, tmp_path, round_name=None)
    [finding] = report.findings
    assert (finding.rule, finding.path) == ("HYG-SYMLINK", f"{SRC}/vendor")
    assert "check was not run" in finding.message
    assert report.check.results == [] and report.scanned_files == len(regular_files(tree / SUBMITTER))
    # The round is detected from the tree as it lies, as `check` would have detected it.
    assert report.check.detection is not None and report.check.rules.name == "v6.1"


def test_a_link_inside_the_tree_is_a_plain_symlink_finding(tree, tmp_path):
    (tree / SRC / "copy.md").symlink_to("README.md")
    report = package(tree, tmp_path)
    [finding] = report.findings
    assert (finding.rule, finding.path, finding.message) == (
        "HYG-SYMLINK",
        f"{SRC}/copy.md",
        "is a symbolic link",
    )
    assert report.check.results


def raising_for(victim: Path, error: int) -> Any:
    """open_regular, but `victim` fails with `error` as a disk or a file system would make it fail."""
    real = leaks.open_regular

    def open_regular(path: Path, **options: Any) -> Any:
        if Path(path) == victim:
            raise OSError(error, os.strerror(error), str(path))
        return real(path, **options)

    return open_regular


def test_a_file_that_cannot_be_read_is_a_finding_naming_the_reason(tree, tmp_path, monkeypatch):
    victim = tree / SRC / "README.md"
    monkeypatch.setattr(leaks, "open_regular", raising_for(victim, errno.EIO))
    result = CliRunner().invoke(
        cli, ["package", str(tree / SUBMITTER), "--round", "v6.1", "--out", str(tmp_path / "out"), "--json"]
    )
    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)
    finding = finding_at(document, f"{SRC}/README.md")
    assert finding["rule"] == "STRUCT-UNREADABLE" and finding["severity"] == "error"
    assert "Input/output error" in finding["message"] and "EIO" in finding["message"]
    assert "permission" not in (finding["message"] + finding["fix"]).lower()
    assert document["archive"] is None and not (tmp_path / "out").exists()


def test_a_file_without_read_permission_is_named_as_such(tree, tmp_path, monkeypatch):
    victim = tree / SRC / "README.md"
    monkeypatch.setattr(leaks, "open_regular", raising_for(victim, errno.EACCES))
    report = package(tree, tmp_path)
    [finding] = report.findings
    assert (finding.rule, finding.path) == ("STRUCT-UNREADABLE", f"{SRC}/README.md")
    assert "Permission denied" in finding.message and "permission" in finding.fix


def test_the_scan_stops_at_its_byte_budget_and_says_what_it_did_not_read(tree, tmp_path, monkeypatch):
    sizes = sorted(os.path.getsize(path) for path in regular_files(tree / SUBMITTER))
    monkeypatch.setattr(leaks, "MAX_SCANNED_BYTES", sum(sizes[:3]))
    report = package(tree, tmp_path)
    [finding] = report.findings
    assert finding.rule == "STRUCT-UNREADABLE" and "the leak scan reads at most" in finding.message
    assert report.scanned_files < len(sizes) and report.written is None


def test_a_file_that_grows_while_it_is_read_is_read_no_further_than_the_limit(tmp_path):
    (tmp_path / "growing.log").write_text("x" * 1000 + f"\nHF_TOKEN={HF_TOKEN}\n")
    scan = leaks.scan_tree(
        tmp_path, {"growing.log": 10}, ["growing.log"], SENSITIVE, leaks.AllowList(), max_bytes=100
    )
    assert scan.findings == [] and scan.scanned_files == 0
    assert "growing.log" in scan.unreadable and "more than" in scan.unreadable["growing.log"][0]


@needs_proc
def test_a_link_beside_the_divisions_is_refused_and_never_read(tree, tmp_path):
    (tree / "NOTES.md").symlink_to("/proc/self/mem")
    report = package(tree, tmp_path, path=tree)
    [finding] = [finding for finding in report.findings if finding.path == "NOTES.md"]
    assert finding.rule == "HYG-SYMLINK" and "/proc/self/mem" in finding.message
    assert report.check.results  # check ran: beside the divisions it walks into no folder
    assert report.blocked and report.written is None


def test_a_tree_past_the_walk_budget_is_refused_with_one_finding(tree, tmp_path, monkeypatch):
    from submitter.check import load

    vast = tree / SRC / "vast"
    vast.mkdir()
    for number in range(50):
        (vast / f"f{number}").write_text("x\n")
    entries = sum(1 for _ in (tree / SUBMITTER).rglob("*"))
    monkeypatch.setattr(load, "MAX_WALKED_ENTRIES", entries - 25)
    report = package(tree, tmp_path)
    [stopped] = [finding for finding in report.findings if "files and folders" in finding.message]
    assert stopped.rule == "STRUCT-UNREADABLE" and report.blocked and report.written is None


def test_a_folder_that_cannot_be_listed_is_a_finding_once(tree, tmp_path, monkeypatch):
    """Root lists a folder of mode 000 all the same: the refusal is made as the file system makes it."""
    private = tree / SRC / "private"
    private.mkdir()
    (private / "notes.txt").write_text(f"HF_TOKEN={HF_TOKEN}\n")
    real = os.scandir

    def scandir(path: Any = ".") -> Any:
        if Path(path) == private:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    report = package(tree, tmp_path)
    [finding] = [finding for finding in report.findings if finding.path == f"{SRC}/private"]
    assert finding.rule == "STRUCT-UNREADABLE" and "cannot be listed" in finding.message
    assert "Permission denied" in finding.message
    assert "LEAK-TOKEN" not in {f.rule for f in report.findings} and report.written is None


def test_a_file_that_fails_while_it_is_archived_is_a_finding_and_nothing_is_written(
    tree, tmp_path, monkeypatch
):
    """Scanned a moment ago, unreadable now: named like a file the scan could not read, not a write error."""
    import submitter.package.archive as archive

    monkeypatch.setattr(archive, "open_regular", raising_for(tree / SRC / "README.md", errno.EIO))
    result = CliRunner().invoke(
        cli, ["package", str(tree / SUBMITTER), "--round", "v6.1", "--out", str(tmp_path / "out"), "--json"]
    )
    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)
    finding = finding_at(document, f"{SRC}/README.md")
    assert finding["rule"] == "STRUCT-UNREADABLE" and "Input/output error (EIO)" in finding["message"]
    assert document["archive"] is None and list((tmp_path / "out").iterdir()) == []
