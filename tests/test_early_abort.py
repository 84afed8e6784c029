"""Early abort: a Server or Interactive run stops once LoadGen could no longer judge it VALID, never before.

The watch is checked against LoadGen's own percentile, computed here from sorted latencies; the bound on
the queries a run issues against a simulation of LoadGen's schedule and against the real LoadGen; and
whole runs on the synthetic engine, overloaded and not, through the runner, `submitter run` and tune-qps.
"""

from __future__ import annotations

import dataclasses
import io
import itertools
import json
import math
import random
import subprocess
import time
from pathlib import Path

import pytest
from conftest import run_cli, write_json
from harness_helpers import detail_records, fast_descriptor, short_run, write_dataset

from harness.early_abort import LatencyWatch, Limits, Schedule, allowed_over
from harness.engine_session import EngineSession, _group_runs
from harness.loadgen_settings import Smoke
from harness.outcome import mode_problems
from harness.runner import RunRequest, early_abort_limits
from harness.tune import Trial, TuneRequest, next_confirmation_qps, tune_qps, worth_aborting
from harness.worker import Reports, loadgen_limits, loadgen_schedule
from submitter.cli.tune import _row
from submitter.fileformats.run_mode import Mode
from submitter.fileformats.run_record import LoadGenOutcome, WorkerResult
from submitter.rounds.models import Scenario
from submitter.rounds.registry import load_round
from submitter.systems.descriptor import SystemDescriptor

# 64 sequences at 16000 tokens/s and 128-token answers: the engine completes 125 queries a second.
CAPACITY_QPS = 16000 / 128


def limited_engine(target_qps: float) -> dict:
    descriptor = fast_descriptor(
        engine_args={"tokens_per_second": 16000, "max_num_seqs": 64, "time_to_first_token_ms": 5}
    )
    for scenario in ("Server", "Interactive"):
        descriptor["benchmarks"]["llama3.1-8b"]["scenarios"][scenario]["user_conf"]["target_qps"] = target_qps
    return descriptor


def loadgen_p99_under(latencies: list[float], limit: float, queries: int, percentile: float = 0.99) -> bool:
    """LoadGen's verdict on `queries` latencies of which these are some and the rest are 0 (as good as the
    rest can be): the sorted latencies' element at int(queries * percentile) is not over the limit."""
    everything = sorted([*latencies, *[0.0] * (queries - len(latencies))])
    return everything[int(queries * percentile)] <= limit


# --- the allowance and the watch, against LoadGen's percentile ----------------------------------------


def test_the_allowance_is_what_loadgens_percentile_index_leaves_over_the_limit() -> None:
    draw = random.Random(3)
    for queries in [*range(1, 400), *draw.sample(range(400, 60_000), 200)]:
        allowed = allowed_over(queries, 0.99)
        # That many over the limit and the p99 is still under; one more and it is over.
        assert loadgen_p99_under([2.0] * allowed, 1.0, queries)
        assert not loadgen_p99_under([2.0] * (allowed + 1), 1.0, queries)
        assert allowed <= allowed_over(queries + 1, 0.99)  # more queries never allow fewer over


def _answer(watch: LatencyWatch, sample_id: int, start: float, ttft: float, tpot: float, tokens: int) -> None:
    """One query, issued, answered and completed before the next (no query waits in between)."""
    watch.issued([sample_id], start)
    first = start + ttft
    watch.first_token(sample_id, first, first)
    watch.completed(sample_id, tokens, first + tpot * (tokens - 1))


