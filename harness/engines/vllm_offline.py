"""Backend `vllm`: vLLM's in-process `LLM`, for Offline.

Every sample LoadGen issues is handed to the engine at once and continuous batching does the rest
(no fixed batches). One driver thread owns the engine (it is not thread-safe): it adds requests and
steps the engine, completing each sample the moment it finishes rather than waiting for the slowest.

Harness-side argument (not passed to vLLM): `sort_by_input_length` (default false) hands samples over
longest prompt first.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Sequence
from typing import Any

from harness.engines.base import CompletionEvents, EngineSpec, Generation, Sample
from harness.engines.vllm_common import (
    SamplingForSamples,
    chat_renderer,
    engine_keyword_arguments,
    engine_prompt,
    take_front_end_threads,
    vllm_versions,
)

HARNESS_ARGS = ("sort_by_input_length",)


class VllmOfflineEngine:
    def __init__(self, spec: EngineSpec) -> None:
        self._spec = spec
        self._sort = bool(spec.args.get("sort_by_input_length", False))
        self._incoming: queue.Queue[tuple[Sequence[Sample], CompletionEvents] | None] = queue.Queue()
        self._llm: Any = None
        self._driver = threading.Thread(target=self._drive, name="vllm-offline-driver", daemon=True)
        self._failure: BaseException | None = None

    def start(self) -> None:
        from vllm import LLM

        self._llm = LLM(**engine_keyword_arguments(self._spec, harness_args=HARNESS_ARGS))
        take_front_end_threads(self._spec)
        self._params = SamplingForSamples(self._spec.generation, streaming=False)
        self._render_chat = chat_renderer(self._llm.get_tokenizer()) if self._spec.media == "image" else None
        self._driver.start()

    def use_generation(self, generation: Generation) -> None:
        # Read by the driver thread only when it adds the next test's samples.
        self._params = SamplingForSamples(generation, streaming=False)

    def submit(self, samples: Sequence[Sample], events: CompletionEvents) -> None:
        self._incoming.put((samples, events))

    def flush(self) -> None:
        """Samples are handed over as they arrive; nothing is held back."""

    def stop(self) -> None:
        self._incoming.put(None)
        self._driver.join()
        self._llm = None
        if self._failure is not None:
            raise RuntimeError(f"the vLLM driver failed: {self._failure}") from self._failure

    def versions(self) -> dict[str, str]:
        return vllm_versions()

    def _add(self, samples: Sequence[Sample], events: CompletionEvents, waiting: dict[str, Any]) -> None:
        ordered = sorted(samples, key=lambda s: len(s.prompt), reverse=True) if self._sort else samples
        engine = self._llm.llm_engine
        for sample in ordered:
            request_id = str(sample.id)
            waiting[request_id] = (sample.id, events)
            prompt = engine_prompt(sample, self._render_chat)
            engine.add_request(request_id, prompt, self._params(sample))

    def _drive(self) -> None:
        engine = self._llm.llm_engine
        waiting: dict[str, Any] = {}
        stopping = False
        try:
            while not (stopping and not waiting):
                # Block for new work only when the engine is idle; otherwise just take what has arrived.
                while True:
                    try:
                        item = self._incoming.get(block=not waiting and not stopping)
                    except queue.Empty:
                        break
                    if item is None:
                        stopping = True
                        break
                    self._add(*item, waiting)
                if not engine.has_unfinished_requests():
                    if waiting:
                        raise RuntimeError(f"the engine dropped {len(waiting)} request(s) without output")
                    continue
                for output in engine.step():
                    if output.finished:
                        sample_id, events = waiting.pop(output.request_id)
                        events.complete(sample_id, list(output.outputs[0].token_ids))
        except BaseException as exc:  # reported by stop(); LoadGen would otherwise wait forever
            self._failure = exc
            for sample_id, events in waiting.values():
                events.fail(sample_id, f"vLLM failed: {exc}")
