"""How fast the `vllm` backend's driver hands whisper samples to vLLM, on the CPU alone: vLLM's own renderer
and input processor make each sample's inputs (the log-mel features) exactly as `LLMEngine.add_request`
does, through `harness.engines.vllm_offline.OfflineDriver`, with the front end's work (`process_inputs`
and the msgpack encoding of the request for the engine core) done for real and only the engine core
replaced by one that finishes every request at once. Workers 0 is vLLM's own path (inputs made one at a
time inside `add_request`); N > 0 makes them on N threads, as the harness does where the plan gives
renderer workers. It also checks that the features handed over equal those vLLM makes itself.

Needs vLLM importable on this machine's Python 3.12: the staged site (`mkdir -p /tmp/vllm-site && cat
.stage/site/p0*/site.0* | tar xJ -C /tmp/vllm-site`) beside torch, torchaudio, transformers and numpy from
PyPI in a 3.12 venv, and a whisper model folder without weights (`.stage/mm/whisper-large-v3`, from
bench/multimodal_model_folders.py). vLLM finds no GPU platform here, so this script selects its CPU
platform itself before anything else of vLLM is imported. Run from the checkout:

    PYTHONPATH=/tmp/vllm-site:$PWD OMP_NUM_THREADS=1 python bench/media_inputs_cpu.py --workers 0 1 2
"""

from __future__ import annotations

import argparse
import os
import queue
import sys
import time
from collections import deque
from pathlib import Path
from typing import Any

# <|startoftranscript|><|en|><|transcribe|><|notimestamps|>
WHISPER_DECODER_PROMPT = [50258, 50259, 50360, 50364]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", type=Path, default=Path(".stage/mm/whisper-large-v3"))
    parser.add_argument("--clips", type=int, default=96, help="distinct clips, 5 to 30 s each")
    parser.add_argument("--workers", type=int, nargs="+", default=[0, 1, 2])
    arguments = parser.parse_args()
    if not (arguments.model / "preprocessor_config.json").is_file():
        print(
            f"error: {arguments.model} is no whisper model folder (no preprocessor_config.json)",
            file=sys.stderr,
        )
        return 2
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "WARNING")
    import vllm.platforms
    from vllm.platforms.cpu import CpuPlatform

    vllm.platforms._current_platform = CpuPlatform()  # no GPU here: vLLM would find no platform

    import numpy as np
    import torch
    from vllm import SamplingParams
    from vllm.engine.arg_utils import EngineArgs
    from vllm.renderers import renderer_from_config
    from vllm.v1.engine.input_processor import InputProcessor
    from vllm.v1.serial_utils import MsgpackEncoder

    from harness.engines.base import Sample
    from harness.engines.vllm_common import engine_prompt
    from harness.engines.vllm_offline import OfflineDriver
    from harness.media import AudioClip

    config = EngineArgs(
        model=str(arguments.model),
        dtype="bfloat16",
        max_model_len=448,
        limit_mm_per_prompt={"audio": 1},
        mm_processor_cache_gb=0,
    ).create_engine_config()
    renderer = renderer_from_config(config)
    processor = InputProcessor(config, renderer)
    encoder = MsgpackEncoder()
    params = SamplingParams(max_tokens=200)

    class FrontEndOnly:
        """`LLMEngine` with the front end's work done for real and an engine core that answers at once."""

        def __init__(self) -> None:
            self.running: deque[str] = deque()
            self.features: dict[str, Any] = {}

        def add_request(self, request_id: str, prompt: Any, sampling: Any) -> None:
            request = processor.process_inputs(request_id, prompt, sampling, supported_tasks=("generate",))
            encoder.encode(request)
            self.features[request_id] = request.mm_features[0].data.get_data()["input_features"]
            self.running.append(request_id)

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

    generator = np.random.default_rng(20261126)
    samples = [
        Sample(
            id=n,
            index=n,
            prompt=WHISPER_DECODER_PROMPT,
            media=AudioClip(
                (generator.standard_normal(int(16_000 * generator.uniform(5, 30))) * 0.1).astype(np.float32),
                16_000,
            ),
        )
        for n in range(arguments.clips)
    ]
    print(
        f"{arguments.clips} clips, {os.cpu_count()} CPUs, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}"
    )
    print("| workers | samples/s | ms per sample | features equal vLLM's own |")
    print("|---|---|---|---|")
    for workers in arguments.workers:
        engine, answers = FrontEndOnly(), Answers()
        driver = OfflineDriver(
            engine,
            lambda sample: params,
            lambda sample: engine_prompt(sample, None),
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
                    f"check-{n}", engine_prompt(samples[n], None), params, supported_tasks=("generate",)
                )
                .mm_features[0]
                .data.get_data()["input_features"],
            )
            for n in checked
        )
        rate = len(samples) / seconds
        print(f"| {workers or 'vLLM serial'} | {rate:.1f} | {1000 / rate:.2f} | {'yes' if equal else 'NO'} |")
    return 0


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
