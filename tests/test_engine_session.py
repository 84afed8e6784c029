"""One worker, one engine, several LoadGen tests: what tune-qps relies on to start a GPU engine once."""

from __future__ import annotations

import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import msgspec
import pytest
from harness_helpers import detail_records, fast_descriptor, short_run, write_dataset

from harness.engine_session import EngineSession
from harness.loadgen_settings import Smoke
from submitter.fileformats.run_mode import Mode
from submitter.fileformats.run_record import RunRecord
from submitter.rounds.models import Scenario
from submitter.rounds.registry import load_round

LONGER = Smoke(samples=32, min_duration_ms=1500, server_min_queries=600)
SHORT = Smoke(samples=64, min_duration_ms=1000, server_min_queries=512)


def _harness(record: RunRecord) -> tuple[int, float | None]:
    assert record.harness is not None
    return record.harness.engine_test_number, record.harness.engine_start_s


@pytest.mark.slow
def test_tests_in_one_session_share_the_engine_and_keep_their_own_settings(tmp_path: Path) -> None:
    dataset = write_dataset(tmp_path / "data.json")
    descriptor = fast_descriptor()
    seeds = msgspec.structs.asdict(load_round("v6.1").loadgen.seeds)
    with EngineSession() as session:
        first = short_run(descriptor, Scenario.SERVER, Mode.PERFORMANCE, dataset, tmp_path, LONGER, session)
        second = short_run(descriptor, Scenario.SERVER, Mode.PERFORMANCE, dataset, tmp_path, SHORT, session)
        accuracy = short_run(descriptor, Scenario.SERVER, Mode.ACCURACY, dataset, tmp_path, SHORT, session)
    for finished in (first, second, accuracy):
        assert finished.record.valid, finished.record.problems
    assert [_harness(f.record)[0] for f in (first, second, accuracy)] == [1, 2, 3]
    assert _harness(first.record)[1] is not None and _harness(second.record)[1] is None

    # Each test ran with its own overrides and mode, not the previous test's, and with the round's seeds.
    first_log, second_log = detail_records(first.run_dir), detail_records(second.run_dir)
    assert first_log["effective_min_duration_ms"] == 1500 and first_log["effective_min_query_count"] == 600
    assert second_log["effective_min_duration_ms"] == 1000 and second_log["effective_min_query_count"] == 512
    assert second_log["effective_performance_sample_count"] == 64
    assert detail_records(accuracy.run_dir)["effective_test_mode"] == "AccuracyOnly"
    for finished in (first, second, accuracy):
        log = detail_records(finished.run_dir)
        assert {name: log[f"effective_{name}"] for name in seeds} == seeds
        # A second FromConfig in a process logs "Multiple conf files are used": the worker never makes one.
        assert '"is_error": true' not in (finished.run_dir / "mlperf_log_detail.txt").read_text()


@pytest.mark.slow
def test_a_different_rate_shares_the_engine_and_a_different_scenario_does_not(tmp_path: Path) -> None:
    dataset = write_dataset(tmp_path / "data.json")
    slower = fast_descriptor()
    slower["benchmarks"]["llama3.1-8b"]["scenarios"]["Server"]["user_conf"]["target_qps"] = 150
    with EngineSession() as session:
        server = short_run(
            fast_descriptor(), Scenario.SERVER, Mode.PERFORMANCE, dataset, tmp_path, SHORT, session
        )
        slower_server = short_run(
            slower, Scenario.SERVER, Mode.PERFORMANCE, dataset, tmp_path, SHORT, session
        )
        offline = short_run(
            fast_descriptor(), Scenario.OFFLINE, Mode.PERFORMANCE, dataset, tmp_path, SHORT, session
        )
    assert [_harness(f.record)[0] for f in (server, slower_server, offline)] == [1, 2, 1]
    assert detail_records(server.run_dir)["effective_target_qps"] == 200
    assert detail_records(slower_server.run_dir)["effective_target_qps"] == 150
    assert all(f.record.valid for f in (server, slower_server, offline))


def test_a_worker_that_dies_is_replaced_by_the_next_test(tmp_path: Path) -> None:
    dataset = write_dataset(tmp_path / "data.json")
    descriptor = fast_descriptor()
    with EngineSession() as session:
        first = short_run(descriptor, Scenario.OFFLINE, Mode.PERFORMANCE, dataset, tmp_path, SHORT, session)
        assert session._worker is not None
        os.killpg(session._worker.pid, signal.SIGKILL)  # as the kernel's out-of-memory killer would
        died = short_run(descriptor, Scenario.OFFLINE, Mode.PERFORMANCE, dataset, tmp_path, SHORT, session)
        again = short_run(descriptor, Scenario.OFFLINE, Mode.PERFORMANCE, dataset, tmp_path, SHORT, session)
    assert first.record.valid and again.record.valid
    assert died.record.status == "failed" and not died.record.valid
    assert died.record.exit_status == -signal.SIGKILL
    assert _harness(again.record)[0] == 1


