"""`submitter run-all`: the plan, its preflight and estimates, keeping valid runs, and surviving kills."""

from __future__ import annotations

import dataclasses
import fcntl
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli, write_json
from harness_helpers import SHORT, detail_records, fast_descriptor, write_dataset

from harness.estimate import issued_samples, whole_set_note
from harness.ledger import read_events
from harness.matrix import required_steps
from harness.run_all import CampaignRequest, execute_campaign, plan_campaign
from harness.runner import RunRequest, execute, plan_run
from submitter.errors import SubmitterError, UsageProblem
from submitter.fileformats.run_mode import Mode
from submitter.rounds.models import Scenario
from submitter.rounds.registry import load_round
from submitter.systems.descriptor import SystemDescriptor
from submitter.workspace import RUNS, WORK


class Silent:
    def starting(self, *args: object) -> None:
        pass

    def finished(self, *args: object) -> None:
        pass


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    return write_dataset(tmp_path / "data.json")


def campaign_request(
    descriptor: dict[str, Any], dataset: Path, tmp_path: Path, **changes: Any
) -> CampaignRequest:
    return CampaignRequest(
        system=SystemDescriptor.model_validate(descriptor),
        dataset=dataset,
        smoke=SHORT,
        runs_root=tmp_path / "runs",
        **changes,
    )


def test_the_plan_is_every_scenario_in_every_mode_audits_first() -> None:
    demo = SystemDescriptor.model_validate(fast_descriptor())
    steps = [step.key for step in required_steps(demo, load_round("v6.1"))]
    # Grouped by scenario, so that consecutive runs share one engine start.
    assert steps == [
        f"llama3.1-8b/{scenario}/{mode}"
        for scenario in ("Offline", "Server", "Interactive")
        for mode in ("TEST06", "accuracy", "performance")
    ]
    narrowed = required_steps(demo, load_round("v6.1"), scenarios=(Scenario.SERVER,))
    assert [step.key for step in narrowed] == [
        f"llama3.1-8b/Server/{m}" for m in ("TEST06", "accuracy", "performance")
    ]
    with pytest.raises(UsageProblem, match="sets up no benchmark llama2-70b"):
        required_steps(demo, load_round("v6.1"), benchmarks=("llama2-70b",))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("scenario", "target_qps", "overrides"),
    [
        # 1.1 x 1 s x 1000/s = 1100 samples, rounded up to whole sets of 64: 1152
        (Scenario.OFFLINE, 1000, {"min_duration_ms": 1000, "min_query_count": 1}),
        # 2 s x 200/s = 400 queries expected, rounded up to whole sets of 64: 448
        (Scenario.SERVER, 200, {"min_duration_ms": 2000, "min_query_count": 100}),
    ],
)
def test_the_estimated_sample_count_is_what_loadgen_issues(
    tmp_path: Path, dataset: Path, scenario: Scenario, target_qps: int, overrides: dict[str, int]
) -> None:
    descriptor = fast_descriptor()
    descriptor["benchmarks"]["llama3.1-8b"]["scenarios"][scenario]["user_conf"]["target_qps"] = target_qps
    request = RunRequest(
        system=SystemDescriptor.model_validate(descriptor),
        benchmark="llama3.1-8b",
        scenario=scenario,
        mode=Mode.PERFORMANCE,
        dataset=dataset,
        smoke=SHORT,
        runs_root=tmp_path / "runs",
    )
    plan = plan_run(request)
    plan = dataclasses.replace(plan, overrides={**overrides, "performance_sample_count_override": 64})
    finished = execute(plan)
    log = detail_records(finished.run_dir)
    issued = log["generated_query_count"] * log["generated_samples_per_query"]
    if scenario is Scenario.OFFLINE:
        assert issued_samples(plan) == issued == 1152
    else:
        # Server stops at the first whole set after min_duration on its Poisson schedule: the expected
        # count, rounded up to a set, is at most one set off (LoadGen issued 384 here, estimated 448).
        assert issued_samples(plan) == 448
        assert issued % 64 == 0 and abs(issued - 448) <= 64


