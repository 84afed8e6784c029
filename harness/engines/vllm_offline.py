"""Backend `vllm`: vLLM's in-process `LLM`, for Offline.

Samples are handed to the engine as LoadGen issues them and continuous batching does the rest (no fixed
batches). One driver thread owns the engine (it is not thread-safe): it adds requests and steps the
engine, completing each sample the moment it finishes rather than waiting for the slowest.

Token prompts are handed over all at once. Samples with audio or images first need their inputs made
(whisper's log-mel features, the images' pixels), which vLLM's `add_request` does one at a time in the
calling thread: one whisper replica handed over 37-49 samples/s that way, its GPU half idle (bench/
RESULTS.md, 2026-11-26). Where the plan gives renderer workers (`EngineSpec.renderer_workers`), they make
those inputs ahead with vLLM's own renderer (`render_cmpl`, the input `add_request` takes as is), the
first one alone (it loads the model's processor), and the driver hands them over while fewer than
`MEDIA_WINDOW_PER_SEQUENCE` x max_num_seqs are in the engine, so the features wait here, a few at a time,
not by the thousand in the engine core.

An encoder-decoder model (whisper) is different: vLLM runs every step that starts a request without its
compiled graphs (the step fills the cross-attention cache), and a replica's engine core then spent its CPU
running the decoder eagerly, about one such step in every step. So its made inputs go in by waves: nothing
waits in the engine, and new requests are handed over only once an eighth of max_num_seqs is free, so
the steps between run on CUDA graphs. One whisper replica on one H100 did 57.96 samples/s as places freed,
62.71 by waves of 10 and 68.40 by waves of 32, the default for its 256 (bench/RESULTS.md, 2026-11-26).

Harness-side arguments (not passed to vLLM): `sort_by_input_length` (default false) hands samples over
longest prompt first; `encoder_wave` sets the wave (0: requests go in as places free, as for other models).
"""

from __future__ import annotations

import queue
import sys
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from itertools import islice
from typing import Any

from harness.engines.base import CompletionEvents, EngineSpec, Generation, Sample
from harness.engines.vllm_common import (
    SamplingForSamples,
    chat_renderer,
    engine_keyword_arguments,
    engine_prompt,
    load_media_processor,
    vllm_versions,
)
from submitter.errors import SubmitterError

HARNESS_ARGS = ("sort_by_input_length", "encoder_wave")
# Media requests in the engine at most: a full batch running and as many waiting for a place.
MEDIA_WINDOW_PER_SEQUENCE = 2
# An encoder-decoder engine gets new requests once this fraction of its batch is free (1 / this).
WAVES_PER_BATCH = 8

Issued = tuple[Sample, CompletionEvents]


