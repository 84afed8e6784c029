"""The LoadGen glue: a query sample library over the prompts and a system under test over an engine.

It knows LoadGen and the `Engine` protocol, nothing of any engine's library. LoadGen calls `issue` on
its own thread; the engine is only handed the samples there, never waited for. Responses carry the
generated token ids as int32 with `n_tokens`, in a buffer that stays alive until LoadGen has copied it;
a benchmark whose responses are text (`Prompts.answer_payload`) gets the answer decoded and encoded its way,
`n_tokens` still the number of tokens generated.
"""

from __future__ import annotations

import threading
import time
from array import array
from collections.abc import Callable, Sequence
from typing import Any

import mlperf_loadgen as lg

from harness.early_abort import LatencyWatch
from harness.engines.base import Engine, Sample
from harness.progress import RunStats
from harness.prompts import Prompts


class QuerySampleLibrary:
    """LoadGen's view of the dataset: prompts are already in memory, so load and unload only track."""

    def __init__(self, prompts: Prompts) -> None:
        self.prompts = prompts
        self.loaded: set[int] = set()

    def load(self, indices: Sequence[int]) -> None:
        self.loaded.update(indices)

    def unload(self, indices: Sequence[int]) -> None:
        self.loaded.difference_update(indices)

    def construct(self) -> Any:
        # Every prompt fits in memory, so all are "performance" samples; mlperf.conf sets how many are used.
        return lg.ConstructQSL(len(self.prompts), len(self.prompts), self.load, self.unload)


class LoadGenResponder:
    """`CompletionEvents` that report to LoadGen.

    In streaming scenarios LoadGen needs the first token before the completion; should an engine
    complete a sample without having reported it, the first generated token is reported first.
    A `watch` (early abort) gets each time on the side of LoadGen's call that keeps it a lower bound
    of LoadGen's own latencies (harness.early_abort).
    """

    def __init__(
        self,
        stats: RunStats,
        streaming: bool,
        finish: Callable[[int, Sequence[int]], Sequence[int]] | None = None,
        payload: Callable[[Sequence[int]], array] | None = None,
        watch: LatencyWatch | None = None,
    ) -> None:
        self._stats = stats
        self._watch = watch
        self._streaming = streaming
        # The benchmark's edit of an answer before LoadGen sees it, by dataset index (Prompts.finish).
        self._finish = finish
        # The LoadGen response of an answer's ids; int32 ids unless the benchmark logs text.
        self._payload = payload or (lambda token_ids: array("i", token_ids))
        self._index_of: dict[int, int] = {}
        self._first_sent: set[int] = set()
        self._lock = threading.Lock()
        self.late_first_tokens = 0
        self.failures = 0
        self.first_failure: str | None = None

    def first_token(self, sample_id: int, token_ids: Sequence[int]) -> None:
        with self._lock:
            self._first_sent.add(sample_id)
        self._stats.first_token(sample_id)
        payload = self._payload(token_ids)
        address, count = payload.buffer_info()
        sent_at = time.monotonic()  # before LoadGen stamps the first token: TTFT measured short
        # `payload` stays referenced until FirstTokenComplete returns, and LoadGen copies it before then.
        lg.FirstTokenComplete(
            [lg.QuerySampleResponse(sample_id, address, count * payload.itemsize, len(token_ids))]
        )
        if self._watch is not None:  # after it: TPOT, measured from here, is short too
            self._watch.first_token(sample_id, sent_at, time.monotonic())

    def expect(self, samples: Sequence[Sample]) -> None:
        """Note the dataset index of samples about to be issued (only needed to finish their answers)."""
        if self._finish is not None:
            with self._lock:
                self._index_of.update((sample.id, sample.index) for sample in samples)

    def complete(self, sample_id: int, token_ids: Sequence[int]) -> None:
        if self._finish is not None:
            with self._lock:
                index = self._index_of.pop(sample_id)
            token_ids = self._finish(index, token_ids)
        if self._streaming and token_ids:
            with self._lock:
                missing_first = sample_id not in self._first_sent
                self._first_sent.discard(sample_id)
                self.late_first_tokens += missing_first
            if missing_first:
                self.first_token(sample_id, token_ids[:1])
                with self._lock:
                    self._first_sent.discard(sample_id)
        payload = self._payload(token_ids)
        address, count = payload.buffer_info()
        tokens = len(token_ids)
        completed_at = time.monotonic()  # before LoadGen stamps the completion
        lg.QuerySamplesComplete(
            [lg.QuerySampleResponse(sample_id, address, count * payload.itemsize, tokens)]
        )
        self._stats.completed_sample(sample_id, tokens)
        if self._watch is not None:
            self._watch.completed(sample_id, tokens, completed_at)

    def fail(self, sample_id: int, reason: str) -> None:
        """LoadGen waits for every sample, so a failed one is completed empty; LoadGen then logs an error."""
        with self._lock:
            self.failures += 1
            self.first_failure = self.first_failure or reason
            self._first_sent.discard(sample_id)
            self._index_of.pop(sample_id, None)
        lg.QuerySamplesComplete([lg.QuerySampleResponse(sample_id, 0, 0, 0)])
        self._stats.completed_sample(sample_id, 0)
        if self._watch is not None:
            self._watch.failed(sample_id)


class SystemUnderTest:
    def __init__(
        self,
        engine: Engine,
        library: QuerySampleLibrary,
        responder: LoadGenResponder,
        stats: RunStats,
        watch: LatencyWatch | None = None,
    ):
        self._engine = engine
        self._watch = watch
        self._prompts = library.prompts.token_ids
        self._output_lengths = library.prompts.output_lengths
        self._media = library.prompts.media
        self._responder = responder
        self._stats = stats

    def issue(self, query_samples: Sequence[Any]) -> None:
        issued_at = time.monotonic()  # LoadGen measures from the scheduled time, which is no later
        lengths, media = self._output_lengths, self._media
        samples = [
            Sample(
                query.id,
                query.index,
                self._prompts[query.index],
                lengths[query.index] if lengths else None,
                media[query.index] if media else None,
            )
            for query in query_samples
        ]
        self._stats.issued_samples(sample.id for sample in samples)
        if self._watch is not None:  # before the engine may answer
            self._watch.issued([sample.id for sample in samples], issued_at)
        self._responder.expect(samples)
        self._engine.submit(samples, self._responder)

    def flush(self) -> None:
        self._engine.flush()

    def construct(self) -> Any:
        return lg.ConstructSUT(self.issue, self.flush)
