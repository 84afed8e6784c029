"""The raw engine's Offline ceiling: vLLM's LLM.generate on a descriptor's prompts, with the exact engine
arguments and sampling the harness would use, timed around generate alone. Compare with
`submitter run --smoke --smoke-samples N` on the same prompts (bench/gpu_offline_compare.sh).

    python bench/raw_offline.py --system gpu_dummy --samples 13368 --out raw.json
    python bench/raw_offline.py --system gpu_dummy --samples 2000 --set max_num_seqs=1024 --out sweep.json

`--set NAME=VALUE` replaces one engine argument (VALUE is read as JSON when it parses, else a string);
the engine-argument sweep (bench/gpu_capacity.sh) is made of such runs.

`--profile` records every GPU kernel of the pass with torch's profiler and adds where the time went to the
output: kernel time by kind (GEMM, attention, FP8 quantisation, ...), every kernel's time, and the share of
the pass the GPU was idle; `--summarize OUT_JSON` prints a saved profile's table by kind. vLLM then runs
its engine core in this process (VLLM_ENABLE_V1_MULTIPROCESSING=0) so that the profiler sees its kernels;
the timing is the profiler's, not a throughput figure.
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


# Kernel kinds, first match wins; a name is matched lower-cased. FlashAttention's kernels are CUTLASS
# templates and Inductor names a fused kernel after every operation in it, so the order matters: attention
# before GEMM, and the dynamic FP8 activation quantisation (a per-tensor abs-max reduction, then a scale,
# fused by Inductor with the RMSNorm or SiLU before it) before GEMM, whose op name its kernel carries.
KERNEL_KINDS: list[tuple[str, str]] = [
    ("attention", r"flash|fmha|attn|attention|paged|reshape_and_cache"),
    (
        "FP8 activation quantisation, fused with norm or SiLU",
        r"quant|amax|scaled_fp8|_abs_.*_max_|reciprocal",
    ),
    ("GEMM", r"gemm|cutlass|xmma|nvjet|scaled_mm|cublas|matmul|wgmma"),
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


def time_by_kind(kernels: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Kernel seconds by kind, largest first, from kernels given as {"name", "s"}."""
    total = sum(kernel["s"] for kernel in kernels)
    by_kind: dict[str, float] = {}
    for kernel in kernels:
        kind = kernel_kind(kernel["name"])
        by_kind[kind] = by_kind.get(kind, 0.0) + kernel["s"]
    return {
        kind: {"s": round(seconds, 3), "share_of_kernel_time": round(seconds / total, 4)}
        for kind, seconds in sorted(by_kind.items(), key=lambda item: item[1], reverse=True)
    }


def where_the_time_went(profiler: Any, wall_s: float) -> dict[str, Any]:
    """Kernel time by kind and every kernel, from the profiler's per-name totals."""
    kernels = []
    for event in profiler.key_averages():
        micros = getattr(event, "self_device_time_total", None) or getattr(event, "self_cuda_time_total", 0)
        if micros > 0:
            kernels.append({"name": event.key, "calls": int(event.count), "s": micros / 1e6})
    kernels.sort(key=lambda kernel: kernel["s"], reverse=True)
    busy_s = sum(kernel["s"] for kernel in kernels)
    return {
        "wall_s": round(wall_s, 3),
        "kernel_s": round(busy_s, 3),
        "gpu_idle_share": round(max(0.0, 1 - busy_s / wall_s), 4),
        "by_kind": time_by_kind(kernels),
        "kernels": [
            {**kernel, "s": round(kernel["s"], 4), "share_of_kernel_time": round(kernel["s"] / busy_s, 4)}
            for kernel in kernels
        ],
    }


def print_profile_summary(path: Path) -> None:
    """The kinds table of a saved profile, classified as this file does now (profiles written before all
    kernels were kept list the 30 busiest, which held 99.9 % of the kernel time)."""
    profile = json.loads(path.read_text())["profile"]
    kernels = profile.get("kernels") or profile["top_kernels"]
    idle = profile["gpu_idle_share"]
    print(f"{profile['kernel_s']} s of kernels in {profile['wall_s']} s; GPU idle {idle:.1%}")
    print("| kind | s | share of kernel time |\n|---|---|---|")
    for kind, share in time_by_kind(kernels).items():
        print(f"| {kind} | {share['s']} | {share['share_of_kernel_time']:.1%} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--system")
    parser.add_argument("--samples", type=int, default=13368)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", dest="changes")
    parser.add_argument("--profile", action="store_true", help="Record the pass's GPU kernels (see above).")
    parser.add_argument("--summarize", type=Path, metavar="OUT_JSON", help="Print a saved profile's kinds.")
    options = parser.parse_args()
    if options.summarize:
        print_profile_summary(options.summarize)
        return
    if not options.system or not options.out:
        parser.error("--system and --out are required for a pass")
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