class VllmOfflineEngine:
    def __init__(self, spec: EngineSpec) -> None:
        self._spec = spec
        self._sort = bool(spec.args.get("sort_by_input_length", False))
        self._incoming: queue.Queue[tuple[Sequence[Sample], CompletionEvents] | None] = queue.Queue()
        self._llm: Any = None
        self._driver: OfflineDriver | None = None
        self._thread = threading.Thread(target=self._drive, name="vllm-offline-driver", daemon=True)

    def start(self) -> None:
        from vllm import LLM

        wave_setting = descriptor_wave(self._spec.args)  # before minutes of loading the model
        self._llm = LLM(**engine_keyword_arguments(self._spec, harness_args=HARNESS_ARGS))
        params = SamplingForSamples(self._spec.generation, streaming=False)
        render_chat = chat_renderer(self._llm.get_tokenizer()) if self._spec.media == "image" else None
        engine = self._llm.llm_engine
        # The engine's own: its default depends on the GPU (1,024 on H100 and H200, 256 on smaller ones).
        max_num_seqs = engine.vllm_config.scheduler_config.max_num_seqs
        wave = encoder_wave(engine, wave_setting, max_num_seqs) if self._spec.renderer_workers else None
        if wave:
            print(f"encoder-decoder model: requests go in by waves of {wave} free places", file=sys.stderr)
        if self._spec.media is not None:
            load_media_processor(getattr(engine, "renderer", None))
        self._driver = OfflineDriver(
            engine,
            params,
            lambda sample: engine_prompt(sample, render_chat),
            renderer=getattr(engine, "renderer", None),
            workers=self._spec.renderer_workers,
            window=max_num_seqs if wave else MEDIA_WINDOW_PER_SEQUENCE * max_num_seqs,
            wave=wave,
        )
        self._thread.start()

    def use_generation(self, generation: Generation) -> None:
        assert self._driver is not None
        # Read by the driver thread only when it hands over the next test's samples.
        self._driver.params = SamplingForSamples(generation, streaming=False)

    def submit(self, samples: Sequence[Sample], events: CompletionEvents) -> None:
        if self._sort:
            samples = sorted(samples, key=lambda s: len(s.prompt), reverse=True)
        self._incoming.put((samples, events))

    def flush(self) -> None:
        """Samples are handed over as they arrive; nothing is held back."""

    def stop(self) -> None:
        self._incoming.put(None)
        self._thread.join()
        self._llm = None
        if self._driver is not None and self._driver.failure is not None:
            failure = self._driver.failure
            raise RuntimeError(f"the vLLM driver failed: {failure}") from failure

    def versions(self) -> dict[str, str]:
        return vllm_versions()

    def _drive(self) -> None:
        assert self._driver is not None
        self._driver.run(self._incoming)


def descriptor_wave(args: Mapping[str, Any]) -> int | None:
    """The descriptor's `encoder_wave` (0: no waves); None where it sets none."""
    if "encoder_wave" not in args:
        return None
    value = args["encoder_wave"]
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SubmitterError(
            f"engine_args.encoder_wave is {value!r}: give the free places an encoder-decoder engine waits "
            "for before it gets new requests, a whole number, or 0 to hand them over as places free"
        )
    return value


