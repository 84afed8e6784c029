"""Backend `vllm-async`: vLLM's in-process `AsyncLLM`, streaming, for Server and Interactive.

The engine lives on its own asyncio loop thread. `submit` only schedules a task there, so LoadGen's
issue thread never waits. Each task reports the first generated token the moment the engine emits it
(`FirstTokenComplete`), then every generated id (`QuerySamplesComplete`); only ids the model produced
are reported. `replicas` > 1 becomes vLLM's own data parallelism (one engine per GPU group, with
vLLM's load balancer), so one process serves them all.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

from harness.engines.base import CompletionEvents, EngineSpec, Sample
from harness.engines.vllm_common import engine_keyword_arguments, sampling_params, token_prompt, vllm_versions


class VllmAsyncEngine:
    def __init__(self, spec: EngineSpec) -> None:
        self._spec = spec
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="vllm-async-loop", daemon=True)
        self._tasks: set[asyncio.Task[None]] = set()
        self._engine: Any = None

    def start(self) -> None:
        from vllm import AsyncEngineArgs
        from vllm.v1.engine.async_llm import AsyncLLM

        arguments = engine_keyword_arguments(self._spec)
        if self._spec.replicas > 1:
            arguments["data_parallel_size"] = self._spec.replicas
        self._params = sampling_params(self._spec.generation, streaming=True)
        self._thread.start()

        async def build() -> Any:
            return AsyncLLM.from_engine_args(AsyncEngineArgs(**arguments))

        self._engine = asyncio.run_coroutine_threadsafe(build(), self._loop).result()

    def submit(self, samples: Sequence[Sample], events: CompletionEvents) -> None:
        self._loop.call_soon_threadsafe(self._launch, samples, events)

    def flush(self) -> None:
        """Each sample is generated as soon as it arrives; nothing is held back."""

    def stop(self) -> None:
        async def drain() -> None:
            while self._tasks:
                await asyncio.gather(*list(self._tasks), return_exceptions=True)

        async def shut_down() -> None:
            # On the loop's own thread, so the engine's output task is cancelled before the engine dies.
            if self._engine is not None:
                self._engine.shutdown()

        asyncio.run_coroutine_threadsafe(drain(), self._loop).result()
        asyncio.run_coroutine_threadsafe(shut_down(), self._loop).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()

    def versions(self) -> dict[str, str]:
        return vllm_versions()

    def _launch(self, samples: Sequence[Sample], events: CompletionEvents) -> None:
        for sample in samples:
            task = self._loop.create_task(self._generate(sample, events))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _generate(self, sample: Sample, events: CompletionEvents) -> None:
        generated: list[int] = []
        try:
            prompt = token_prompt(sample.prompt)
            async for output in self._engine.generate(prompt, self._params, str(sample.id)):
                new_tokens = output.outputs[0].token_ids
                if new_tokens and not generated:
                    events.first_token(sample.id, new_tokens[:1])
                generated.extend(new_tokens)
        except Exception as exc:
            events.fail(sample.id, f"vLLM failed: {type(exc).__name__}: {exc}")
            return
        events.complete(sample.id, generated)