def test_full_length_demo_sizes_follow_the_round(tmp_path: Path, dataset: Path) -> None:
    """The demo's full runs: Offline at 39/s is 1.1 x 600 x 39 = 25740 samples, two sets of 13368."""
    demo = fast_descriptor()
    demo["benchmarks"]["llama3.1-8b"]["scenarios"]["Offline"]["user_conf"]["target_qps"] = 39
    demo["benchmarks"]["llama3.1-8b"]["scenarios"]["Server"]["user_conf"]["target_qps"] = 22
    campaign = plan_campaign(
        campaign_request(demo, dataset, tmp_path, scenarios=(Scenario.OFFLINE, Scenario.SERVER))
    )
    full = {
        run.step.key: issued_samples(dataclasses.replace(run.plan, overrides={}, dataset_size=13368))
        for run in campaign.runs
    }
    assert full == {
        "llama3.1-8b/Offline/TEST06": 100,
        "llama3.1-8b/Server/TEST06": 100,
        "llama3.1-8b/Offline/accuracy": 13368,
        "llama3.1-8b/Server/accuracy": 13368,
        "llama3.1-8b/Offline/performance": 26736,
        "llama3.1-8b/Server/performance": 13368,
    }
    offline = next(run for run in campaign.runs if run.step.key == "llama3.1-8b/Offline/performance")
    assert offline.estimate.samples == 64  # a --smoke trial: one pass over the 64 prompts
    # The engine starts once per scenario (2 s for the synthetic engine), with the scenario's first run.
    assert offline.estimate.seconds == pytest.approx(64 / 39)
    first = {run.step.scenario: run for run in reversed(campaign.runs)}
    assert first[Scenario.OFFLINE].estimate.seconds == pytest.approx(2.0 + 100 / 39)
    assert first[Scenario.SERVER].estimate.seconds == pytest.approx(2.0 + 100 / 22)


def test_a_rate_that_makes_equal_issue_add_a_whole_set_is_named(tmp_path: Path, dataset: Path) -> None:
    """Offline at 25/s asks 1.1 x 600 x 25 = 16,500 samples; equal-issue mode issues two sets of 13,368:
    26,736, 1.6 times the work. The plan says so, and which rate keeps one set (13,368 / 660 = 20.2545...,
    printed rounded down: 20.3 would ask 13,398 and issue two sets again)."""
    demo = fast_descriptor()
    campaign = plan_campaign(campaign_request(demo, dataset, tmp_path, scenarios=(Scenario.OFFLINE,)))
    (run,) = [run for run in campaign.runs if run.step.mode is Mode.PERFORMANCE]
    full = dataclasses.replace(run.plan, overrides={}, dataset_size=13368)
    at_25 = dataclasses.replace(full, user_conf={"target_qps": 25})
    assert issued_samples(at_25) == 26736
    assert whole_set_note(at_25) == (
        "target_qps 25 asks 16,500 samples, which equal-issue mode rounds up to 26,736 (whole sets of "
        "13,368); a target_qps of at most 20.25 issues 13,368 (the run must still last LoadGen's minimum "
        "duration)"
    )
    assert issued_samples(dataclasses.replace(full, user_conf={"target_qps": 20.25})) == 13368
    assert issued_samples(dataclasses.replace(full, user_conf={"target_qps": 20.3})) == 26736
    assert whole_set_note(dataclasses.replace(full, user_conf={"target_qps": 39})) is None  # 25,740 -> 26,736
    assert whole_set_note(dataclasses.replace(full, user_conf={"target_qps": 15})) is None  # one set


