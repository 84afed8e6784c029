"""The demo passes whenever the code is right, however busy the machine.

whisper's TEST01 compares the audit's throughput with the performance run's (within 10 %). The demo
engine's answers are timed by its model, but the harness's own work on them (decoding each answer to the
labels LoadGen logs) takes the CPU: when the engine answered all 256 samples at one instant, that work set
the run's length, and a busy machine made TEST01 a coin toss (3 of 4 runs failed on a loaded 2-core
machine). The demo descriptor now gives the engine few slots, so answers come in waves that the harness
keeps up with, and the model, not the machine, sets the time.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import run_cli

RUNS = 3  # each failed with a probability of about 0.4 before, so three in a row mostly failed


def _spin() -> None:
    while True:
        pass


@pytest.fixture
def busy_cores() -> Iterator[None]:
    """Every core of the machine kept busy by another process while the test runs."""
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(os.cpu_count() or 2)]
    for spinner in spinners:
        spinner.start()
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.join()


@pytest.mark.slow
def test_whisper_demo_passes_its_test01_with_every_core_busy(tmp_path: Path, busy_cores: None) -> None:
    (tmp_path / "demo-data").mkdir()
    synth = run_cli(
        "data", "synth", "--benchmark", "whisper", "--out", "demo-data/whisper_synthetic.json",
        "--demo-model", "demo-data/whisper-model", cwd=tmp_path,
    )  # fmt: skip
    assert synth.returncode == 0, synth.stderr
    for attempt in range(RUNS):
        run = run_cli(
            "run-all", "--system", "demo_cpu", "--benchmark", "whisper", "--smoke", "--json",
            "--runs-dir", f"runs-{attempt}", cwd=tmp_path,
        )  # fmt: skip
        assert run.returncode == 0, f"attempt {attempt + 1}: {run.stderr}"
        [audit] = [entry for entry in json.loads(run.stdout)["runs"] if entry["step"].endswith("/TEST01")]
        record = json.loads((tmp_path / audit["run_dir"] / "run.json").read_text())
        assert record["audit"]["passed"], record["audit"]
