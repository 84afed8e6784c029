"""Shared test helpers: the real published tree from ../shared (skipped when absent) and the CLI."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared"
REDHAT_TREE = SHARED / "fixtures" / "v5.1" / "closed" / "RedHat"


@pytest.fixture
def redhat_tree() -> Path:
    if not REDHAT_TREE.is_dir():
        pytest.skip("../shared/fixtures is not beside this checkout")
    return REDHAT_TREE


@pytest.fixture(scope="session")
def demo_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    """A short valid run of every step the demo system's round requires, made once per session (about
    15 s): staging and report tests read it and never change it (test_stage checks that)."""
    from harness_helpers import every_step_run

    return every_step_run(tmp_path_factory.mktemp("demo-runs"))


@pytest.fixture(scope="module")
def valid_llm_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A v6.1 tree that every command passes (llama3.1-8b, Offline and Server), built once per module for
    tests that break a copy of it."""
    import minitree

    root = tmp_path_factory.mktemp("valid-llm")
    minitree.build_tree(
        root, "v6.1", [("sys", "llama3.1-8b", s) for s in ("Offline", "Server")], submitter="Org"
    )
    return root


def run_cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real command line in a fresh process, as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "submitter", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        check=False,
    )


@pytest.fixture(scope="session")
def round_loadgens(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a command that runs a v6.0 benchmark: v6.0's LoadGen installed beside the pinned
    one, as `submitter rounds install-loadgen` does, in a folder of the tests' own (never the user's cache,
    whose state would decide the test)."""
    folder = tmp_path_factory.mktemp("loadgen")
    environment = {"SUBMITTER_LOADGEN_DIR": str(folder)}
    done = run_cli("rounds", "install-loadgen", "v6.0", cwd=folder, env=environment)
    assert done.returncode == 0, done.stderr
    return environment


def valid_system() -> dict[str, Any]:
    """A complete official description that passes every rule (the demo system's)."""
    from submitter.systems.catalog import descriptor_path
    from submitter.systems.validate import load_descriptor

    return load_descriptor(descriptor_path("demo_cpu")).official()


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def readable_folder(prefix: str) -> Path:
    """A fresh folder that `nobody` may read and enter (pytest's own are private to root), removed at exit."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    folder.chmod(0o755)
    atexit.register(remove_folder, folder)
    return folder


def remove_folder(folder: Path) -> None:
    """Remove a folder, locked subfolders included (a user other than root cannot empty a 0555 one)."""
    for path in [folder, *folder.rglob("*")]:
        if path.is_dir() and not path.is_symlink():
            path.chmod(0o755)
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def stage_inputs(demo_runs: tuple[dict[str, Any], Path]) -> tuple[Path, Path]:
    """The session's short run of every step, copied where other users may read it, and its descriptor
    as a file: (descriptor file, runs folder)."""
    descriptor, runs = demo_runs
    folder = readable_folder("submitter-runs-")
    return write_json(folder / "fast_cpu.json", descriptor), shutil.copytree(runs, folder / "runs")


@pytest.fixture
def listening_server() -> Iterator[tuple[int, list[str]]]:
    """A TCP server on the host's 127.0.0.1; the list collects the peers it accepted."""
    accepted: list[str] = []
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, peer = server.accept()
            except TimeoutError:
                continue
            accepted.append(str(peer))
            connection.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], accepted
    finally:
        stop.set()
        thread.join()
        server.close()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Spread over workers (`pytest -n`), the slow tests go out first, each to its own worker: they mostly
    wait on LoadGen's clock, while the quick ones, which keep the cores busy, fill in beside them. Run
    one by one, the order stays as collected."""
    if hasattr(config, "workerinput"):  # a pytest-xdist worker: the controller schedules its collection
        items.sort(key=lambda item: item.get_closest_marker("slow") is None)