def test_a_worker_killed_while_writing_its_progress_leaves_no_temporary(tmp_path: Path) -> None:
    """A kill can land while the worker's progress thread writes progress.json; what it leaves is removed
    when the worker is stopped, and the run's own files stay."""
    dataset = write_dataset(tmp_path / "data.json")
    long_server = Smoke(samples=64, min_duration_ms=60_000, server_min_queries=100)
    with EngineSession() as session, ThreadPoolExecutor(1) as pool:
        running = pool.submit(
            short_run,
            fast_descriptor(),
            Scenario.SERVER,
            Mode.PERFORMANCE,
            dataset,
            tmp_path,
            long_server,
            session,
        )
        deadline = time.monotonic() + 60
        while not (progress := list(tmp_path.rglob("progress.json"))) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert progress and session._worker is not None
        left = progress[0].parent / f".progress.json.{session._worker.pid}-abcd1234.tmp"
        left.write_text("{")  # as the writer had it when the kill came
        os.killpg(session._worker.pid, signal.SIGKILL)
        died = running.result(timeout=60)
    assert died.record.status == "failed"
    assert not left.exists()
    assert progress[0].exists() and (progress[0].parent / "mlperf_log_detail.txt").exists()


def test_run_all_starts_one_engine_per_scenario_and_the_ledger_names_who_shared_it(tmp_path: Path) -> None:
    from harness.ledger import read_events
    from harness.run_all import CampaignRequest, execute_campaign, plan_campaign
    from submitter.systems.descriptor import SystemDescriptor

    class Quiet:
        def starting(self, *args: object) -> None:
            pass

        def finished(self, *args: object) -> None:
            pass

    dataset = write_dataset(tmp_path / "data.json")
    request = CampaignRequest(
        system=SystemDescriptor.model_validate(fast_descriptor()),
        scenarios=(Scenario.OFFLINE, Scenario.SERVER),
        dataset=dataset,
        smoke=SHORT,
        runs_root=tmp_path / "runs",
    )
    outcomes = execute_campaign(plan_campaign(request), Quiet())
    assert all(outcome.valid for outcome in outcomes), [o.record.problems for o in outcomes if o.record]
    by_scenario: dict[str, list[RunRecord]] = {}
    for outcome in outcomes:
        assert outcome.record is not None
        by_scenario.setdefault(outcome.step.scenario, []).append(outcome.record)
    for records in by_scenario.values():  # TEST06, accuracy, performance
        first_run = f"{records[0].system}/{records[0].benchmark}/{records[0].scenario}/TEST06/"
        harness = [record.harness for record in records]
        assert [h.engine_test_number for h in harness if h] == [1, 2, 3]
        assert [h.engine_start_s is not None for h in harness if h] == [True, False, False]
        assert len({h.engine_started_by for h in harness if h}) == 1
        assert harness[0] is not None and (harness[0].engine_started_by or "").startswith(first_run)
    offline, server = (by_scenario[s][0].harness for s in (Scenario.OFFLINE, Scenario.SERVER))
    assert offline and server and offline.engine_started_by != server.engine_started_by
    # The run log says which runs shared an engine.
    finished = [event for event in read_events(tmp_path / "runs") if event.event == "run-finished"]
    assert [(event.engine or "").split(" ")[0] for event in finished] == ["started", "kept", "kept"] * 2
    assert finished[2].engine == f"kept from {finished[0].run_dir}, test 3"


def test_one_engine_serves_runs_with_their_own_answer_lengths(tmp_path: Path) -> None:
    """An accuracy run may generate longer answers than a performance run (gpt-oss-120b): the engine,
    here two replica processes, takes each run's sampling instead of being started again."""
    import dataclasses

    from harness.runner import RunRequest, execute, plan_run
    from submitter.systems.descriptor import SystemDescriptor

    dataset = write_dataset(tmp_path / "data.json")
    request = RunRequest(
        system=SystemDescriptor.model_validate(fast_descriptor(replicas=2)),
        benchmark="llama3.1-8b",
        scenario=Scenario.OFFLINE,
        mode=Mode.PERFORMANCE,
        dataset=dataset,
        smoke=SHORT,
        runs_root=tmp_path / "runs",
    )
    plan = plan_run(request)
    generation = plan.engine.generation.model_copy(update={"max_tokens": 32})
    shorter = dataclasses.replace(plan, engine=plan.engine.model_copy(update={"generation": generation}))
    with EngineSession() as session:
        runs = [execute(each, session).record for each in (plan, shorter, plan)]
    assert all(record.valid for record in runs), [record.problems for record in runs]
    harness = [record.harness for record in runs]
    assert [h.engine_test_number for h in harness if h] == [1, 2, 3]
    assert [h.tokens // h.samples_completed for h in harness if h] == [128, 32, 128]


def test_the_engine_s_log_is_kept_where_the_engine_started(tmp_path: Path) -> None:
    """What the worker and its engine print on stdout goes to engine.log in the run that started the engine;
    the runs that kept it name that run and write no log of their own."""
    dataset = write_dataset(tmp_path / "data.json")
    descriptor = fast_descriptor()
    with EngineSession() as session:
        first = short_run(descriptor, Scenario.OFFLINE, Mode.PERFORMANCE, dataset, tmp_path, SHORT, session)
        kept = short_run(descriptor, Scenario.OFFLINE, Mode.ACCURACY, dataset, tmp_path, SHORT, session)
    log = (first.run_dir / "engine.log").read_text(encoding="utf-8")
    assert log.count("synthetic engine: ") == 1
    assert not (kept.run_dir / "engine.log").exists()
    assert kept.record.harness is not None and first.record.harness is not None
    assert kept.record.harness.engine_started_by == first.record.harness.engine_started_by
    assert first.run_dir.as_posix().endswith(first.record.harness.engine_started_by or "-")
