"""What a run has done so far, as the harness sees it: the live status line drawn from it on a terminal,
and progress.json in the run's folder for a run nobody watches.

Latencies here are measured from the moment LoadGen hands a sample to the harness; LoadGen's own
figures (from the scheduled time) are the ones that count and are read from its logs afterwards.
"""

from __future__ import annotations

import contextlib
import json
import math
import threading
import time
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self, TextIO

from pydantic import BaseModel, ValidationError

from submitter.fileformats.run_record import SteadyRecord
from submitter.fileio import CannotWrite, write_text_atomic

# Beside LoadGen's logs in the run's folder while its test runs; staging copies LoadGen's logs by name, so
# this never reaches a submission.
PROGRESS_FILE = "progress.json"
# Fewer answers than this give no steady rate: their middle half is a handful of completions.
STEADY_MIN_ANSWERS = 8


@dataclass(frozen=True)
class Snapshot:
    elapsed_s: float
    issued: int
    completed: int
    tokens: int
    p99_ttft_ms: float | None
    p99_tpot_ms: float | None
    steady: SteadyRecord | None = None

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def samples_per_second(self) -> float:
        return self.completed / self.elapsed_s if self.elapsed_s > 0 else 0.0


def percentile(values: list[float], share: float) -> float | None:
    """The nearest-rank percentile (`share` in 0..1), None without values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))]


def steady_rate(completed_at: Sequence[float], tokens_by: Sequence[int]) -> SteadyRecord | None:
    """The rate over the middle half of the answers so far (SteadyRecord): `completed_at[i]` is when the
    (i+1)-th answer completed, `tokens_by[i]` the tokens answered by then; None for too few answers."""
    count = len(completed_at)
    if count < STEADY_MIN_ANSWERS:
        return None
    first, last = math.ceil(count / 4) - 1, 3 * count // 4 - 1  # 0-based indexes of those answers
    seconds = completed_at[last] - completed_at[first]
    if seconds <= 0:
        return None
    samples, tokens = last - first, tokens_by[last] - tokens_by[first]
    return SteadyRecord(
        samples_per_second=round(samples / seconds, 3),
        tokens_per_second=round(tokens / seconds, 1),
        from_s=round(completed_at[first], 3),
        to_s=round(completed_at[last], 3),
        samples=samples,
    )


class RunStats:
    """Counters updated from LoadGen's thread and the engine's; every method is thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._began = time.monotonic()
        self._issued_at: dict[int, float] = {}
        self._first_at: dict[int, float] = {}
        self._ttft: list[float] = []
        self._tpot: list[float] = []
        # In the order answers complete: when (seconds since began) and the tokens answered by then.
        self._completed_at = array("d")
        self._tokens_by = array("q")
        self.issued = 0
        self.completed = 0
        self.tokens = 0
        self.short_outputs = 0

    def issued_samples(self, sample_ids: Iterable[int]) -> None:
        now = time.monotonic()
        with self._lock:
            for sample_id in sample_ids:
                self._issued_at[sample_id] = now
                self.issued += 1

    def first_token(self, sample_id: int) -> None:
        now = time.monotonic()
        with self._lock:
            self._first_at[sample_id] = now
            issued = self._issued_at.get(sample_id)
            if issued is not None:
                self._ttft.append(now - issued)

    def completed_sample(self, sample_id: int, n_tokens: int) -> None:
        with self._lock:
            now = time.monotonic()  # taken under the lock, so that completions stay in time order
            self.completed += 1
            self.tokens += n_tokens
            self._completed_at.append(now - self._began)
            self._tokens_by.append(self.tokens)
            self._issued_at.pop(sample_id, None)
            first = self._first_at.pop(sample_id, None)
            if n_tokens < 2:
                self.short_outputs += 1
            elif first is not None:
                self._tpot.append((now - first) / (n_tokens - 1))

    def elapsed_s(self) -> float:
        """Seconds since these stats began (just before LoadGen starts its test)."""
        return time.monotonic() - self._began

    def steady(self) -> SteadyRecord | None:
        with self._lock:
            return steady_rate(self._completed_at, self._tokens_by)

    def snapshot(self) -> Snapshot:
        with self._lock:
            ttft, tpot = list(self._ttft), list(self._tpot)
            issued, completed, tokens = self.issued, self.completed, self.tokens
            steady = steady_rate(self._completed_at, self._tokens_by)
        p99_ttft, p99_tpot = percentile(ttft, 0.99), percentile(tpot, 0.99)
        return Snapshot(
            elapsed_s=time.monotonic() - self._began,
            issued=issued,
            completed=completed,
            tokens=tokens,
            p99_ttft_ms=None if p99_ttft is None else p99_ttft * 1000,
            p99_tpot_ms=None if p99_tpot is None else p99_tpot * 1000,
            steady=steady,
        )


