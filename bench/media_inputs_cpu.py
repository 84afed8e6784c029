"""How fast the `vllm` backend's driver hands whisper's or qwen3-vl's samples to vLLM, on the CPU alone:
vLLM's own renderer and input processor make each sample's inputs (whisper's log-mel features, qwen3-vl's
image patches) exactly as `LLMEngine.add_request` does, through `harness.engines.vllm_offline.OfflineDriver`,
with the front end's work (`process_inputs` and the msgpack encoding of the request for the engine core)
done for real and only the engine core replaced by one that finishes every request at once. Workers 0 is
vLLM's own path (inputs made one at a time inside `add_request`); N > 0 makes them on N threads, as the
harness does where the plan gives renderer workers. It checks that the features handed over equal those
vLLM makes itself, and says when the first input was handed over (the first one made loads the model's
processor, unless loaded first as the engines do: `--cold` leaves it to the first input). `--server-pool N`
measures vLLM's own renderer pool instead, as the `vllm-async` backend uses it.

Needs vLLM importable on this machine's Python 3.12: the staged site (`mkdir -p /tmp/vllm-site && cat
.stage/site/p0*/site.0* | tar xJ -C /tmp/vllm-site`) beside torch, torchaudio, transformers, numpy, pandas
and pyarrow from PyPI in a 3.12 venv, and the model folder without weights (`.stage/mm/whisper-large-v3` or
`.stage/mm/qwen3-vl-235b-a22b`, from bench/multimodal_model_folders.py); qwen3-vl's records come from
`submitter data synth --benchmark qwen3-vl-235b-a22b --samples 200 --out DIR`. vLLM finds no GPU platform
here, so this script selects its CPU platform itself before anything else of vLLM is imported. Run from
the checkout:

    PYTHONPATH=/tmp/vllm-site:$PWD OMP_NUM_THREADS=1 python bench/media_inputs_cpu.py --workers 0 1 2
    PYTHONPATH=/tmp/vllm-site:$PWD OMP_NUM_THREADS=1 python bench/media_inputs_cpu.py \
        --benchmark qwen3-vl-235b-a22b --records DIR --workers 1 2 4 8 32
    PYTHONPATH=/tmp/vllm-site:$PWD OMP_NUM_THREADS=1 python bench/media_inputs_cpu.py \
        --benchmark qwen3-vl-235b-a22b --records DIR --server-pool 16 [--all-at-once] [--cold]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import queue
import sys
import time
from collections import deque
from pathlib import Path
from typing import Any

# <|startoftranscript|><|en|><|transcribe|><|notimestamps|>
WHISPER_DECODER_PROMPT = [50258, 50259, 50360, 50364]
MODEL_FOLDERS = {
    "whisper": Path(".stage/mm/whisper-large-v3"),
    "qwen3-vl-235b-a22b": Path(".stage/mm/qwen3-vl-235b-a22b"),
}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--benchmark", choices=sorted(MODEL_FOLDERS), default="whisper")
    parser.add_argument("--model", type=Path, help="the model folder (default: the benchmark's in .stage/mm)")
    parser.add_argument("--clips", type=int, default=96, help="whisper: distinct clips, 5 to 30 s each")
    parser.add_argument("--records", type=Path, help="qwen3-vl: a folder of records (submitter data synth)")
    parser.add_argument("--workers", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument(
        "--server-pool",
        type=int,
        metavar="N",
        help="instead of the driver: vLLM's own renderer pool of N workers (`renderer_num_workers`), as the "
        "vllm-async backend uses it for Server, with every sample asked for at once",
    )
    parser.add_argument(
        "--all-at-once", action="store_true", help="with --server-pool: without FirstInputAlone"
    )
    parser.add_argument(
        "--cold",
        action="store_true",
        help="leave the model's processor to the first input, instead of loading it first as the engines do",
    )
    arguments = parser.parse_args()
    if arguments.all_at_once and not arguments.server_pool:
        parser.error("--all-at-once describes vLLM's renderer pool: give --server-pool N too")
    whisper = arguments.benchmark == "whisper"
    model = arguments.model or MODEL_FOLDERS[arguments.benchmark]
    if not (model / "preprocessor_config.json").is_file():
        print(
            f"error: {model} is no {arguments.benchmark} model folder (no preprocessor_config.json)",
            file=sys.stderr,
        )
        return 2
    if not whisper and (arguments.records is None or not arguments.records.is_dir()):
        print(
            "error: qwen3-vl needs --records DIR, a folder of records: make one with `submitter data synth "
            "--benchmark qwen3-vl-235b-a22b --samples 200 --out DIR`",
            file=sys.stderr,
        )
        return 2
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "WARNING")
    import vllm.platforms
    from vllm.platforms.cpu import CpuPlatform

    vllm.platforms._current_platform = CpuPlatform()  # no GPU here: vLLM would find no platform

    import torch
    from vllm import SamplingParams
    from vllm.engine.arg_utils import EngineArgs
    from vllm.renderers import renderer_from_config
    from vllm.v1.engine.input_processor import InputProcessor
    from vllm.v1.serial_utils import MsgpackEncoder

    from harness.engines.vllm_common import chat_renderer, engine_prompt, load_media_processor
    from harness.engines.vllm_offline import OfflineDriver

    if whisper:
        media_limit, feature, max_model_len = {"audio": 1}, "input_features", 448
    else:
        media_limit, feature, max_model_len = {"image": 1, "video": 0}, "pixel_values", 32_768
    config = EngineArgs(
        model=str(model),
        dtype="bfloat16",
        max_model_len=max_model_len,
        limit_mm_per_prompt=media_limit,
        mm_processor_cache_gb=0,
        **({"renderer_num_workers": arguments.server_pool} if arguments.server_pool else {}),
    ).create_engine_config()
    renderer = renderer_from_config(config)
    processor = InputProcessor(config, renderer)
    encoder = MsgpackEncoder()
    params = SamplingParams(max_tokens=200)
    samples = whisper_samples(arguments.clips) if whisper else image_samples(arguments.records)
    render_chat = None if whisper else chat_renderer(renderer.get_tokenizer())

    def prompt_for(sample: Any) -> Any:
        return engine_prompt(sample, render_chat)

    if not arguments.cold:
        started = time.perf_counter()
        load_media_processor(renderer)
        print(
            f"the processor loaded first, as the engines' start does: {time.perf_counter() - started:.1f} s"
        )

    if arguments.server_pool:
        prompts = [prompt_for(sample) for sample in samples]
        first_alone = not arguments.all_at_once
        seconds, first = asyncio.run(pool_rate(renderer, prompts, first_alone))
        how = "the first alone (FirstInputAlone)" if first_alone else "all at once"
        print(
            f"{len(prompts)} samples, {os.cpu_count()} CPUs, vLLM's renderer pool of {arguments.server_pool}"
        )
        print("| inputs asked | samples/s | first made after s |")
        print("|---|---|---|")
        print(f"| {how} | {len(prompts) / seconds:.1f} | {first:.2f} |")
        return 0

    class FrontEndOnly:
        """`LLMEngine` with the front end's work done for real and an engine core that answers at once."""

        def __init__(self) -> None:
            self.running: deque[str] = deque()
            self.features: dict[str, Any] = {}
            self.first_added: float | None = None

        def add_request(self, request_id: str, prompt: Any, sampling: Any) -> None:
            request = processor.process_inputs(request_id, prompt, sampling, supported_tasks=("generate",))
            encoder.encode(request)
            self.features[request_id] = request.mm_features[0].data.get_data()[feature]
            self.running.append(request_id)
            if self.first_added is None:
                self.first_added = time.perf_counter()

        def has_unfinished_requests(self) -> bool:
            return bool(self.running)

        def step(self) -> list[Any]:
            finished = [self.running.popleft() for _ in range(len(self.running))]
            return [_Output(request_id) for request_id in finished]

    class Answers:
        def __init__(self) -> None:
            self.failed: dict[int, str] = {}

        def first_token(self, sample_id: int, token_ids: Any) -> None: ...

        def complete(self, sample_id: int, token_ids: Any) -> None: ...

        def fail(self, sample_id: int, reason: str) -> None:
            self.failed[sample_id] = reason

    what = f"{len(samples)} clips" if whisper else f"{len(samples)} records of {arguments.records}"
    print(f"{what}, {os.cpu_count()} CPUs, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}")
    print("| workers | samples/s | ms per sample | first handed over after s | features equal vLLM's own |")
    print("|---|---|---|---|---|")
    for workers in arguments.workers:
        engine, answers = FrontEndOnly(), Answers()
        driver = OfflineDriver(
            engine,
            lambda sample: params,
            prompt_for,
            renderer=renderer,
            workers=workers or None,
            window=512,
        )
        incoming: queue.Queue[Any] = queue.Queue()
        incoming.put((samples, answers))
        incoming.put(None)
        started = time.perf_counter()
        driver.run(incoming)
        seconds = time.perf_counter() - started
        if driver.failure is not None or answers.failed:
            print(f"error: workers {workers}: {driver.failure or answers.failed}", file=sys.stderr)
            return 1
        checked = (0, len(samples) // 2, len(samples) - 1)
        equal = all(
            torch.equal(
                engine.features[str(n)],
                processor.process_inputs(
                    f"check-{n}", prompt_for(samples[n]), params, supported_tasks=("generate",)
                )
                .mm_features[0]
                .data.get_data()[feature],
            )
            for n in checked
        )
        rate = len(samples) / seconds
        first = (engine.first_added or started) - started
        print(
            f"| {workers or 'vLLM serial'} | {rate:.1f} | {1000 / rate:.2f} | {first:.2f} "
            f"| {'yes' if equal else 'NO'} |"
        )
    return 0


async def pool_rate(renderer: Any, prompts: list[Any], first_alone: bool) -> tuple[float, float]:
    """Seconds to make every prompt's input on vLLM's renderer pool, asked for at once, and seconds until
    the first was made."""
    from harness.engines.vllm_async import FirstInputAlone

    async def all_at_once(prompt: Any) -> Any:
        return (await renderer.render_cmpl_async([prompt]))[0]

    make = FirstInputAlone(renderer) if first_alone else all_at_once
    started = time.perf_counter()
    made_at: list[float] = []

    async def timed(prompt: Any) -> None:
        await make(prompt)
        made_at.append(time.perf_counter() - started)

    await asyncio.gather(*(timed(prompt) for prompt in prompts))
    return time.perf_counter() - started, min(made_at)


def whisper_samples(clips: int) -> list[Any]:
    import numpy as np

    from harness.engines.base import Sample
    from harness.media import AudioClip

    generator = np.random.default_rng(20261126)
    return [
        Sample(
            id=n,
            index=n,
            prompt=WHISPER_DECODER_PROMPT,
            media=AudioClip(
                (generator.standard_normal(int(16_000 * generator.uniform(5, 30))) * 0.1).astype(np.float32),
                16_000,
            ),
        )
        for n in range(clips)
    ]


def image_samples(records: Path) -> list[Any]:
    from harness.benchmarks.qwen3_vl_235b_a22b.dataset import load_samples
    from harness.engines.base import Sample

    prompts = load_samples(records)
    assert prompts.media is not None
    return [Sample(id=n, index=n, prompt=[], media=media) for n, media in enumerate(prompts.media)]


class _Completion:
    def __init__(self) -> None:
        self.token_ids = [50257]


class _Output:
    def __init__(self, request_id: str) -> None:
        self.request_id = request_id
        self.finished = True
        self.outputs = [_Completion()]


if __name__ == "__main__":
    sys.exit(main())