@pytest.mark.parametrize("kind", ["ttft", "tpot"])
def test_the_watch_trips_exactly_when_the_p99_over_every_query_can_no_longer_be_under(kind: str) -> None:
    limits = Limits(ttft_ms=2000, tpot_ms=100)
    limit_s = 2.0 if kind == "ttft" else 0.1
    draw = random.Random(11)
    for max_queries in (100, 512, 1_000, 3_975):
        trips: list[str] = []
        watch = LatencyWatch(limits, max_queries, trips.append, tolerance=0)
        seen: list[float] = []
        for sample_id in range(max_queries):
            # Mostly under the limit, some over it; never within the clock tolerance of it.
            value = limit_s * (draw.uniform(1.05, 3) if draw.random() < 0.03 else draw.uniform(0.1, 0.95))
            ttft, tpot = (value, 0.01) if kind == "ttft" else (0.5, value)
            _answer(watch, sample_id, start=sample_id * 1000.0, ttft=ttft, tpot=tpot, tokens=128)
            seen.append(value)
            still_possible = loadgen_p99_under(seen, limit_s, max_queries)
            assert watch.tripped is not still_possible, (max_queries, sample_id)
            if watch.tripped:
                break
        assert len(trips) == (1 if watch.tripped else 0)


def test_queries_still_waiting_for_a_first_token_count_once_they_are_over() -> None:
    trips: list[str] = []
    watch = LatencyWatch(Limits(ttft_ms=2000, tpot_ms=100), 1_000, trips.append, tolerance=0)
    allowed = allowed_over(1_000, 0.99)
    watch.issued(range(allowed + 1), at=0.0)  # an engine that answers none of them
    watch.issued([10_000], at=1.9)
    assert not watch.tripped  # 1.9 s is under the limit: every one of them may still be in time
    watch.issued([10_001], at=2.1)
    assert watch.tripped and len(trips) == 1
    assert watch.over(2.1)["ttft"] == allowed + 1
    assert f"{allowed + 1} of the {allowed + 3} queries issued so far had a TTFT over 2,000 ms" in trips[0]
    assert f"({allowed + 1} of them still waiting for a first token)" in trips[0]
    assert f"more than the {allowed} that 1,000 queries may have over their p99" in trips[0]
    watch.issued([10_002], at=9.0)  # once is enough
    assert len(trips) == 1


def test_the_whole_answers_latency_is_watched_where_it_is_the_limit() -> None:
    trips: list[str] = []
    watch = LatencyWatch(Limits(latency_ms=12_000), 300, trips.append, tolerance=0)
    allowed = allowed_over(300, 0.99)  # 2
    for sample_id in range(allowed + 1):
        watch.issued([sample_id], at=sample_id * 100.0)
        watch.completed(sample_id, tokens=1, at=sample_id * 100.0 + (11.9 if sample_id == allowed else 13))
    assert not watch.tripped  # two over, the third in time
    watch.issued([99], at=1_000.0)
    watch.completed(99, tokens=1, at=1_012.5)
    assert watch.tripped and "a latency over 12,000 ms" in trips[0]


def test_a_query_barely_over_the_limit_is_left_to_the_clocks_tolerance() -> None:
    trips: list[str] = []
    watch = LatencyWatch(Limits(ttft_ms=2000, tpot_ms=100), 100, trips.append)  # 1 %, and 0 allowed
    _answer(watch, 1, start=0.0, ttft=2.015, tpot=0.1005, tokens=10)
    _answer(watch, 2, start=100.0, ttft=0.1, tpot=0.001, tokens=1)  # no TPOT with one token
    watch.failed(3)
    assert not watch.tripped
    _answer(watch, 4, start=200.0, ttft=2.03, tpot=0.01, tokens=10)
    assert watch.tripped


def test_the_loosest_of_the_rounds_and_loadgens_limits_is_watched() -> None:
    rounds = Limits(ttft_ms=2000, tpot_ms=100, latency_ms=20_000)
    loaded = Limits(ttft_ms=2500, tpot_ms=80, percentile=0.99)
    assert rounds.loosest(loaded) == Limits(ttft_ms=2500, tpot_ms=100, percentile=0.99)  # LoadGen's kinds
    assert Limits(latency_ms=12_000).loosest(Limits(latency_ms=12_000)).watched() == {"latency": 12_000}


# --- how many queries a run issues: the bound against LoadGen's schedule --------------------------------