@pytest.mark.slow
def test_a_finished_plan_keeps_everything_and_changed_settings_redo_only_their_runs(
    tmp_path: Path, dataset: Path
) -> None:
    descriptor = fast_descriptor()
    scenarios = (Scenario.OFFLINE, Scenario.SERVER)
    first = execute_campaign(
        plan_campaign(campaign_request(descriptor, dataset, tmp_path, scenarios=scenarios)), Silent()
    )
    assert len(first) == 6 and all(outcome.valid and not outcome.reused for outcome in first)

    again = plan_campaign(campaign_request(descriptor, dataset, tmp_path, scenarios=scenarios))
    assert [run.reuse for run in again.runs] == [outcome.run_dir for outcome in first]
    assert again.to_run == () and again.seconds == 0

    descriptor["benchmarks"]["llama3.1-8b"]["scenarios"]["Server"]["user_conf"]["target_qps"] = 150
    changed = plan_campaign(campaign_request(descriptor, dataset, tmp_path, scenarios=scenarios))
    redo = {run.step.key: run.earlier.note for run in changed.to_run}
    assert sorted(redo) == [f"llama3.1-8b/Server/{mode}" for mode in ("TEST06", "accuracy", "performance")]
    assert all("user_conf.target_qps: 200 -> 150" in note for note in redo.values())

    # Offline accuracy and audit runs are one query whatever the rate: only the performance run is redone.
    descriptor["benchmarks"]["llama3.1-8b"]["scenarios"]["Server"]["user_conf"]["target_qps"] = 200
    descriptor["benchmarks"]["llama3.1-8b"]["scenarios"]["Offline"]["user_conf"]["target_qps"] = 900
    offline_rate = plan_campaign(campaign_request(descriptor, dataset, tmp_path, scenarios=scenarios))
    assert [run.step.key for run in offline_rate.to_run] == ["llama3.1-8b/Offline/performance"]
    descriptor["benchmarks"]["llama3.1-8b"]["scenarios"]["Offline"]["user_conf"]["target_qps"] = 1000

    everything = plan_campaign(
        campaign_request(descriptor, dataset, tmp_path, scenarios=scenarios, resume=False)
    )
    assert len(everything.to_run) == 6

    # A run whose record says it was not valid is done again (edited here in a throwaway copy).
    offline_accuracy = next(o.run_dir for o in first if o.step.key == "llama3.1-8b/Offline/accuracy")
    record_path = offline_accuracy / "run.json"
    record = json.loads(record_path.read_text())
    record.update(valid=False, problems=["accuracy ROUGE1 1 is not >= 38.3914"])
    record_path.write_text(json.dumps(record))
    redo_invalid = plan_campaign(
        campaign_request(descriptor, dataset, tmp_path, scenarios=(Scenario.OFFLINE,))
    )
    [note] = [run.earlier.note for run in redo_invalid.to_run]
    assert note == f"{offline_accuracy.name} is not valid: accuracy ROUGE1 1 is not >= 38.3914"

    events = [event.event for event in read_events(tmp_path / "runs")]
    assert events.count("plan-started") == 1 and events.count("plan-finished") == 1
    assert events.count("run-started") == events.count("run-finished") == 6


def test_preflight_reports_every_problem_at_once_and_writes_nothing(
    tmp_path: Path, dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "audit.config").write_text("*.*.mode = 2\n")
    descriptor = fast_descriptor()
    with pytest.raises(UsageProblem) as raised:
        plan_campaign(campaign_request(descriptor, tmp_path / "missing.json", tmp_path))
    message = str(raised.value)
    assert message.startswith("preflight found 2 problem(s); nothing was run")
    assert "audit.config exists" in message and "missing.json does not exist" in message
    assert "(every run)" in message
    assert not (tmp_path / "runs").exists()


def test_a_second_run_all_for_the_same_system_is_refused(tmp_path: Path, dataset: Path) -> None:
    campaign = plan_campaign(
        campaign_request(fast_descriptor(), dataset, tmp_path, scenarios=(Scenario.OFFLINE,))
    )
    lock_path = tmp_path / "runs" / "fast_cpu" / ".run-all.lock"
    lock_path.parent.mkdir(parents=True)
    with lock_path.open("w") as lock:
        lock.write("4242")
        lock.flush()
        fcntl.flock(lock, fcntl.LOCK_EX)
        with pytest.raises(SubmitterError, match=r"already running .* \(pid 4242\)"):
            execute_campaign(campaign, Silent())
    assert not any((tmp_path / "runs" / "fast_cpu").glob("llama3.1-8b"))


RUN_ALL_SERVER_SMOKE = ("run-all", "--system", "fast_cpu.json", "--scenario", "Server", "--smoke")