def encoder_wave(engine: Any, setting: int | None, max_num_seqs: int) -> int | None:
    """How many places must be free before an encoder-decoder engine gets new requests: the descriptor's
    setting (`descriptor_wave`), else an eighth of max_num_seqs. None for other models, or no waves."""
    if setting is not None:
        return setting or None
    if not getattr(getattr(engine, "model_config", None), "is_encoder_decoder", False):
        return None
    return max(1, max_num_seqs // WAVES_PER_BATCH)


class OfflineDriver:
    """Feeds one vLLM `LLMEngine` (`add_request`, `step`, `has_unfinished_requests`) from a queue of
    issued samples until it reads None, and reports each finished sample.

    `renderer` (vLLM's, with `render_cmpl`) and `workers`: samples with media have their inputs made on
    that many threads and are handed over in issue order while fewer than `window` are in the engine;
    with `wave`, only once that many places are free (or the last samples all fit). Without them, or for
    token prompts, every sample is handed over as it arrives."""

    def __init__(
        self,
        engine: Any,
        params: Callable[[Sample], Any],
        prompt_for: Callable[[Sample], Any],
        renderer: Any,
        workers: int | None,
        window: int,
        wave: int | None = None,
    ) -> None:
        self._engine = engine
        self.params = params
        self._prompt_for = prompt_for
        self._renderer = renderer if workers and hasattr(renderer, "render_cmpl") else None
        self._pool = ThreadPoolExecutor(workers, "vllm-renderer") if self._renderer is not None else None
        # Inputs being made at once: every worker busy, a few queued, and a whole wave.
        self._ahead = max(4 * (workers or 1), wave or 0)
        self._window = window
        self._wave = wave
        self._in_engine: dict[str, Issued] = {}
        self._to_render: deque[Issued] = deque()
        self._rendering: deque[tuple[Issued, Future[Any]]] = deque()
        self._made_one = False
        self.failure: BaseException | None = None

    def run(self, incoming: queue.Queue[tuple[Sequence[Sample], CompletionEvents] | None]) -> None:
        stopping = False
        try:
            while not (stopping and self._idle()):
                idle = self._idle()
                # Block for new work only when there is nothing else to do.
                while not stopping:
                    try:
                        item = incoming.get(block=idle)
                    except queue.Empty:
                        break
                    if item is None:
                        stopping = True
                        break
                    self._take(*item)
                    idle = False
                self._render_ahead()
                self._hand_over()
                if not self._engine.has_unfinished_requests():
                    if self._in_engine:
                        raise RuntimeError(
                            f"the engine dropped {len(self._in_engine)} request(s) without output"
                        )
                    if self._rendering:
                        self._wait_for_inputs()
                    continue
                for output in self._engine.step():
                    if output.finished:
                        sample, events = self._in_engine.pop(output.request_id)
                        events.complete(sample.id, list(output.outputs[0].token_ids))
        except BaseException as exc:  # reported by stop(); LoadGen would otherwise wait forever
            self.failure = exc
            rendering = [issued for issued, _ in self._rendering]
            for sample, events in [*self._in_engine.values(), *self._to_render, *rendering]:
                events.fail(sample.id, f"vLLM failed: {exc}")
        finally:
            if self._pool is not None:
                self._pool.shutdown(cancel_futures=True)

    def _idle(self) -> bool:
        return not self._in_engine and not self._to_render and not self._rendering

    def _take(self, samples: Sequence[Sample], events: CompletionEvents) -> None:
        for sample in samples:
            if self._pool is not None and sample.media is not None:
                self._to_render.append((sample, events))
            else:
                self._add(sample, events, self._prompt_for(sample))

    def _add(self, sample: Sample, events: CompletionEvents, prompt: Any) -> None:
        request_id = str(sample.id)
        self._in_engine[request_id] = (sample, events)
        self._engine.add_request(request_id, prompt, self.params(sample))

    def _render_ahead(self) -> None:
        # vLLM loads the model's processor when it makes its first input and caches it, but every thread
        # that starts before it is cached loads its own: 32 threads held qwen3-vl's first inputs for over
        # 7 minutes (bench/RESULTS.md, 2026-11-26). So the first input is made alone.
        ahead = self._ahead if self._made_one else 1
        while self._to_render and len(self._rendering) < ahead:
            assert self._pool is not None
            sample, events = self._to_render.popleft()
            made = self._pool.submit(self._render, self._prompt_for(sample))
            self._rendering.append(((sample, events), made))

    def _render(self, prompt: Any) -> Any:
        made = self._renderer.render_cmpl([prompt])[0]
        self._made_one = True
        return made

    def _wave_size(self) -> int:
        """The next wave: a whole one, or the last samples."""
        assert self._wave is not None
        return min(self._wave, len(self._rendering) + len(self._to_render))

    def _room(self) -> int:
        """How many made inputs may go into the engine now."""
        room = self._window - len(self._in_engine)
        if self._wave is None:
            return room
        wave = self._wave_size()
        wave_made = len(self._rendering) >= wave and all(
            made.done() for _, made in islice(self._rendering, wave)
        )
        return room if room >= wave and wave_made else 0

    def _wait_for_inputs(self) -> None:
        """With nothing to step, wait until the next hand-over's inputs are made instead of spinning."""
        count = self._wave_size() if self._wave is not None else 1
        wait([made for _, made in islice(self._rendering, count)])

    def _hand_over(self) -> None:
        """Made inputs, in issue order, while the engine has room; a sample whose input failed fails alone."""
        room = self._room()
        while room > 0 and self._rendering and self._rendering[0][1].done():
            (sample, events), made = self._rendering.popleft()
            problem = made.exception()
            if problem is not None:
                events.fail(sample.id, f"its input could not be made: {type(problem).__name__}: {problem}")
                continue
            self._add(sample, events, made.result())
            room -= 1