def _simulated_queries(schedule: Schedule, draw: random.Random) -> tuple[int, int]:
    """GenerateQueries' loop (loadgen.cc) for a Server run: (queries generated, arrivals inside the
    minimum duration)."""
    min_queries, loaded = schedule.min_query_count, schedule.sample_set
    if schedule.equal_issue and min_queries % loaded:
        min_queries += loaded - min_queries % loaded
    queries, timestamp, previous, inside = 0, 0.0, 0.0, 0
    while previous < schedule.min_duration_s or queries < min_queries:
        queries += 1
        previous = timestamp
        inside += 0 < timestamp < schedule.min_duration_s
        timestamp += draw.expovariate(schedule.target_qps)
        if schedule.equal_issue and queries >= min_queries and previous < schedule.min_duration_s:
            min_queries += loaded
    if schedule.max_query_count:
        queries = min(queries, schedule.max_query_count)
    return queries, inside


def test_the_query_bound_holds_for_loadgens_schedule() -> None:
    draw = random.Random(5)
    for _ in range(300):
        schedule = Schedule(
            target_qps=draw.choice([0.5, 3, 40, 250]),
            min_duration_s=draw.choice([0, 1, 10, 60]),
            min_query_count=draw.choice([1, 100, 512, 2_000]),
            max_query_count=draw.choice([0, 0, 0, 700]),
            sample_set=draw.choice([1, 64, 1_024]),
            equal_issue=draw.random() < 0.5,
        )
        queries, inside = _simulated_queries(schedule, draw)
        assert queries <= schedule.max_queries()
        assert queries == schedule._count(inside), schedule  # the closed form, given the same arrivals


def test_loadgens_settings_become_the_schedule_and_the_limits() -> None:
    import mlperf_loadgen as lg

    settings = lg.TestSettings()
    settings.server_target_qps, settings.min_duration_ms = 10.0, 600_000
    settings.min_query_count, settings.max_query_count = 100, 0
    settings.sample_concatenate_permutation, settings.performance_sample_count_override = True, 13_368
    settings.use_token_latencies = True
    settings.ttft_latency, settings.tpot_latency = 2_000_000_000, 100_000_000  # nanoseconds
    settings.server_target_latency_percentile = 0.99
    schedule = loadgen_schedule(settings, samples=13_368)
    assert schedule == Schedule(10.0, 600.0, 100, 0, 13_368, True)
    # 6,000 arrivals expected, rounded up to whole sets of the 13,368 samples: one set, 22 minutes.
    assert schedule.max_queries() == schedule.expected_queries() == 13_368
    assert schedule.seconds() == pytest.approx(1_336.8)
    assert loadgen_limits(settings) == Limits(ttft_ms=2000, tpot_ms=100, percentile=0.99)
    assert loadgen_schedule(settings, samples=64).sample_set == 64  # capped at the QSL's samples
    settings.use_token_latencies, settings.server_target_latency_ns = False, 12_000_000_000
    assert loadgen_limits(settings) == Limits(latency_ms=12_000, percentile=0.99)


@pytest.mark.slow
def test_the_bound_holds_for_what_the_real_loadgen_issues(tmp_path: Path) -> None:
    dataset = write_dataset(tmp_path / "data.json")
    trials = [
        Smoke(samples=64, min_duration_ms=2000, server_min_queries=1),  # the duration decides
        Smoke(samples=64, min_duration_ms=200, server_min_queries=700),  # the minimum count decides
        Smoke(samples=50, min_duration_ms=1500, server_min_queries=1),  # sets of 50
    ]
    with EngineSession() as session:
        runs = [
            short_run(fast_descriptor(), Scenario.SERVER, Mode.PERFORMANCE, dataset, tmp_path, smoke, session)
            for smoke in trials
        ]
    for smoke, finished in zip(trials, runs, strict=True):
        harness = finished.record.harness
        assert harness is not None and harness.early_abort is not None and harness.aborted is None
        issued = harness.samples_issued
        log = detail_records(finished.run_dir)
        assert log["effective_sample_concatenate_permutation"] is True  # llama3.1-8b's equal-issue mode
        assert issued == log["result_query_count"]
        # Whole sets of samples, at least the minimum, at most the bound the worker computed.
        assert issued % smoke.samples == 0 and issued >= smoke.server_min_queries
        assert issued <= harness.early_abort.max_queries
        assert harness.early_abort.allowed_over == allowed_over(harness.early_abort.max_queries, 0.99)
    # 200 queries a second for 2 s: 400 expected, so 448 (7 sets of 64) or a set either side.
    assert runs[0].record.harness and runs[0].record.harness.samples_issued in (384, 448, 512)


