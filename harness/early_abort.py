"""Early abort: stop a Server or Interactive run as soon as LoadGen can no longer judge it VALID.

A Server run issues on a Poisson schedule for its whole minimum duration (ten minutes at full length)
whatever the engine does, so an engine that has fallen behind spends the rest of it on a run that is
already lost. LoadGen judges p99 latencies over every query of the run: it sorts them and takes the one
at index int(n * 0.99) (results.cc), so the run may have at most n - 1 - int(0.99 n) queries over a
limit. This module counts queries that are certainly over a limit and says when that count exceeds
what the whole run may have, with n an upper bound of the queries LoadGen's schedule issues (the
allowance only grows with n). LoadGen's early-stopping estimate is stricter than the percentile
itself, so nothing here ever stops a run LoadGen would have found VALID.

    watch = LatencyWatch(limits, max_queries, on_trip=stop)  # fed by the SUT's callbacks
    watch.issued([7], at=time.monotonic())

It is pure logic: no LoadGen, no engine; the worker reads LoadGen's settings into a `Schedule`.
"""

from __future__ import annotations

import math
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

# Our timestamps come from time.monotonic, LoadGen's from std::chrono::high_resolution_clock (the
# system clock in libstdc++, which NTP may slew by up to 0.05 %): a query counts as over a limit only
# when it is over by more than this share of the limit as well.
CLOCK_TOLERANCE = 0.01
# Arrivals in LoadGen's schedule are Poisson: more than mean + 6 standard deviations + 10 happen with a
# probability under 1e-9, so this bound on the number of queries holds for every practical run.
_POISSON_SIGMAS = 6
_POISSON_SLACK = 10

Kind = Literal["ttft", "tpot", "latency"]
_WHAT = {"ttft": "a TTFT", "tpot": "a TPOT", "latency": "a latency"}


class Limits(BaseModel):
    """The latency limits a run is judged by (milliseconds), and the percentile that must stay under them:
    TTFT and TPOT for streamed LLM answers, the whole answer's latency otherwise."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ttft_ms: float | None = None
    tpot_ms: float | None = None
    latency_ms: float | None = None
    percentile: float = 0.99

    def watched(self) -> dict[Kind, float]:
        """The limits set, by kind."""
        found: dict[Kind, float | None] = {
            "ttft": self.ttft_ms,
            "tpot": self.tpot_ms,
            "latency": self.latency_ms,
        }
        return {kind: value for kind, value in found.items() if value is not None}

    def loosest(self, other: Limits) -> Limits:
        """Each limit `other` sets, raised to ours where ours is looser; the higher percentile.

        `other` is what LoadGen loaded (the verdict is its own), `self` the round's rules: a query
        counts as over only when it is over both, so neither judge could still find the run VALID."""

        def larger(theirs: float | None, ours: float | None) -> float | None:
            return None if theirs is None else max(theirs, ours if ours is not None else theirs)

        return Limits(
            ttft_ms=larger(other.ttft_ms, self.ttft_ms),
            tpot_ms=larger(other.tpot_ms, self.tpot_ms),
            latency_ms=larger(other.latency_ms, self.latency_ms),
            percentile=max(self.percentile, other.percentile),
        )


def allowed_over(queries: int, percentile: float) -> int:
    """How many of `queries` latencies may be over a limit with the percentile still under it.

    LoadGen sorts the latencies and takes the one at index `int(queries * percentile)` (results.cc,
    the same double arithmetic and truncation); every latency above that index may be over.
    """
    return max(0, queries - 1 - int(queries * percentile))


@dataclass(frozen=True)
class Schedule:
    """What LoadGen's Server schedule issues, from its settings (loadgen.cc GenerateQueries)."""

    target_qps: float
    min_duration_s: float
    min_query_count: int
    max_query_count: int  # 0: none
    sample_set: int  # samples loaded for the run (its performance sample set)
    equal_issue: bool  # sample_concatenate_permutation: whole sets of samples are issued

    def _count(self, arrivals: float) -> int:
        # Queries are generated while the last one's scheduled time is under min_duration: the first at
        # time 0 (under it unless it is 0), the arrivals inside (0, min_duration), and the first one
        # past it; at least min_query_count; in equal-issue mode rounded up to whole sample sets
        # (min_queries is padded to a multiple of the set, and grows by a set whenever reached before
        # min_duration).
        first = 1 if self.min_duration_s > 0 else 0
        count = max(self.min_query_count, math.ceil(arrivals) + first + 1)
        if self.equal_issue and self.sample_set > 0:
            count = math.ceil(count / self.sample_set) * self.sample_set
        if self.max_query_count > 0:  # issue_query_controller.cc stops issuing there
            count = min(count, self.max_query_count)
        return count

    def max_queries(self) -> int:
        """An upper bound of the queries the run issues (the Poisson count bounded generously)."""
        mean = self.target_qps * self.min_duration_s
        return self._count(mean + _POISSON_SIGMAS * math.sqrt(mean) + _POISSON_SLACK)

    def expected_queries(self) -> int:
        """The queries the run issues on average."""
        return self._count(self.target_qps * self.min_duration_s)

    def seconds(self) -> float:
        """How long the schedule runs on average: its queries over the arrival rate (at least the
        minimum duration). An engine that has fallen behind takes longer still, to drain its queue."""
        if self.target_qps <= 0:
            return self.min_duration_s
        return max(self.min_duration_s, self.expected_queries() / self.target_qps)


def _number(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:,.3g}"


