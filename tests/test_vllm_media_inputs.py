"""Media inputs of the vLLM backends against stand-ins for vLLM's renderer (no GPU here): the model's
processor is loaded while the engine starts; on `vllm-async`'s renderer pool the first input is made alone,
since vLLM loads the processor then, and the rest at once."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from harness.engines.vllm_async import FirstInputAlone
from harness.engines.vllm_common import load_media_processor


class StandInRenderer:
    """`render_cmpl_async([prompt])` as vLLM's renderer gives it. Like vLLM's, it loads the model's processor
    while making its first input, and each input begun before that load is done loads another
    (`processor_loads`); it records the most inputs made at once."""

    def __init__(self) -> None:
        self.processor_loads = 0
        self.most_at_once = 0
        self._loaded = False
        self._making = 0

    async def render_cmpl_async(self, prompts: Sequence[Any]) -> list[Any]:
        (prompt,) = prompts
        self._making += 1
        self.most_at_once = max(self.most_at_once, self._making)
        if not self._loaded:
            self.processor_loads += 1
            await asyncio.sleep(0.05)  # the load, during which other inputs may begin
            self._loaded = True
        await asyncio.sleep(0)
        self._making -= 1
        return [{"made from": prompt}]


def test_the_first_input_is_made_alone_and_the_rest_together() -> None:
    renderer = StandInRenderer()
    make_input = FirstInputAlone(renderer)

    async def make_all() -> list[Any]:
        return await asyncio.gather(*(make_input(n) for n in range(12)))

    made = asyncio.run(make_all())
    assert made == [{"made from": n} for n in range(12)]
    assert renderer.processor_loads == 1
    assert renderer.most_at_once > 1  # after the first, inputs are made at once


def test_without_it_every_input_begun_during_the_first_loads_the_processor() -> None:
    """The stand-in shows the herd the class prevents."""
    renderer = StandInRenderer()

    async def make_all() -> list[Any]:
        return await asyncio.gather(*(renderer.render_cmpl_async([n]) for n in range(12)))

    asyncio.run(make_all())
    assert renderer.processor_loads == 12


class StandInProcessingInfo:
    def __init__(self) -> None:
        self.loads = 0

    def get_hf_processor(self) -> object:
        self.loads += 1
        return object()


class StandInMultiModalRenderer:
    """vLLM's renderer as `load_media_processor` reaches the processor: `get_mm_processor().info`."""

    def __init__(self) -> None:
        self.info = StandInProcessingInfo()

    def get_mm_processor(self) -> Any:
        return self


def test_the_processor_is_loaded_at_engine_start_where_vllm_offers_it() -> None:
    renderer = StandInMultiModalRenderer()
    load_media_processor(renderer)
    assert renderer.info.loads == 1
    load_media_processor(None)  # a vLLM without a renderer: left to the first input