# --- what a run is watched for ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("benchmark", "scenario", "mode", "expected"),
    [
        ("llama3.1-8b", Scenario.SERVER, Mode.PERFORMANCE, Limits(ttft_ms=2000, tpot_ms=100)),
        ("llama3.1-8b", Scenario.INTERACTIVE, Mode.PERFORMANCE, Limits(ttft_ms=500, tpot_ms=30)),
        ("llama3.1-8b", Scenario.SERVER, Mode.ACCURACY, None),  # every answer must be logged
        ("llama3.1-8b", Scenario.SERVER, Mode("TEST06"), None),
        ("llama3.1-8b", Scenario.OFFLINE, Mode.PERFORMANCE, None),
        ("qwen3-vl-235b-a22b", Scenario.SERVER, Mode.PERFORMANCE, Limits(latency_ms=12_000)),
    ],
)
def test_only_server_and_interactive_performance_runs_are_watched(
    benchmark: str, scenario: Scenario, mode: Mode, expected: Limits | None
) -> None:
    request = RunRequest(SystemDescriptor.model_validate(fast_descriptor()), benchmark, scenario, mode)
    assert early_abort_limits(request, load_round("v6.1").benchmark(benchmark)) == expected


def test_a_tests_line_is_written_once_whoever_writes_it() -> None:
    stream = io.StringIO()
    reports = Reports(stream)
    reports.next_test()
    assert reports.send(4, WorkerResult(aborted="aborted after 3.0 s: ..."))
    assert not reports.send(0, WorkerResult())  # LoadGen finished after the abort: no second line
    reports.next_test()
    assert reports.send(0, WorkerResult())
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [line["status"] for line in lines] == [4, 0]


def test_a_detail_log_without_a_verdict_is_named_not_misread() -> None:
    assert mode_problems(Mode.PERFORMANCE, LoadGenOutcome()) == [
        "the detail log holds no verdict: LoadGen did not finish the run"
    ]


# --- whole runs -------------------------------------------------------------------------------------------


def _systems(tmp_path: Path, descriptor: dict) -> dict[str, str]:
    folder = tmp_path / "systems"
    folder.mkdir(exist_ok=True)
    write_json(folder / f"{descriptor['id']}.json", descriptor)
    return {"SUBMITTER_SYSTEMS_PATH": str(folder)}