class LatencyWatch:
    """Counts, per limit, the queries certainly over it, and calls `on_trip(reason)` once when one count
    exceeds what `max_queries` queries may have over their percentile. Thread-safe: LoadGen's issue
    thread and the engine's threads feed it.

    Each time is a lower bound of LoadGen's own measure of the same query, so a query counted over is
    over for LoadGen too:
    - TTFT: from `issued` (LoadGen calls the SUT at or after the query's scheduled time, which LoadGen
      measures from) to `first_token`'s `sent_at` (taken before FirstTokenComplete, which stamps its
      own time on entry). A query still waiting for its first token is over once `now - issued` is.
    - TPOT: (completion - first token) / (tokens - 1), as LoadGen computes it, from the first token's
      `acknowledged_at` (after FirstTokenComplete returned) to `completed`'s `at` (taken before
      QuerySamplesComplete); answers of fewer than two tokens have no TPOT.
    - latency: from `issued` to `completed`'s `at`; a query not yet completed is over once `now - issued`
      is.
    """

    def __init__(
        self,
        limits: Limits,
        max_queries: int,
        on_trip: Callable[[str], None],
        tolerance: float = CLOCK_TOLERANCE,
    ) -> None:
        self.limits = limits
        self.max_queries = max_queries
        self.allowed = allowed_over(max_queries, limits.percentile)
        self._thresholds_s = {kind: ms / 1000 * (1 + tolerance) for kind, ms in limits.watched().items()}
        self._limits_ms = limits.watched()
        self._on_trip = on_trip
        self._lock = threading.Lock()
        # Issue order is insertion order: the oldest waiting queries come first.
        self._issued_at: dict[int, float] = {}
        self._awaiting_first: dict[int, float] = {}
        self._first_done_at: dict[int, float] = {}
        self._over: dict[Kind, int] = dict.fromkeys(self._thresholds_s, 0)
        self.issued_count = 0
        self.reason: str | None = None

    @property
    def tripped(self) -> bool:
        return self.reason is not None

    def issued(self, sample_ids: Iterable[int], at: float) -> None:
        with self._lock:
            if self.reason is not None:
                return
            for sample_id in sample_ids:
                self._issued_at[sample_id] = at
                self._awaiting_first[sample_id] = at
                self.issued_count += 1
            reason = self._check(at)
        self._trip(reason)

    def first_token(self, sample_id: int, sent_at: float, acknowledged_at: float) -> None:
        with self._lock:
            if self.reason is not None:
                return
            issued = self._awaiting_first.pop(sample_id, None)
            if issued is None:
                return
            self._first_done_at[sample_id] = acknowledged_at
            if "ttft" in self._over and sent_at - issued > self._thresholds_s["ttft"]:
                self._over["ttft"] += 1
            reason = self._check(sent_at)
        self._trip(reason)

    def completed(self, sample_id: int, tokens: int, at: float) -> None:
        with self._lock:
            if self.reason is not None:
                return
            issued = self._issued_at.pop(sample_id, None)
            self._awaiting_first.pop(sample_id, None)
            first = self._first_done_at.pop(sample_id, None)
            if issued is None:
                return
            if "latency" in self._over and at - issued > self._thresholds_s["latency"]:
                self._over["latency"] += 1
            tpot = (at - first) / (tokens - 1) if first is not None and tokens >= 2 else None
            if "tpot" in self._over and tpot is not None and tpot > self._thresholds_s["tpot"]:
                self._over["tpot"] += 1
            reason = self._check(at)
        self._trip(reason)

    def failed(self, sample_id: int) -> None:
        """A sample the engine failed: completed empty, so it has no latency worth counting."""
        with self._lock:
            self._issued_at.pop(sample_id, None)
            self._awaiting_first.pop(sample_id, None)
            self._first_done_at.pop(sample_id, None)

    def over(self, now: float) -> dict[Kind, int]:
        """Queries certainly over each limit at `now`, those still waiting included."""
        with self._lock:
            return {kind: self._over[kind] + self._waiting_over(kind, now, None) for kind in self._over}

    def _waiting_over(self, kind: Kind, now: float, enough: int | None) -> int:
        """Queries still waiting for what `kind` measures whose wait already passes its limit; counting
        stops at `enough` (the oldest come first, so the count is one pass over those, no more)."""
        waiting = {"ttft": self._awaiting_first, "latency": self._issued_at}.get(kind)
        if waiting is None:
            return 0
        threshold, count = self._thresholds_s[kind], 0
        for issued in waiting.values():
            if now - issued <= threshold or (enough is not None and count >= enough):
                break
            count += 1
        return count

    def _check(self, now: float) -> str | None:
        """The reason to stop, the first time a count exceeds the allowance (called under the lock)."""
        for kind, answered in self._over.items():
            waiting = self._waiting_over(kind, now, enough=self.allowed + 1 - answered)
            if answered + waiting > self.allowed:
                self.reason = self._reason(kind, answered, waiting)
                return self.reason
        return None

    def _reason(self, kind: Kind, answered: int, waiting: int) -> str:
        still = ""
        if waiting:
            what = "a first token" if kind == "ttft" else "an answer"
            still = f" ({waiting:,} of them still waiting for {what})"
        percentile = f"p{self.limits.percentile * 100:g}"
        return (
            f"{answered + waiting:,} of the {self.issued_count:,} queries issued so far had {_WHAT[kind]} "
            f"over {_number(self._limits_ms[kind])} ms{still}, more than the {self.allowed:,} that "
            f"{self.max_queries:,} queries may have over their {percentile}; VALID is impossible"
        )

    def _trip(self, reason: str | None) -> None:
        """Outside the lock: the callback writes a report and must not block the other threads' updates."""
        if reason is None:
            return
        try:
            self._on_trip(reason)
        except Exception as exc:  # LoadGen's and the engine's threads must never see it fail
            print(f"early abort could not report: {type(exc).__name__}: {exc}", file=sys.stderr)