def _start_run_all(tmp_path: Path, *extra: str, model: str = "synthetic") -> subprocess.Popen[str]:
    descriptor = fast_descriptor(dataset_path=str(tmp_path / "data.json"), model_path=model)
    write_json(tmp_path / "fast_cpu.json", descriptor)
    return subprocess.Popen(
        [sys.executable, "-m", "submitter", *RUN_ALL_SERVER_SMOKE, *extra],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_performance_run(tmp_path: Path) -> Path:
    """The performance run's directory once LoadGen writes into it (the third and last step)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        logs = list((tmp_path / RUNS).glob("fast_cpu/llama3.1-8b/Server/performance/*/mlperf_log_detail.txt"))
        if logs:
            return logs[0].parent
        time.sleep(0.1)
    raise AssertionError("the performance run never started")


def _workers(pid: int) -> list[int]:
    """The process's children that are run workers (`python -m harness.worker`)."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            if b"harness.worker" in Path(f"/proc/{child}/cmdline").read_bytes():
                found.append(int(child))
    return found


def _gone(pid: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().split(") ")[-1].split()[0]
        except FileNotFoundError:
            return True
        if state == "Z":
            return True
        time.sleep(0.1)
    return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc and relies on PR_SET_PDEATHSIG")
@pytest.mark.slow
def test_kill_9_midway_then_run_again_finishes_the_plan_without_redoing_valid_runs(tmp_path: Path) -> None:
    # The demo model scores the accuracy run: an unscored one would make run-all exit 1.
    made = run_cli(
        "data", "synth", "--out", "data.json", "--samples", "64", "--demo-model", "model", cwd=tmp_path
    )
    assert made.returncode == 0, made.stderr
    process = _start_run_all(tmp_path, model=str(tmp_path / "model"))
    killed_run = _wait_for_performance_run(tmp_path)
    [worker] = _workers(process.pid)
    process.kill()
    process.communicate(timeout=30)
    assert _gone(worker, timeout_s=10), "the worker outlived run-all"
    assert not (killed_run / "run.json").exists()

    rerun = run_cli(*RUN_ALL_SERVER_SMOKE, "--json", cwd=tmp_path)
    assert rerun.returncode == 0, rerun.stderr
    outcome = json.loads(rerun.stdout)
    assert outcome["valid"] is True
    assert [(run["step"], run["reused"], run["valid"]) for run in outcome["runs"]] == [
        ("llama3.1-8b/Server/TEST06", True, True),
        ("llama3.1-8b/Server/accuracy", True, True),
        ("llama3.1-8b/Server/performance", False, True),
    ]
    runs = tmp_path / RUNS
    assert len(list(runs.glob("fast_cpu/llama3.1-8b/Server/TEST06/*"))) == 1
    assert len(list(runs.glob("fast_cpu/llama3.1-8b/Server/accuracy/*"))) == 1
    assert {path.name for path in runs.glob("fast_cpu/llama3.1-8b/Server/performance/*")} == {
        killed_run.name,
        Path(outcome["runs"][2]["run_dir"]).name,
    }
    events = read_events(runs)
    assert [event.event for event in events if event.event.startswith("plan")] == [
        "plan-started",
        "plan-started",
        "plan-finished",
    ]
    reused = [event.run_dir for event in events if event.event == "run-reused"]
    started = [event.run_dir for event in events if event.event == "run-started"]
    assert reused == started[:2]


@pytest.mark.slow
def test_sigterm_records_the_run_as_interrupted_and_the_next_plan_redoes_it(tmp_path: Path) -> None:
    write_dataset(tmp_path / "data.json")
    process = _start_run_all(tmp_path)
    killed_run = _wait_for_performance_run(tmp_path)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "run-all interrupted after 2 of 3 runs" in stderr and "Traceback" not in stderr
    assert json.loads((killed_run / "run.json").read_text())["status"] == "interrupted"
    assert read_events(tmp_path / RUNS)[-1].event == "plan-interrupted"

    dry = run_cli(
        *RUN_ALL_SERVER_SMOKE,
        "--dry-run",
        "--json",
        cwd=tmp_path,
    )
    assert dry.returncode == 0, dry.stderr
    plan = json.loads(dry.stdout)
    assert [run["action"] for run in plan["runs"]] == ["keep", "keep", "run"]
    assert plan["runs"][2]["note"].startswith(f"{killed_run.name} is not valid: the run interrupted")


def test_smoke_samples_set_the_length_of_each_trial_run(tmp_path: Path) -> None:
    write_dataset(tmp_path / "data.json")
    write_json(tmp_path / "fast_cpu.json", fast_descriptor(dataset_path=str(tmp_path / "data.json")))
    command = ("run-all", "--system", "fast_cpu.json", "--scenario", "Offline", "--dry-run", "--json")
    default = json.loads(run_cli(*command, "--smoke", cwd=tmp_path).stdout)
    fewer = json.loads(run_cli(*command, "--smoke", "--smoke-samples", "20", cwd=tmp_path).stdout)
    # The 64-record dataset caps the default 256; each run then uses as many records as asked.
    assert {run["samples"] for run in default["runs"] if run["step"].endswith("performance")} == {64}
    assert {run["samples"] for run in fewer["runs"] if run["step"].endswith("performance")} == {20}
    # No model is loaded here: the engine's environment is the descriptor's alone (none).
    assert all(run["environment"] == {} for run in default["runs"])
    alone = run_cli(*command, "--smoke-samples", "20", cwd=tmp_path)
    assert alone.returncode == 2 and "add --smoke" in alone.stderr and "Traceback" not in alone.stderr


def test_dry_run_prints_the_plan_and_writes_nothing(tmp_path: Path) -> None:
    write_dataset(tmp_path / "data.json")
    write_json(tmp_path / "fast_cpu.json", fast_descriptor(dataset_path=str(tmp_path / "data.json")))
    result = run_cli("run-all", "--system", "fast_cpu.json", "--smoke", "--dry-run", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "9 of 9 runs to do, about" in result.stdout
    assert "llama3.1-8b Interactive performance" in result.stdout
    assert not (tmp_path / WORK).exists()


def test_an_engine_that_fails_to_start_is_tried_once_and_the_plan_resumes_once_it_is_fixed(
    tmp_path: Path, dataset: Path
) -> None:
    """The runs of a scenario share one engine (Server's streams, so it is another): after its start
    fails, the scenario's other runs are not tried (a large model's start takes minutes, to fail the same
    way), and the next run-all does them all."""
    model = tmp_path / "demo-model"
    model.mkdir()
    (model / "answers.json").write_text("[[1, 2], [3,", encoding="utf-8")  # cut short
    descriptor = fast_descriptor(model_path=str(model))
    request = campaign_request(descriptor, dataset, tmp_path, scenarios=(Scenario.OFFLINE, Scenario.SERVER))

    outcomes = execute_campaign(plan_campaign(request), Silent())

    tried = [outcome for outcome in outcomes if outcome.engine_did_not_start]
    assert [outcome.step.key for outcome in tried] == [
        f"llama3.1-8b/{s}/TEST06" for s in ("Offline", "Server")
    ]
    assert all("answers.json cannot be read as a demo model's answers" in (o.error or "") for o in tried)
    not_run = {outcome.step.key: outcome.error or "" for outcome in outcomes if outcome.not_run}
    assert sorted(not_run) == [
        f"llama3.1-8b/{s}/{m}" for s in ("Offline", "Server") for m in ("accuracy", "performance")
    ]
    assert all(
        f"failed to start for {key.rsplit('/', 1)[0]}/TEST06" in error for key, error in not_run.items()
    )
    events = read_events(tmp_path / "runs")
    assert [event.event for event in events].count("run-started") == 2
    finished = [event.status for event in events if event.event == "run-finished"]
    assert finished == ["refused", "not run", "not run"] * 2

    (model / "answers.json").unlink()  # the synthetic engine then answers without the demo model's file
    again = execute_campaign(plan_campaign(request), Silent())
    assert len(again) == 6 and all(outcome.valid and not outcome.reused for outcome in again)
