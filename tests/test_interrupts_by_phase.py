"""SIGTERM (as a batch scheduler sends it; Ctrl-C takes the same path) in each phase of a run: the engine's
start, the LoadGen test (tests/test_run_all.py), and the evaluation after it (scoring an accuracy log,
verifying an audit). Each leaves run.json with status interrupted and everything the run produced; a run
interrupted in its evaluation keeps LoadGen's complete logs, `submitter accuracy` scores it, and run-all
finishes its evaluation instead of running it again."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import run_cli, write_json
from harness_helpers import fast_descriptor

from harness.ledger import read_events
from harness.loadgen_settings import Smoke
from harness.run_all import CampaignRequest, execute_campaign, plan_campaign
from submitter.fileformats.run_mode import Mode
from submitter.fileformats.run_record import RunRecord, read_record
from submitter.rounds.models import Scenario
from submitter.systems.descriptor import SystemDescriptor

# Enough samples that scoring them takes seconds (about 120 a second on a core), so the signal lands in it.
SCORED_SAMPLES = 2000
ATTEMPTS = 3  # TEST06 verifies 100 answers in milliseconds: a signal may come just after


class Quiet:
    def starting(self, *args: object) -> None:
        pass

    def finished(self, *args: object) -> None:
        pass


def _system(tmp_path: Path, **engine_args: float) -> Path:
    made = run_cli(
        "data", "synth", "--out", "data.json", "--samples", str(SCORED_SAMPLES), "--demo-model", "model",
        cwd=tmp_path,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    descriptor = fast_descriptor(model_path=str(tmp_path / "model"), dataset_path=str(tmp_path / "data.json"))
    descriptor["benchmarks"]["llama3.1-8b"]["engine_args"].update(engine_args)
    return write_json(tmp_path / "fast_cpu.json", descriptor)


def _start_run(tmp_path: Path, system: Path, mode: str, runs: str = "runs") -> subprocess.Popen[str]:
    command = [
        sys.executable, "-m", "submitter", "run", "--system", str(system), "--scenario", "Offline",
        "--mode", mode, "--smoke", "--smoke-samples", str(SCORED_SAMPLES), "--runs-dir", runs,
    ]  # fmt: skip
    return subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for_event(runs: Path, event: str, timeout_s: float = 120) -> str:
    """The run directory of the first ledger event of this kind, once it is written."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = [entry for entry in read_events(runs) if entry.event == event]
        if found and found[0].run_dir:
            return found[0].run_dir
        time.sleep(0.002)
    raise AssertionError(f"no {event} in the ledger within {timeout_s} s")


def _interrupt(process: subprocess.Popen[str]) -> str:
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    return stderr


def _finish_with_run_all(tmp_path: Path, system: Path, runs: Path, run_dir: Path, mode: Mode) -> RunRecord:
    """run-all finishes the interrupted evaluation: the same run directory, no new LoadGen test, the raw
    logs untouched. The finished run's record."""
    log_before = (run_dir / "mlperf_log_accuracy.json").read_bytes()
    request = CampaignRequest(
        system=SystemDescriptor.model_validate(json.loads(system.read_text())),
        scenarios=(Scenario.OFFLINE,),
        modes=(mode,),
        dataset=tmp_path / "data.json",
        model=str(tmp_path / "model"),
        smoke=Smoke(samples=SCORED_SAMPLES),
        runs_root=runs,
    )
    campaign = plan_campaign(request)
    [planned] = campaign.runs
    assert planned.earlier.unfinished == run_dir
    [outcome] = execute_campaign(campaign, Quiet())
    assert outcome.valid and outcome.run_dir == run_dir
    finished = read_record(run_dir)
    assert finished is not None and finished.status == "completed" and finished.interrupted_during is None
    assert (run_dir / "mlperf_log_accuracy.json").read_bytes() == log_before
    assert len(list(run_dir.parent.iterdir())) == 1
    assert len([event for event in read_events(runs) if event.event == "run-started"]) == 1
    return finished


@pytest.mark.skipif(sys.platform == "win32", reason="SIGTERM")
@pytest.mark.slow
def test_sigterm_while_the_engine_starts_records_the_interrupted_run(tmp_path: Path) -> None:
    system = _system(tmp_path, start_s=60)
    process = _start_run(tmp_path, system, "performance")
    run_dir = tmp_path / "runs" / _wait_for_event(tmp_path / "runs", "run-started")
    time.sleep(1.0)  # the worker is in the engine's start
    _interrupt(process)
    record = read_record(run_dir)
    assert record is not None and record.status == "interrupted" and record.interrupted_during == "test"
    assert (run_dir / "user.conf").is_file()  # what the run wrote before the signal is kept
    assert [e.status for e in read_events(tmp_path / "runs") if e.event == "run-finished"] == ["interrupted"]


@pytest.mark.skipif(sys.platform == "win32", reason="SIGTERM")
@pytest.mark.slow
def test_sigterm_while_scoring_keeps_the_run_which_accuracy_scores_and_run_all_finishes(
    tmp_path: Path,
) -> None:
    system = _system(tmp_path)
    process = _start_run(tmp_path, system, "accuracy")
    runs = tmp_path / "runs"
    run_dir = runs / _wait_for_event(runs, "run-evaluating")
    stderr = _interrupt(process)
    assert "interrupted while scoring the accuracy log" in stderr
    record = read_record(run_dir)
    assert record is not None and record.status == "interrupted"
    assert record.interrupted_during == "evaluation" and record.accuracy is None
    assert record.loadgen.outcome is not None and record.harness is not None
    assert record.harness.samples_completed == SCORED_SAMPLES  # LoadGen's logs are complete
    log_before = (run_dir / "mlperf_log_accuracy.json").read_bytes()

    # `submitter accuracy` scores the interrupted run as it is.
    scored = run_cli("accuracy", str(run_dir), "--json", cwd=tmp_path)
    assert scored.returncode == 0, scored.stderr  # 0: scored, and every target met
    assert all(verdict["passed"] for verdict in json.loads(scored.stdout)["verdicts"])
    assert (run_dir / "accuracy.txt").is_file()
    assert (run_dir / "mlperf_log_accuracy.json").read_bytes() == log_before  # raw logs never touched

    finished = _finish_with_run_all(tmp_path, system, runs, run_dir, Mode.ACCURACY)
    assert finished.scores is not None


@pytest.mark.skipif(sys.platform == "win32", reason="SIGTERM")
@pytest.mark.slow
def test_sigterm_while_an_audit_is_verified_keeps_the_run_which_run_all_finishes(tmp_path: Path) -> None:
    system = _system(tmp_path)
    for attempt in range(ATTEMPTS):
        runs = tmp_path / f"runs-{attempt}"
        process = _start_run(tmp_path, system, "TEST06", runs=runs.name)
        run_dir = runs / _wait_for_event(runs, "run-evaluating")
        stderr = _interrupt(process)
        record = read_record(run_dir)
        assert record is not None
        if record.status == "interrupted":
            break
        # Too late for the verification: the signal waited until the run was recorded, and nothing is lost.
        assert record.status == "completed" and record.audit is not None and record.audit["passed"]
    else:
        pytest.fail(f"the signal came after the verification in {ATTEMPTS} attempts")
    assert "interrupted while verifying TEST06" in stderr
    assert record.interrupted_during == "evaluation" and record.audit is None
    assert record.loadgen.outcome is not None and record.harness is not None
    finished = _finish_with_run_all(tmp_path, system, runs, run_dir, Mode.TEST06)
    assert finished.audit is not None and finished.audit["passed"]