def _ledger(runs: Path) -> list[dict]:
    return [json.loads(line) for line in (runs / "ledger.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_an_overloaded_server_run_stops_early_and_an_unwatched_one_runs_to_invalid(tmp_path: Path) -> None:
    # Twice the engine's capacity: the queue, and so every TTFT, grows by a second each second, so the
    # 2 s limit is passed for good after about 2 s of a 10-second schedule.
    env = _systems(tmp_path, limited_engine(2 * CAPACITY_QPS))
    write_dataset(tmp_path / "data.json")
    command = (
        "run", "--system", "fast_cpu", "--scenario", "Server", "--mode", "performance",
        "--dataset", "data.json", "--smoke", "--smoke-samples", "64", "--json",
    )  # fmt: skip
    watched = run_cli(*command, "--runs-dir", "watched", cwd=tmp_path, env=env)
    assert watched.returncode == 1, watched.stderr
    record = json.loads(watched.stdout)
    reason = record["problems"][0]
    assert record["status"] == "aborted" and record["valid"] is False and not record["submittable"]
    assert reason.startswith("aborted after ") and reason.endswith("VALID is impossible")
    assert "had a TTFT over 2,000 ms" in reason
    assert record["not_submittable"][-1] == "stopped early by the harness: VALID was impossible (early abort)"
    harness = record["harness"]
    assert harness["aborted"] == reason and harness["samples_issued"] < 2_500 / 2  # stopped in the first half
    assert harness["early_abort"]["saved_s"] > 0
    assert harness["early_abort"]["schedule_s"] == pytest.approx(10, abs=0.5)
    assert "ABORTED, VALID was impossible; stopped after" in watched.stderr and "s saved" in watched.stderr
    assert reason in watched.stderr and "Traceback" not in watched.stderr
    finished = [event for event in _ledger(tmp_path / "watched") if event["event"] == "run-finished"]
    assert [(e["status"], e["valid"], e["detail"]) for e in finished] == [("aborted", False, reason)]

    unwatched = run_cli(*command, "--no-early-abort", "--runs-dir", "unwatched", cwd=tmp_path, env=env)
    assert unwatched.returncode == 1, unwatched.stderr
    record = json.loads(unwatched.stdout)
    assert record["status"] == "completed" and record["harness"]["aborted"] is None
    assert record["harness"]["early_abort"] is None
    assert record["loadgen"]["outcome"]["validity"] == "INVALID"
    # It issued the whole schedule, many times what the watched run got to.
    assert record["harness"]["samples_issued"] >= 2 * harness["samples_issued"]


@pytest.mark.slow
def test_a_server_run_under_capacity_is_watched_and_not_stopped(tmp_path: Path) -> None:
    finished = short_run(
        limited_engine(0.6 * CAPACITY_QPS),
        Scenario.SERVER,
        Mode.PERFORMANCE,
        write_dataset(tmp_path / "data.json"),
        tmp_path / "runs",
        Smoke(samples=64, min_duration_ms=3000, server_min_queries=512),  # early stopping needs ~460
    )
    record = finished.record
    assert record.status == "completed" and record.valid, record.problems
    assert record.harness is not None and record.harness.aborted is None
    watched = record.harness.early_abort
    assert watched is not None and watched.ttft_ms == 2000 and watched.aborted_after_s is None
    assert record.harness.samples_issued <= watched.max_queries


@pytest.mark.slow
def test_an_overloaded_confirmation_stops_early_and_steps_down_below_what_the_engine_completed(
    tmp_path: Path,
) -> None:
    # At 1.5 times capacity a 2-second trial ends before its queue passes the 2 s TTFT limit (VALID); a
    # 10-second confirmation passes it and stops there, and what it completed until then says where the
    # next confirmation goes (test_tune has the same search with LoadGen judging the whole run).
    overloaded = 1.5 * CAPACITY_QPS
    request = TuneRequest(
        system=SystemDescriptor.model_validate(limited_engine(overloaded)),
        scenario=Scenario.SERVER,
        start_qps=overloaded,
        trial=Smoke(samples=64, min_duration_ms=2000, server_min_queries=512),
        confirm=Smoke(samples=64, min_duration_ms=10_000, server_min_queries=512),
        max_trials=1,
        precision=0.05,
        dataset=write_dataset(tmp_path / "data.json"),
        runs_root=tmp_path / "runs",
    )
    result = tune_qps(request, lambda trial: None)
    search, failed, *stepped_down = result.trials
    assert search.valid and not search.aborted
    assert failed.confirmation and not failed.valid and failed.aborted
    assert "VALID is impossible" in (failed.why_invalid or "") and failed.tokens_per_second is None
    assert failed.seconds is not None and failed.seconds < 10 and (failed.saved_s or 0) > 0
    assert _row(failed)[2] == f"INVALID (aborted at {failed.seconds:,.0f} s)"
    assert failed.completed_qps is not None and failed.completed_qps < 1.02 * CAPACITY_QPS
    # Each confirmation steps down from what the one before completed (after an abort, at most four
    # precisions at once: 187.5 to 142.5, which LoadGen judges whole), until one holds (under capacity).
    confirmations = [failed, *stepped_down]
    for before, after in itertools.pairwise(confirmations):
        assert not before.valid and after.qps == round(next_confirmation_qps(before, 0.05), 3)
    assert stepped_down[0].qps == round(failed.qps * (1 - 4 * 0.05) * 0.95, 3)
    confirmed = confirmations[-1]
    assert confirmed.valid and result.best is confirmed and confirmed.qps < CAPACITY_QPS
    # The aborted run ended its worker: the next confirmation started the engine again.
    assert stepped_down[0].engine_start_s is not None
    record = json.loads((failed.run_dir / "run.json").read_text())
    assert record["status"] == "aborted" and record["harness"]["aborted"] == failed.why_invalid


def test_a_search_trial_is_watched_only_while_an_engine_start_costs_less_than_it_can_save() -> None:
    trial = Smoke(samples=1024, min_duration_ms=60_000)
    assert worth_aborting(trial, None) and worth_aborting(None, 500.0)  # full length: always
    assert worth_aborting(trial, 45.0) and not worth_aborting(trial, 150.0)


def test_an_aborted_confirmation_steps_down_from_the_rate_it_completed_but_not_far() -> None:
    aborted = Trial(
        qps=40.0, confirmation=True, full_length=True, valid=False, run_dir=Path("run"),
        tokens_per_second=None, completed_qps=38.5, p99_ttft_ms=None, p99_tpot_ms=None,
        why_invalid="aborted after 73.4 s: ...", aborted=True, seconds=73.4, saved_s=527.0,
    )  # fmt: skip
    assert next_confirmation_qps(aborted, 0.02) == pytest.approx(38.5 * 0.98)
    # Stopped early, it had completed only part of what the engine holds (answers still in flight):
    # at most four precisions down, then one more.
    early = dataclasses.replace(aborted, completed_qps=20.0, seconds=11.0)
    assert next_confirmation_qps(early, 0.02) == pytest.approx(40 * (1 - 4 * 0.02) * 0.98)
    # A run LoadGen judged whole keeps its completed rate, however low.
    judged = dataclasses.replace(aborted, aborted=False, completed_qps=20.0)
    assert next_confirmation_qps(judged, 0.02) == pytest.approx(20 * 0.98)
    assert math.isclose(float(_row(aborted)[3].replace(",", "")), 38.5)
    assert _row(aborted)[2] == "INVALID (aborted at 73 s)"


def test_stopping_a_worker_waits_for_every_process_of_its_group(tmp_path: Path) -> None:
    # An engine's own processes (vLLM's engine core) share the worker's group and hold the GPU's memory
    # until they are gone; the next test's engine starts only then.
    session = EngineSession()
    # The worker ends at SIGTERM at once; its child ignores it and lingers for a second.
    linger = "(trap '' TERM; exec sleep 1) & exec sleep 60"
    worker = subprocess.Popen(["sh", "-c", linger], start_new_session=True)
    time.sleep(0.2)  # both started
    session._worker = worker
    session._stop()
    assert worker.returncode is not None and not _group_runs(worker.pid)


def test_run_all_passes_no_early_abort_to_every_run(tmp_path: Path) -> None:
    from harness.run_all import CampaignRequest, plan_campaign

    request = CampaignRequest(
        system=SystemDescriptor.model_validate(fast_descriptor()),
        scenarios=(Scenario.SERVER,),
        dataset=write_dataset(tmp_path / "data.json"),
        smoke=Smoke(samples=64),
        runs_root=tmp_path / "runs",
    )
    watched = {run.step.mode: run.plan.early_abort for run in plan_campaign(request).runs}
    assert watched == {
        Mode("TEST06"): None,
        Mode.ACCURACY: None,
        Mode.PERFORMANCE: Limits(ttft_ms=2000, tpot_ms=100),
    }
    unwatched = plan_campaign(dataclasses.replace(request, early_abort=False))
    assert [run.plan.early_abort for run in unwatched.runs] == [None, None, None]
