"""Backend `vllm-async`: vLLM's in-process `AsyncLLM`, streaming, for Server and Interactive.

The engine lives on its own asyncio loop thread. `submit` only schedules a task there, so LoadGen's
issue thread never waits. Each task reports the first generated token the moment the engine emits it
(`FirstTokenComplete`), then every generated id (`QuerySamplesComplete`); only ids the model produced
are reported. `replicas` > 1 becomes vLLM's own data parallelism (one engine per GPU group, with
vLLM's load balancer), so one process serves them all.

Where the plan gives renderer workers (`EngineSpec.renderer_workers`), samples with audio or images have
their inputs made on vLLM's own renderer pool (`renderer_num_workers`, through `render_cmpl_async`, as
`vllm serve` does) instead of one at a time on the loop's thread, the first one alone (`FirstInputAlone`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
from collections.abc import Sequence
from typing import Any

from harness.engines.base import CompletionEvents, EngineSpec, Generation, Sample
from harness.engines.event_loop import SampleLoop
from harness.engines.vllm_common import (
    SamplingForSamples,
    chat_renderer,
    engine_keyword_arguments,
    engine_prompt,
    load_media_processor,
    vllm_versions,
)


class VllmAsyncEngine:
    def __init__(self, spec: EngineSpec) -> None:
        self._spec = spec
        self._loop = SampleLoop("vllm-async-loop")
        self._engine: Any = None

    def start(self) -> None:
        from vllm import AsyncEngineArgs
        from vllm.v1.engine.async_llm import AsyncLLM

        arguments = engine_keyword_arguments(self._spec)
        if self._spec.replicas > 1:
            arguments["data_parallel_size"] = self._spec.replicas
        known = {field.name for field in dataclasses.fields(AsyncEngineArgs)}
        if self._spec.renderer_workers and "renderer_num_workers" in known:  # vLLM 0.26 has it
            arguments["renderer_num_workers"] = self._spec.renderer_workers
        self._params = SamplingForSamples(self._spec.generation, streaming=True)
        self._loop.start()

        async def build() -> Any:
            return AsyncLLM.from_engine_args(AsyncEngineArgs(**arguments))

        self._engine = self._loop.call(build)
        renderer = getattr(self._engine, "renderer", None)
        if self._spec.media is not None:
            load_media_processor(renderer)
        pooled = self._spec.renderer_workers and "renderer_num_workers" in arguments
        usable = pooled and hasattr(renderer, "render_cmpl_async")
        self._make_input = FirstInputAlone(renderer) if usable else None
        self._render_chat = None
        if self._spec.media == "image":

            async def tokenizer() -> Any:
                found = self._engine.get_tokenizer()  # a coroutine in some vLLM releases
                return await found if inspect.isawaitable(found) else found

            self._render_chat = chat_renderer(self._loop.call(tokenizer))

    def use_generation(self, generation: Generation) -> None:
        self._params = SamplingForSamples(generation, streaming=True)

    def submit(self, samples: Sequence[Sample], events: CompletionEvents) -> None:
        self._loop.submit(samples, lambda sample: self._generate(sample, events))

    def flush(self) -> None:
        """Each sample is generated as soon as it arrives; nothing is held back."""

    def stop(self) -> None:
        async def shut_down() -> None:
            # On the loop's own thread, so the engine's output task is cancelled before the engine dies.
            if self._engine is not None:
                self._engine.shutdown()

        self._loop.stop(shut_down)

    def versions(self) -> dict[str, str]:
        return vllm_versions()

    async def _generate(self, sample: Sample, events: CompletionEvents) -> None:
        generated: list[int] = []
        try:
            prompt = engine_prompt(sample, self._render_chat)
            if self._make_input is not None and sample.media is not None:
                prompt = await self._make_input(prompt)
            async for output in self._engine.generate(prompt, self._params(sample), str(sample.id)):
                new_tokens = output.outputs[0].token_ids
                if new_tokens and not generated:
                    events.first_token(sample.id, new_tokens[:1])
                generated.extend(new_tokens)
        except Exception as exc:
            events.fail(sample.id, f"vLLM failed: {type(exc).__name__}: {exc}")
            return
        events.complete(sample.id, generated)


class FirstInputAlone:
    """Inputs made by vLLM's renderer pool (`render_cmpl_async`), the first one alone. vLLM loads the model's
    processor when it makes its first input and caches it, but each of its threads that starts before then
    loads its own: 32 threads held qwen3-vl's first inputs for over 7 minutes (bench/RESULTS.md, 2026-11-26).
    Inputs asked for meanwhile wait for the first."""

    def __init__(self, renderer: Any) -> None:
        self._renderer = renderer
        self._first = asyncio.Lock()
        self._made_one = False

    async def __call__(self, prompt: Any) -> Any:
        if not self._made_one:
            async with self._first:
                if not self._made_one:
                    made = (await self._renderer.render_cmpl_async([prompt]))[0]
                    self._made_one = True
                    return made
        return (await self._renderer.render_cmpl_async([prompt]))[0]
