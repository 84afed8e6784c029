"""Where commands write: every destination proved writable before any work (`cannot write X: reason;
fix`, exit 2, nothing written), as a user the file system really refuses, and nothing half-written left
once a command killed with SIGKILL in the middle of its work is run again.

Root passes every permission check, so when the tests run as root the command runs as `nobody` (uid
65534, through util-linux's setpriv) against a folder of mode 0555: a real denial either way.
The helpers here (the CLI in a fresh process, the long-running workloads) serve tests/test_exit_codes.py too.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import minitree
import pytest
from conftest import readable_folder, remove_folder

from submitter.stage.staging import put_right_leftovers
from submitter.workspace import RUNS

NOBODY = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")
LOCKED_MODE = 0o555  # read and enter, never write
STAGE_FLAGS = ("--allow-not-submittable", "--allow-trials")
# Large enough that the work outlasts polling for its temporary by seconds, small enough for /tmp.
BIG_ACCURACY_LOG_BYTES = 60 << 20
BIG_BLOBS, BIG_BLOB_BYTES = 3, 40 << 20


# -- running the command line ------------------------------------------------------------------------


def as_nobody() -> tuple[str, ...]:
    """The prefix that runs a command as a user the file system can refuse (only root needs one)."""
    if os.geteuid() != 0:
        return ()
    if shutil.which("setpriv") is None:
        pytest.fail("running as root needs util-linux's setpriv to test real write refusals")
    return NOBODY


def cli(
    *args: str, cwd: Path, unprivileged: bool = False, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """The real command line in a fresh process, as a user runs it."""
    prefix = as_nobody() if unprivileged else ()
    return subprocess.run(
        [*prefix, sys.executable, "-m", "submitter", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def start(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "submitter", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_as_in_the_foreground,
    )


def _as_in_the_foreground() -> None:
    """Ctrl-C reaches a command in a terminal's foreground; a test run in the background (`nohup ... &`,
    some CI runners) would hand its commands SIGINT ignored, which Python then keeps ignoring."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for(folder: Path, pattern: str, process: subprocess.Popen[str], timeout_s: float = 120) -> Path:
    """The first path matching `pattern` in `folder`, polled while `process` works on."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = sorted(folder.glob(pattern))
        if found:
            return found[0]
        if process.poll() is not None:
            _, stderr = process.communicate()
            pytest.fail(f"the command ended ({process.returncode}) before {pattern} appeared:\n{stderr}")
        time.sleep(0.005)
    process.kill()
    pytest.fail(f"{pattern} never appeared in {folder}")


def assert_clean_failure(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr


def dead_pid() -> int:
    """The pid of a process that has ended (and was reaped)."""
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


@pytest.fixture
def workspace() -> Iterator[Path]:
    folder = readable_folder("submitter-writes-")
    yield folder
    remove_folder(folder)


def locked(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(LOCKED_MODE)
    return folder


# -- workloads ---------------------------------------------------------------------------------------


def padded_runs(source: Path, destination: Path) -> Path:
    """A copy of runs whose accuracy logs are large, so staging them takes seconds.
    The padding is JSON white space: the logs still parse, and only the copy grows."""
    runs = shutil.copytree(source, destination)
    for log in runs.glob("*/*/*/accuracy/*/mlperf_log_accuracy.json"):
        text = log.read_bytes().rstrip()
        assert text.endswith(b"]")
        with log.open("wb") as stream:
            stream.write(text[:-1])
            stream.write(b" " * BIG_ACCURACY_LOG_BYTES)
            stream.write(b"]\n")
    return runs


def big_package_tree(root: Path) -> Path:
    """A valid v6.1 submitter folder with 120 MB of incompressible code files: archiving it takes seconds."""
    minitree.build_tree(
        root, "v6.1", [("sys_1xH100", "llama3.1-8b", s) for s in ("Offline", "Server")], submitter="Acme"
    )
    for number in range(BIG_BLOBS):
        (root / "closed/Acme/src" / f"weights_{number}.bin").write_bytes(os.urandom(BIG_BLOB_BYTES))
    return root / "closed/Acme"


def leftovers(folder: Path) -> list[str]:
    """Temporaries and unfinished trees a command of submitter's could leave in `folder`."""
    return sorted(
        path.name
        for path in folder.iterdir()
        if path.name.endswith(".tmp") or ".staging-" in path.name or ".old-" in path.name
    )


