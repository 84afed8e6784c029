"""One worker, one engine, several LoadGen tests: what tune-qps relies on to start a GPU engine once."""

from __future__ import annotations

import os
import signal
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
