"""The raw engine's Offline ceiling: vLLM's LLM.generate on a descriptor's prompts, with the exact engine
arguments and sampling the harness would use, timed around generate alone. Compare with
`submitter run --smoke --smoke-samples N` on the same prompts (bench/gpu_offline_compare.sh).

    python bench/raw_offline.py --system gpu_dummy --samples 13368 --out raw.json
    python bench/raw_offline.py --system gpu_dummy --samples 2000 --set max_num_seqs=1024 --out sweep.json

`--set NAME=VALUE` replaces one engine argument (VALUE is read as JSON when it parses, else a string);
the engine-argument sweep (bench/gpu_capacity.sh) is made of such runs.

`--profile` records every GPU kernel of the pass with torch's profiler and adds where the time went to the
output: kernel time by kind (GEMM, attention, FP8 quantisation, ...), the busiest kernels, and the share of
the pass the GPU was idle. vLLM then runs its engine core in this process (VLLM_ENABLE_V1_MULTIPROCESSING=0)
so that the profiler sees its kernels; the timing is the profiler's, not a throughput figure.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from pathlib import Path
from typing import Any

from harness.benchmarks.llama3_1_8b.dataset import load_prompts
from harness.engines.vllm_common import engine_keyword_arguments, sampling_params, token_prompt, vllm_versions
from harness.engines.vllm_offline import HARNESS_ARGS
from harness.loadgen_settings import Smoke
from harness.runner import RunRequest, plan_run
from submitter.fileformats.run_mode import Mode
from submitter.rounds.models import Scenario
from submitter.systems.catalog import descriptor_path
from submitter.systems.validate import load_descriptor


def _changes(assignments: list[str]) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    for assignment in assignments:
        name, _, text = assignment.partition("=")
        try:
            changes[name] = json.loads(text)
        except json.JSONDecodeError:
            changes[name] = text
    return changes


# Kernel kinds, first match wins: a name is matched lower-cased. Inductor's fused kernels are named after
# the operations they fuse (triton_red_fused_..._amax_...), so quantisation is looked for before norms.
KERNEL_KINDS: list[tuple[str, str]] = [
    ("GEMM", r"gemm|cutlass|xmma|nvjet|scaled_mm|cublas|matmul|sm90_|wgmma"),
    ("attention", r"flash|fmha|attn|attention|paged|merge_attn|reshape_and_cache"),
    ("FP8 activation quantisation", r"quant|amax|scaled_fp8|fp8"),
    ("norm", r"rms|norm"),
    ("activation", r"silu|act_and_mul|gelu"),
    ("rotary", r"rotary|rope"),
    ("sampling and logits", r"softmax|topk|top_k|argmax|sampl|logit|gumbel|exponential"),
    ("copies", r"memcpy|memset|copy|cat|index"),
    ("other Inductor-fused", r"triton_"),
]


def kernel_kind(name: str) -> str:
    lowered = name.lower()
    return next((kind for kind, pattern in KERNEL_KINDS if re.search(pattern, lowered)), "other")


def where_the_time_went(profiler: Any, wall_s: float) -> dict[str, Any]:
    """Kernel time by kind and the busiest kernels, from the profiler's per-name averages."""
    kernels = []
    for event in profiler.key_averages():
        micros = getattr(event, "self_device_time_total", None) or getattr(event, "self_cuda_time_total", 0)
        if micros > 0:
            kernels.append((event.key, int(event.count), micros / 1e6))
    busy_s = sum(seconds for _, _, seconds in kernels)
    by_kind: dict[str, float] = {}
    for name, _, seconds in kernels:
        by_kind[kernel_kind(name)] = by_kind.get(kernel_kind(name), 0.0) + seconds
    kernels.sort(key=lambda kernel: kernel[2], reverse=True)
    return {
        "wall_s": round(wall_s, 3),
        "kernel_s": round(busy_s, 3),
        "gpu_idle_share": round(max(0.0, 1 - busy_s / wall_s), 4),
        "by_kind": {
            kind: {"s": round(seconds, 3), "share_of_kernel_time": round(seconds / busy_s, 4)}
            for kind, seconds in sorted(by_kind.items(), key=lambda item: item[1], reverse=True)
        },
        "top_kernels": [
            {
                "name": name[:160],
                "kind": kernel_kind(name),
                "calls": calls,
                "s": round(seconds, 4),
                "share_of_kernel_time": round(seconds / busy_s, 4),
            }
            for name, calls, seconds in kernels[:30]
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--system", required=True)
    parser.add_argument("--samples", type=int, default=13368)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", dest="changes")
    parser.add_argument("--profile", action="store_true", help="Record the pass's GPU kernels (see above).")
    options = parser.parse_args()
    if options.profile:
        os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"

    # The harness's own plan supplies the engine spec, so both sides run the same arguments.
    plan = plan_run(
        RunRequest(
            system=load_descriptor(descriptor_path(options.system)),
            benchmark="llama3.1-8b",
            scenario=Scenario.OFFLINE,
            mode=Mode.PERFORMANCE,
            smoke=Smoke(samples=options.samples),
        )
    )
    engine = plan.engine.model_copy(update={"args": {**plan.engine.args, **_changes(options.changes)}})
    prompts = load_prompts(plan.dataset, limit=options.samples)
    from vllm import LLM

    began = time.monotonic()
    llm = LLM(**engine_keyword_arguments(engine, harness_args=HARNESS_ARGS))
    requests = [token_prompt(ids) for ids in prompts.token_ids]
    sampling = sampling_params(engine.generation, streaming=False)
    profiler = None
    if options.profile:
        import torch.profiler

        llm.generate(requests[:64], sampling, use_tqdm=False)  # warm-up: first-call work stays untraced
        profiler = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA])
        profiler.start()
    started = time.monotonic()
    outputs = llm.generate(requests, sampling, use_tqdm=False)
    seconds = time.monotonic() - started
    if profiler is not None:
        profiler.stop()
    tokens = sum(len(output.outputs[0].token_ids) for output in outputs)
    result = {
        "system": options.system,
        "samples": len(prompts),
        "output_tokens": tokens,
        "generate_s": round(seconds, 3),
        "tokens_per_second": round(tokens / seconds, 2),
        "engine_start_s": round(started - began, 3),
        "changes": options.changes,
        "engine_args": engine_keyword_arguments(engine, harness_args=HARNESS_ARGS),
        "versions": vllm_versions(),
    }
    if profiler is not None:
        result["profile"] = where_the_time_went(profiler, seconds)
    options.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
