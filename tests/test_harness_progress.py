"""The live status line and the counters behind it."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

from harness.progress import (
    LiveLine,
    ProgressFile,
    RunStats,
    Snapshot,
    percentile,
    progress_at_stop,
    progress_record,
    status_line,
    steady_rate,
)


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0.99) == 99.0
    assert percentile(values, 0.5) == 50.0
    assert percentile([], 0.99) is None


def test_status_line_shows_server_latencies_only_when_measured() -> None:
    offline = Snapshot(75, issued=100, completed=40, tokens=5120, p99_ttft_ms=None, p99_tpot_ms=None)
    assert status_line(offline, "Offline performance") == (
        "Offline performance  1:15  40/100 samples  68 tokens/s"
    )
    server = Snapshot(elapsed_s=10, issued=10, completed=5, tokens=640, p99_ttft_ms=1234.4, p99_tpot_ms=21.26)
    assert status_line(server, "Server").endswith("p99 TTFT 1,234 ms  p99 TPOT 21.3 ms")


def test_stats_count_samples_tokens_and_short_outputs() -> None:
    stats = RunStats()
    stats.issued_samples([1, 2])
    stats.first_token(1)
    stats.completed_sample(1, 128)
    stats.completed_sample(2, 1)
    snapshot = stats.snapshot()
    assert (snapshot.issued, snapshot.completed, snapshot.tokens) == (2, 2, 129)
    assert stats.short_outputs == 1
    assert snapshot.p99_ttft_ms is not None and snapshot.p99_tpot_ms is not None


def test_live_line_redraws_and_ends_with_a_newline() -> None:
    stream = io.StringIO()
    stats = RunStats()
    with LiveLine(stats, "Server performance", stream, interval_s=0.01):
        stats.issued_samples([7])
        stats.completed_sample(7, 128)
    text = stream.getvalue()
    assert text.startswith("\r\x1b[K") and text.endswith("\n")
    assert "1/1 samples" in text.rsplit("\r\x1b[K", 1)[-1]


def test_progress_record_gives_the_rates_of_the_counts() -> None:
    offline = Snapshot(80, issued=6396, completed=200, tokens=256_000, p99_ttft_ms=None, p99_tpot_ms=None)
    record = progress_record(offline)
    assert record["samples_per_second"] == 200 / 80
    assert record["tokens_per_second"] == 256_000 / 80
    assert (record["issued"], record["completed"], record["p99_ttft_ms"]) == (6396, 200, None)
    assert progress_record(Snapshot(0, 0, 0, 0, None, None))["samples_per_second"] == 0.0


def _completed_in(path: Path, expected: int) -> int | None:
    """The file's `completed` once it shows `expected`, or what it last showed after five seconds."""
    deadline = time.monotonic() + 5
    shown = None
    while time.monotonic() < deadline:
        if path.exists():
            shown = json.loads(path.read_text())["completed"]
            if shown == expected:
                break
        time.sleep(0.01)
    return shown


def test_progress_file_is_rewritten_while_the_test_runs_and_once_at_its_end(tmp_path: Path) -> None:
    path = tmp_path / "progress.json"
    stats = RunStats()
    with ProgressFile(stats, path, interval_s=0.01):
        for sample_id in range(3):
            stats.issued_samples([sample_id])
            stats.completed_sample(sample_id, 10)
            assert _completed_in(path, sample_id + 1) == sample_id + 1
        stats.issued_samples([3])
    final = json.loads(path.read_text())
    assert (final["issued"], final["completed"], final["tokens"]) == (4, 3, 30)
    assert final["updated"].endswith("+00:00")
    assert [p.name for p in tmp_path.iterdir()] == ["progress.json"]  # no temporary left beside it


def test_how_far_a_stopped_test_got_is_read_back_from_the_progress_file_it_wrote(tmp_path: Path) -> None:
    stats = RunStats()
    with ProgressFile(stats, tmp_path / "progress.json", interval_s=60):
        stats.issued_samples(range(2400))
        for sample_id in range(1410):
            stats.completed_sample(sample_id, 1)
    written = json.loads((tmp_path / "progress.json").read_text())
    assert progress_at_stop(tmp_path) == (
        f"1,410 of 2,400 samples answered {written['elapsed_s']:,} s into LoadGen's test"
    )
    (tmp_path / "progress.json").write_text('{"completed": "many"}')
    assert progress_at_stop(tmp_path) is None  # a file it cannot read says nothing, never fails the record
    assert progress_at_stop(tmp_path / "no-test-began") is None


def test_a_progress_file_that_cannot_be_written_never_stops_the_run(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the run's folder should be")
    stats = RunStats()
    with ProgressFile(stats, blocker / "progress.json", interval_s=0.01):
        stats.issued_samples([1])
        time.sleep(0.05)
    assert blocker.read_text() == "a file where the run's folder should be"


def test_the_steady_rate_leaves_out_the_engine_filling_up_and_draining() -> None:
    """20 answers of 100 tokens: the first batch of 4 at 10 s, then one every 0.5 s, then a slow drain. The
    middle half runs from the 5th answer (10.5 s) to the 15th (15.5 s): 10 answers in 5 s, where the whole
    test's 20 in 40 s would say 0.5 a second."""
    completed_at = [10.0] * 4 + [10 + 0.5 * (k - 4) for k in range(5, 17)] + [20.0, 25.0, 30.0, 40.0]
    tokens_by = [100 * k for k in range(1, 21)]
    steady = steady_rate(completed_at, tokens_by)
    assert steady is not None
    assert (steady.from_s, steady.to_s, steady.samples) == (10.5, 15.5, 10)
    assert (steady.samples_per_second, steady.tokens_per_second) == (2.0, 200.0)


def test_too_few_answers_or_no_time_between_them_give_no_steady_rate() -> None:
    assert steady_rate([float(k) for k in range(7)], list(range(7))) is None
    assert steady_rate([5.0] * 12, [10 * k for k in range(1, 13)]) is None


def test_run_stats_keep_the_steady_rate_of_their_answers_in_the_progress_record() -> None:
    stats = RunStats()
    for sample_id in range(12):
        stats.issued_samples([sample_id])
        time.sleep(0.002)
        stats.completed_sample(sample_id, 10)
    steady = stats.steady()
    assert steady is not None and steady.samples == 6  # the 3rd to the 9th answer
    assert 0 < steady.from_s < steady.to_s
    assert abs(steady.tokens_per_second - 10 * steady.samples_per_second) <= 0.06  # 10 tokens an answer
    assert progress_record(stats.snapshot())["steady"] == steady.model_dump()
