"""The live status line and the counters behind it."""

from __future__ import annotations

import io

from harness.progress import LiveLine, RunStats, Snapshot, percentile, status_line


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
