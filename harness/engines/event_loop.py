"""An asyncio loop on its own thread, running one task per sample: what the streaming engines share.

LoadGen calls `submit` on its own thread; the loop only schedules there, so that call returns at once.
`stop` waits for every sample's task, then runs the engine's own clean-up on the loop's thread.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, TypeVar

from harness.engines.base import Sample

T = TypeVar("T")


class SampleLoop:
    def __init__(self, name: str) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=name, daemon=True)
        self._tasks: set[asyncio.Task[None]] = set()

    def start(self) -> None:
        self._thread.start()

    def call(self, function: Callable[[], Awaitable[T]]) -> T:
        """Run `function()` on the loop and wait for its result (engine construction, for one)."""

        async def run() -> T:
            return await function()

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result()

    def submit(
        self, samples: Sequence[Sample], handle: Callable[[Sample], Coroutine[Any, Any, None]]
    ) -> None:
        self._loop.call_soon_threadsafe(self._launch, samples, handle)

    def stop(self, clean_up: Callable[[], Awaitable[None]] | None = None) -> None:
        async def drain() -> None:
            while self._tasks:
                await asyncio.gather(*list(self._tasks), return_exceptions=True)
            if clean_up is not None:
                await clean_up()

        asyncio.run_coroutine_threadsafe(drain(), self._loop).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()

    def _launch(
        self, samples: Sequence[Sample], handle: Callable[[Sample], Coroutine[Any, Any, None]]
    ) -> None:
        for sample in samples:
            task = self._loop.create_task(handle(sample))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
