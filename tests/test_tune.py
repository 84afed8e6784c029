"""`submitter tune-qps`: a search LoadGen judges, on a synthetic engine whose capacity is known."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli, write_json
from harness_helpers import fast_descriptor, write_dataset

from harness.loadgen_settings import Smoke
from harness.tune import TuneRequest, tune_qps
from submitter.errors import UsageProblem
from submitter.rounds.models import Scenario
from submitter.systems.descriptor import SystemDescriptor

# 64 sequences at 16000 tokens/s: one step every 4 ms, so 128-token answers leave at 125 per second.
CAPACITY_QPS = 16000 / 128
SHORT_TRIAL = Smoke(samples=64, min_duration_ms=2000, server_min_queries=512)


def limited_engine() -> dict:
    return fast_descriptor(
        engine_args={"tokens_per_second": 16000, "max_num_seqs": 64, "time_to_first_token_ms": 5}
    )


@pytest.mark.slow
def test_the_search_brackets_narrows_and_confirms(tmp_path: Path) -> None:
    dataset = write_dataset(tmp_path / "data.json")
    request = TuneRequest(
        system=SystemDescriptor.model_validate(limited_engine()),
        scenario=Scenario.SERVER,
        start_qps=60,
        trial=SHORT_TRIAL,
        confirm=SHORT_TRIAL,  # a stand-in for the full-length run, which takes ten minutes
        precision=0.05,
        dataset=dataset,
        runs_root=tmp_path / "runs",
    )
    seen = []
    result = tune_qps(request, seen.append)
    assert seen == result.trials
    search = [trial for trial in result.trials if not trial.confirmation]
    valid = [trial.qps for trial in search if trial.valid]
    invalid = [trial.qps for trial in search if not trial.valid]
    # Bracketing grew from 60 by 1.5 until LoadGen said INVALID, then bisection met the precision.
    assert [trial.qps for trial in search[:2]] == [60, 90]
    assert valid and invalid and max(valid) < min(invalid)
    assert min(invalid) / max(valid) - 1 <= 0.05
    # The decode step, and so TPOT, stays near 4 ms whatever the load: what breaks is the TTFT limit.
    finished = [trial for trial in search if not trial.aborted]  # an aborted trial has no LoadGen result
    assert all(trial.p99_tpot_ms is not None and trial.p99_tpot_ms < 100 for trial in finished)
    # The run's problem names the criterion LoadGen says was missed, or early abort its TTFT count.
    for trial in search:
        if trial.aborted:
            assert "had a TTFT over 2,000 ms" in (trial.why_invalid or "") and not trial.valid
        elif not trial.valid:
            assert "INVALID: latency constraints, early stopping not met (TTFT" in (trial.why_invalid or "")
    # The confirmation repeats the best rate; the answer is that run.
    confirmations = [trial for trial in result.trials if trial.confirmation]
    assert confirmations[0].qps == max(valid)
    assert result.best is confirmations[-1] and result.best.valid
    record = json.loads((result.best.run_dir / "run.json").read_text())
    assert record["loadgen"]["user_conf"]["target_qps"] == result.best.qps
    # Every trial ran on the engine the trial before it used, but after an aborted trial, which ends
    # its worker: the next one starts the engine again.
    records = [json.loads((trial.run_dir / "run.json").read_text()) for trial in result.trials]
    expected, number = [], 0
    for trial in result.trials:
        number += 1
        expected.append(number)
        number = 0 if trial.aborted else number
    assert [r["harness"]["engine_test_number"] for r in records] == expected
    assert [r["harness"]["engine_start_s"] is not None for r in records] == [n == 1 for n in expected]


@pytest.mark.slow
def test_a_failed_confirmation_steps_down_below_what_the_engine_completed(tmp_path: Path) -> None:
    # At 1.5 times capacity the queue grows by a third of a second per second: a 3-second trial ends
    # under 1 s of waiting (VALID), an 8-second confirmation passes the 2 s TTFT limit (INVALID). Here
    # LoadGen judges the whole run; test_early_abort has the same search stopping it early.
    overloaded = 1.5 * CAPACITY_QPS
    request = TuneRequest(
        system=SystemDescriptor.model_validate(limited_engine()),
        scenario=Scenario.SERVER,
        start_qps=overloaded,
        trial=SHORT_TRIAL,
        confirm=Smoke(samples=64, min_duration_ms=8000, server_min_queries=512),
        max_trials=1,
        precision=0.05,
        dataset=write_dataset(tmp_path / "data.json"),
        runs_root=tmp_path / "runs",
        early_abort=False,
    )
    result = tune_qps(request, lambda trial: None)
    search, failed, confirmed = result.trials
    assert search.valid and not search.confirmation and search.qps == round(overloaded, 3)
    assert failed.confirmation and not failed.valid and failed.qps == search.qps
    # The engine completed about its capacity, well under the target; the next rate starts below that,
    # where 5 % under the target (178 qps) would have failed again.
    assert failed.completed_qps is not None and failed.completed_qps < 1.02 * CAPACITY_QPS
    assert confirmed.qps == round(failed.completed_qps * 0.95, 3) < CAPACITY_QPS
    assert confirmed.valid and result.best is confirmed


def test_offline_is_refused(tmp_path: Path) -> None:
    request = TuneRequest(system=SystemDescriptor.model_validate(limited_engine()), scenario=Scenario.OFFLINE)
    with pytest.raises(UsageProblem, match="Offline has no arrival rate"):
        tune_qps(request, print)


def write_system_with_data(folder: Path) -> None:
    """fast_cpu.json in `folder`, the limited engine's descriptor, with its dataset beside it."""
    write_dataset(folder / "data.json")
    descriptor = limited_engine()
    descriptor["benchmarks"]["llama3.1-8b"]["dataset_path"] = str(folder / "data.json")
    write_json(folder / "fast_cpu.json", descriptor)