def status_line(snapshot: Snapshot, label: str) -> str:
    minutes, seconds = divmod(int(snapshot.elapsed_s), 60)
    parts = [
        label,
        f"{minutes:d}:{seconds:02d}",
        f"{snapshot.completed}/{snapshot.issued} samples",
        f"{snapshot.tokens_per_second:,.0f} tokens/s",
    ]
    if snapshot.p99_ttft_ms is not None:
        parts.append(f"p99 TTFT {snapshot.p99_ttft_ms:,.0f} ms")
    if snapshot.p99_tpot_ms is not None:
        parts.append(f"p99 TPOT {snapshot.p99_tpot_ms:.1f} ms")
    return "  ".join(parts)


class _EveryInterval:
    """Calls `_show` from a thread of its own as the block begins, every `interval_s` while it runs, and
    once more as it ends, so the last view shows the finished counts."""

    def __init__(self, stats: RunStats, interval_s: float, name: str) -> None:
        self._stats, self._interval = stats, interval_s
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._keep_showing, name=name, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()

    def _keep_showing(self) -> None:
        self._show()
        while not self._done.wait(self._interval):
            self._show()
        self._show()

    def _show(self) -> None:
        raise NotImplementedError


class LiveLine(_EveryInterval):
    """Redraws one status line on a terminal once a second until stopped."""

    def __init__(self, stats: RunStats, label: str, stream: TextIO, interval_s: float = 1.0) -> None:
        super().__init__(stats, interval_s, "live-line")
        self._label, self._stream = label, stream

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        self._stream.write("\n")
        self._stream.flush()

    def _show(self) -> None:
        self._stream.write("\r\x1b[K" + status_line(self._stats.snapshot(), self._label))
        self._stream.flush()


def progress_record(snapshot: Snapshot) -> dict[str, Any]:
    """What progress.json holds: the counters so far and the rates they give."""
    return {
        "elapsed_s": round(snapshot.elapsed_s, 1),
        "issued": snapshot.issued,
        "completed": snapshot.completed,
        "tokens": snapshot.tokens,
        "samples_per_second": round(snapshot.samples_per_second, 3),
        "tokens_per_second": round(snapshot.tokens_per_second, 1),
        "p99_ttft_ms": None if snapshot.p99_ttft_ms is None else round(snapshot.p99_ttft_ms, 1),
        "p99_tpot_ms": None if snapshot.p99_tpot_ms is None else round(snapshot.p99_tpot_ms, 2),
        "steady": snapshot.steady.model_dump() if snapshot.steady else None,
    }


class _ProgressSoFar(BaseModel):
    """The part of progress.json that says how far a test got."""

    elapsed_s: float
    issued: int
    completed: int


def progress_at_stop(run_dir: Path) -> str | None:
    """How far the test in `run_dir` got by its worker's last progress.json, for a run that ended without
    its worker's report (killed, crashed): e.g. "1,410 of 2,400 samples answered 180.1 s into LoadGen's
    test"; None where the worker wrote none (it stopped before LoadGen's test began) or it cannot be read."""
    try:
        so_far = _ProgressSoFar.model_validate_json((run_dir / PROGRESS_FILE).read_bytes())
    except (OSError, ValidationError):
        return None
    answered = f"{so_far.completed:,} of {so_far.issued:,} samples answered"
    return f"{answered} {so_far.elapsed_s:,} s into LoadGen's test"


class ProgressFile(_EveryInterval):
    """Writes `path` (progress.json) as LoadGen's test begins, every `interval_s` while it runs and once at
    its end, so that a run started detached (nohup, a batch job, a lent GPU host) can be polled: how many
    samples are done and how fast, long before LoadGen writes its summary. Written whole or not at all; a
    file system that refuses it costs the poller its view, never the run."""

    def __init__(self, stats: RunStats, path: Path, interval_s: float = 15.0) -> None:
        super().__init__(stats, interval_s, "progress-file")
        self._path = path

    def _show(self) -> None:
        record = progress_record(self._stats.snapshot())
        record["updated"] = datetime.now(UTC).isoformat(timespec="seconds")
        with contextlib.suppress(CannotWrite):
            write_text_atomic(self._path, json.dumps(record, indent=2) + "\n")