# -- destinations refused before any work ------------------------------------------------------------


@pytest.fixture(scope="module")
def inputs() -> Path:
    """What the writing commands read, readable by `nobody`: a dataset and a demo model, a tree, an
    accuracy run."""
    folder = readable_folder("submitter-inputs-")
    made = cli("data", "synth", "--out", "data.json", "--samples", "64", "--demo-model", "model", cwd=folder)
    assert made.returncode == 0, made.stderr
    (folder / "tree/open/Demo").mkdir(parents=True)
    ran = cli(
        "run", "--system", "demo_cpu", "--scenario", "Offline", "--mode", "accuracy", "--dataset",
        "data.json", "--model", "model", "--smoke", "--runs-dir", "runs", cwd=folder,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    return folder


RUN_INPUTS = ("--dataset", "data.json", "--model", "model")
RUN_OFFLINE = ("run", "--system", "demo_cpu", "--scenario", "Offline", "--mode", "performance", "--smoke")
# Each command that writes, with `{dest}` where its destination goes, and whether missing folders above
# the destination are made (the work/ defaults) or refused (a file named by hand).
WRITERS: dict[str, tuple[tuple[str, ...], bool]] = {
    "report --out": (("report", "tree", "--out", "{dest}"), True),
    "data synth --out": (("data", "synth", "--samples", "8", "--out", "{dest}"), False),
    "data synth --demo-model": (
        ("data", "synth", "--samples", "8", "--out", "open/{name}.json", "--demo-model", "{dest}"),
        False,
    ),
    "data dummy-model --out": (("data", "dummy-model", "--out", "{dest}"), False),
    "stage --out": (("stage", "--system", "demo_cpu", "--out", "{dest}", *STAGE_FLAGS), True),
    "run --runs-dir": ((*RUN_OFFLINE, *RUN_INPUTS, "--runs-dir", "{dest}"), True),
    "run-all --runs-dir": (
        ("run-all", "--system", "demo_cpu", "--smoke", *RUN_INPUTS, "--runs-dir", "{dest}"),
        True,
    ),
    "tune-qps --runs-dir": (
        ("tune-qps", "--system", "demo_cpu", "--scenario", "Server", *RUN_INPUTS, "--runs-dir", "{dest}"),
        True,
    ),
    "systems probe -o": (("systems", "probe", "-o", "{dest}"), False),
}


def writer_args(writer: str, dest: str) -> list[str]:
    template, _ = WRITERS[writer]
    name = writer.replace(" ", "_").replace("-", "")
    return [part.format(dest=dest, name=name) for part in template]


def copy_for(inputs: Path, workspace: Path) -> Path:
    """The inputs beside the destinations of one test (a command reads them relative to its folder),
    and `open/`, a folder everyone may write."""
    for name in ("data.json", "model", "tree"):
        source = inputs / name
        if source.is_dir():
            shutil.copytree(source, workspace / name)
        else:
            shutil.copy(source, workspace / name)
    (workspace / "open").mkdir()
    (workspace / "open").chmod(0o777)
    return workspace


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_folder_that_refuses_writes_is_named_before_any_work(
    writer: str, inputs: Path, workspace: Path
) -> None:
    copy_for(inputs, workspace)
    folder = locked(workspace / "locked")
    result = cli(*writer_args(writer, "locked/out"), cwd=workspace, unprivileged=True)
    assert result.returncode == 2, result.stderr
    assert "cannot write locked/out" in result.stderr and "permission denied" in result.stderr, result.stderr
    assert_clean_failure(result)
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_path_through_a_file_is_refused(writer: str, inputs: Path, workspace: Path) -> None:
    copy_for(inputs, workspace)
    (workspace / "a_file").write_text("not a folder\n")
    result = cli(*writer_args(writer, "a_file/out"), cwd=workspace)
    assert result.returncode == 2, result.stderr
    assert "cannot write a_file/out: a_file is a file, not a folder" in result.stderr, result.stderr
    assert_clean_failure(result)
    assert (workspace / "a_file").read_text() == "not a folder\n"


@pytest.mark.parametrize("writer", sorted(name for name, (_, makes) in WRITERS.items() if not makes))
def test_a_missing_folder_is_refused_not_created(writer: str, inputs: Path, workspace: Path) -> None:
    copy_for(inputs, workspace)
    result = cli(*writer_args(writer, "missing/deeper/out"), cwd=workspace)
    assert result.returncode == 2, result.stderr
    assert "cannot write missing/deeper/out: the folder missing/deeper does not exist" in result.stderr
    assert "mkdir -p missing/deeper" in result.stderr
    assert_clean_failure(result)
    assert not (workspace / "missing").exists()


def test_report_makes_missing_folders_and_refuses_a_folder_inside_the_tree(
    inputs: Path, workspace: Path
) -> None:
    copy_for(inputs, workspace)
    made = cli("report", "tree", "--out", "reviews/round/one", cwd=workspace)
    assert made.returncode == 0, made.stderr
    assert (workspace / "reviews/round/one/review.html").is_file()

    inside = cli("report", "tree/open/Demo", "--out", "tree/open/Demo/review", cwd=workspace)
    assert inside.returncode == 2
    assert "cannot write tree/open/Demo/review: it lies inside the tree being reviewed" in inside.stderr
    assert not (workspace / "tree/open/Demo/review").exists()


def test_a_run_directory_that_refuses_writes_is_named_before_scoring(inputs: Path, workspace: Path) -> None:
    copy_for(inputs, workspace)
    run_dir = next((inputs / "runs").rglob("run.json")).parent
    copy = shutil.copytree(run_dir, workspace / "run")
    before = {path.name: path.read_bytes() for path in copy.iterdir()}
    locked(copy)
    result = cli("accuracy", "run", *RUN_INPUTS[:2], "--model", "model", cwd=workspace, unprivileged=True)
    assert result.returncode == 2, result.stderr
    assert "cannot write run/accuracy.txt" in result.stderr and "permission denied" in result.stderr
    assert_clean_failure(result)
    assert {path.name: path.read_bytes() for path in copy.iterdir()} == before


def test_the_unprivileged_user_writes_where_it_may(inputs: Path, workspace: Path) -> None:
    """The refusals above are the file system's, not a user who cannot run submitter at all."""
    open_folder = copy_for(inputs, workspace) / "open"
    result = cli("data", "synth", "--samples", "4", "--out", "open/x.json", cwd=workspace, unprivileged=True)
    assert result.returncode == 0, result.stderr
    assert len(json.loads((open_folder / "x.json").read_text())) == 4


def test_probe_refuses_an_existing_file_before_probing(workspace: Path) -> None:
    (workspace / "draft.json").write_text("{}")
    result = cli("systems", "probe", "-o", "draft.json", cwd=workspace)
    assert result.returncode == 2 and "draft.json exists" in result.stderr
    assert (workspace / "draft.json").read_text() == "{}"


# -- nothing half-written stays ----------------------------------------------------------------------


@pytest.mark.slow
def test_kill_9_of_data_synth_leaves_a_temporary_the_next_run_removes(workspace: Path) -> None:
    process = start("data", "synth", "--out", "cnn.json", cwd=workspace)
    temporary = wait_for(workspace, ".cnn.json.*.tmp", process)
    process.kill()
    process.communicate(timeout=30)
    assert temporary.exists() and not (workspace / "cnn.json").exists()

    rerun = cli("data", "synth", "--out", "cnn.json", cwd=workspace)
    assert rerun.returncode == 0, rerun.stderr
    assert (
        f"removed {temporary.name}, left half-written by process {process.pid}, which has ended"
        in rerun.stderr
    )
    assert leftovers(workspace) == []
    records = json.loads((workspace / "cnn.json").read_text())
    assert len(records) == 13368 and set(records[-1]) == {"instruction", "input", "tok_input", "output"}


def test_a_live_writers_temporary_is_kept_and_a_dead_ones_removed(workspace: Path) -> None:
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        live = workspace / f".x.json.{sleeper.pid}-abcdefgh.tmp"
        dead = workspace / f".x.json.{dead_pid()}-abcdefgh.tmp"
        earlier_version = workspace / ".x.json.abcd_123.tmp"  # no pid: named, never removed
        other_target = workspace / f".y.json.{dead_pid()}-abcdefgh.tmp"
        for path in (live, dead, earlier_version, other_target):
            path.write_text("half")
        for path in (dead, earlier_version):  # written before this run started
            os.utime(path, (time.time() - 3600, time.time() - 3600))
        result = cli("data", "synth", "--samples", "3", "--out", "x.json", cwd=workspace)
        assert result.returncode == 0, result.stderr
        assert live.exists() and earlier_version.exists() and other_target.exists()
        assert not dead.exists() and f"removed {dead.name}" in result.stderr
        assert f"{earlier_version.name} looks left half-written" in result.stderr
    finally:
        sleeper.kill()
        sleeper.wait()


@pytest.mark.slow
def test_kill_9_of_package_leaves_temporaries_the_next_package_removes(workspace: Path) -> None:
    tree = big_package_tree(workspace / "tree")
    process = start("package", str(tree), "--out", "dist", cwd=workspace)
    temporary = wait_for(workspace / "dist", ".Acme.tar.gz.*.tmp", process)
    process.kill()
    process.communicate(timeout=30)
    assert temporary.exists() and not (workspace / "dist/Acme.tar.gz").exists()

    rerun = cli("package", str(tree), "--out", "dist", cwd=workspace)
    assert rerun.returncode == 0, rerun.stderr
    assert f"removed dist/{temporary.name}" in rerun.stderr
    assert leftovers(workspace / "dist") == []
    assert sorted(path.name for path in (workspace / "dist").iterdir()) == [
        "Acme.manifest.json", "Acme.tar.gz", "Acme.tar.gz.sha256",
    ]  # fmt: skip
    manifest = json.loads((workspace / "dist/Acme.manifest.json").read_text())
    assert sum(entry["path"].endswith(".bin") for entry in manifest["files"]) == BIG_BLOBS


@pytest.mark.slow
def test_kill_9_of_stage_leaves_a_staging_folder_the_next_stage_removes(
    workspace: Path, stage_inputs: tuple[Path, Path]
) -> None:
    descriptor, source = stage_inputs
    runs = padded_runs(source, workspace / "runs")
    command = ("stage", "--system", str(descriptor), "--runs-dir", str(runs), "--out", "tree", *STAGE_FLAGS)
    process = start(*command, cwd=workspace)
    building = wait_for(workspace, ".tree.staging-*", process)
    process.kill()
    process.communicate(timeout=30)
    assert building.exists() and not (workspace / "tree").exists()

    rerun = cli(*command, cwd=workspace)
    assert rerun.returncode == 1, rerun.stderr  # a tree of --smoke runs: staged, and its check fails
    assert f"removed {building.name}, the unfinished tree of a killed stage" in rerun.stderr
    assert leftovers(workspace) == []
    manifest = json.loads((workspace / "tree-staging/manifest.json").read_text())
    staged = {entry["file"] for entry in manifest["files"]}
    assert all((workspace / "tree" / name).is_file() for name in staged)
    for scenario in ("Offline", "Server", "Interactive"):
        result = f"open/Demo/results/Demo_1xSynthetic_CPU/llama3.1-8b/{scenario}"
        assert {
            f"{result}/accuracy/mlperf_log_accuracy.json",
            f"{result}/performance/run_1/mlperf_log_detail.txt",
        } <= staged
    assert len(list((workspace / "tree-staging/accuracy-logs").rglob("mlperf_log_accuracy.json"))) == 3


def test_stage_puts_back_the_tree_a_killed_stage_had_moved_aside(
    workspace: Path, stage_inputs: tuple[Path, Path]
) -> None:
    """A kill between moving the previous tree aside and moving the new one in: the next stage moves
    it back, and replaces it only with --force."""
    descriptor, runs = stage_inputs
    command = ("stage", "--system", str(descriptor), "--runs-dir", str(runs), "--out", "tree", *STAGE_FLAGS)
    assert cli(*command, cwd=workspace).returncode == 1
    (workspace / "tree").rename(workspace / f".tree.old-{dead_pid()}")
    live_build = workspace / f".tree.staging-{os.getppid()}"  # a stage still at work: left alone
    live_build.mkdir()

    again = cli(*command, cwd=workspace)
    assert again.returncode == 2 and "pass --force" in again.stderr
    assert "restored" in again.stderr and (workspace / "tree/open/Demo").is_dir()
    assert leftovers(workspace) == [live_build.name]
    forced = cli(*command, "--force", cwd=workspace)
    assert forced.returncode == 1, forced.stderr
    assert leftovers(workspace) == [live_build.name]


def test_a_stage_killed_between_its_two_moves_is_finished_by_the_next(workspace: Path) -> None:
    """The new tree was moved into place, its staging folder not yet: the next stage moves it there,
    so the tree and the manifest of its originals always belong together."""
    (workspace / "tree").mkdir()
    (workspace / "tree-staging").mkdir()
    (workspace / "tree-staging/manifest.json").write_text("old")
    killed = workspace / f".tree.staging-{dead_pid()}"
    (killed / "staging").mkdir(parents=True)
    (killed / "staging/manifest.json").write_text("new")
    put_right_leftovers(workspace / "tree")
    assert (workspace / "tree-staging/manifest.json").read_text() == "new"
    assert leftovers(workspace) == []


def test_stage_takes_submitter_and_division_from_the_descriptor(
    workspace: Path, stage_inputs: tuple[Path, Path]
) -> None:
    descriptor, runs = stage_inputs
    base = ("stage", "--system", str(descriptor), "--runs-dir", str(runs), *STAGE_FLAGS, "--json")
    implied = cli(*base, "--out", "implied", cwd=workspace)
    assert implied.returncode == 1, implied.stderr
    document = json.loads(implied.stdout)
    assert (document["submitter"], document["division"]) == ("Demo", "open")
    assert "for Demo (open division)" in implied.stderr
    assert (workspace / "implied/open/Demo/systems").is_dir()

    named = cli(*base, "--out", "named", "--submitter", "Demo", "--division", "open", cwd=workspace)
    assert named.returncode == 1, named.stderr
    differing = cli(*base, "--out", "other", "--division", "closed", cwd=workspace)
    assert differing.returncode == 2
    assert "says division 'open', but --division is 'closed'" in differing.stderr
    assert not (workspace / "other").exists()


def test_defaults_write_under_work(workspace: Path, stage_inputs: tuple[Path, Path]) -> None:
    """run, stage and report put their outputs under work/ when not told otherwise."""
    descriptor, runs = stage_inputs
    shutil.copytree(runs, workspace / RUNS)
    staged = cli("stage", "--system", str(descriptor), *STAGE_FLAGS, cwd=workspace)
    assert staged.returncode == 1, staged.stderr
    assert (workspace / "work/submission/open/Demo").is_dir()
    assert (workspace / "work/submission-staging/manifest.json").is_file()
    reviewed = cli("report", "work/submission", cwd=workspace)
    assert reviewed.returncode == 0, reviewed.stderr
    assert (workspace / "work/review/review.md").is_file()
    assert sorted(path.name for path in (workspace / "work").iterdir()) == [
        "review", "runs", "submission", "submission-staging",
    ]  # fmt: skip


@pytest.mark.parametrize("signal_number", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.slow
def test_an_interrupted_data_synth_leaves_nothing(workspace: Path, signal_number: int) -> None:
    process = start("data", "synth", "--out", "cnn.json", cwd=workspace)
    wait_for(workspace, ".cnn.json.*.tmp", process)
    process.send_signal(signal_number)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert sorted(path.name for path in workspace.iterdir()) == []