@pytest.mark.slow
def test_the_command_prints_the_trials_and_the_rate_to_set(tmp_path: Path) -> None:
    write_system_with_data(tmp_path)
    result = run_cli(
        "tune-qps", "--system", "fast_cpu.json", "--scenario", "Interactive", "--start", "100",
        "--trial-seconds", "1", "--precision", "0.5", "--step", "2", "--max-trials", "2", "--no-confirm",
        "--json", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["scenario"] == "Interactive" and document["trials"][0]["qps"] == 100
    first_valid = document["trials"][0]["valid"]
    # Unbounded, a 2x step at 50 % precision always needs a third trial; --max-trials stops it.
    assert len(document["trials"]) == 2 and document["trials"][1]["qps"] == (200 if first_valid else 50)
    assert document["best_qps"] == max(trial["qps"] for trial in document["trials"] if trial["valid"])
    assert document["confirmed_full_length"] is False
    assert f'"Interactive": {{"user_conf": {{"target_qps": {document["best_qps"]:g}}}}}' in result.stderr


def test_tune_qps_and_run_take_the_round_to_run_in(tmp_path: Path, round_loadgens: dict[str, str]) -> None:
    """As run-all does: the descriptor is set up for v6.1, and both commands run it in v6.0's rules."""
    write_system_with_data(tmp_path)
    tuned = run_cli(
        "tune-qps", "--system", "fast_cpu.json", "--round", "v6.0", "--scenario", "Server", "--start", "50",
        "--trial-seconds", "1", "--max-trials", "1", "--no-confirm", "--json",
        cwd=tmp_path, env=round_loadgens,
    )  # fmt: skip
    assert tuned.returncode == 0, tuned.stderr
    [trial] = json.loads(tuned.stdout)["trials"]
    assert json.loads((tmp_path / trial["run_dir"] / "run.json").read_text())["round"] == "v6.0"

    ran = run_cli(
        "run", "--system", "fast_cpu.json", "--round", "v6.0", "--scenario", "Offline",
        "--mode", "performance", "--smoke", "--json", cwd=tmp_path, env=round_loadgens,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["round"] == "v6.0"

    unknown = run_cli("run", "--system", "fast_cpu.json", "--round", "v9.9", cwd=tmp_path)
    assert unknown.returncode == 2 and "'v9.9' is not one of" in unknown.stderr
