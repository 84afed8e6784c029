"""The raw engine's Offline ceiling: vLLM's LLM.generate on a descriptor's prompts, with the exact engine
arguments, environment and sampling the harness would use (a dummy-weight run's exact answer lengths
included), timed around generate alone. Compare with `submitter run --smoke --smoke-samples N` on the same
prompts (bench/gpu_offline_compare.sh). Text benchmarks only.

    python bench/raw_offline.py --system gpu_dummy --samples 13368 --out raw.json
    python bench/raw_offline.py --system gpu_dummy --samples 2000 --set max_num_seqs=1024 --out sweep.json
    python bench/raw_offline.py --system gpu_multi_dummy --benchmark mixtral-8x7b --round v6.0 \
        --samples 4000 --profile --out mixtral.json

`--set NAME=VALUE` replaces one engine argument (VALUE is read as JSON when it parses, else a string);
the engine-argument sweep (bench/gpu_capacity.sh) is made of such runs.

`--profile` records every GPU kernel of the pass with torch's profiler and adds where the time went to the
output: kernel time by kind (GEMM, attention, FP8 quantisation, ...), every kernel's time, and the share of
the pass the GPU was idle; `--summarize OUT_JSON` prints a saved profile's table by kind. On one GPU vLLM
then runs its engine core in this process (VLLM_ENABLE_V1_MULTIPROCESSING=0) so that the profiler sees its
kernels. A tensor- or pipeline-parallel engine's kernels run in its worker processes: there vLLM's own
profiler traces each worker, from step `--profile-after` for `--profile-steps` steps (a whole pass would be
gigabytes of trace), into OUT's folder `<OUT stem>.traces/`, and the output holds each worker's profile,
its idle share taken over the traced window. Either way the timing is the profiler's, not a throughput figure.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any, NoReturn

from harness.benchmarks.registry import load_plugin
from harness.engines.base import Sample
from harness.engines.vllm_common import (
    SamplingForSamples,
    engine_keyword_arguments,
    token_prompt,
    vllm_versions,
)
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
    # Tensor parallelism's all-reduce, NCCL's or a custom one (FlashInfer's fused with the RMSNorm).
    ("communication", r"allreduce|all_reduce|allgather|all_gather|reduce_scatter|nccl|cross_device|lamport"),
    ("attention", r"flash(?!infer::sampling)|fmha|attn|attention|paged|reshape_and_cache"),
    ("MoE experts and routing", r"moe|expert|topk_softmax|align_block_size"),
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


def kernel_profile(kernels: list[dict[str, Any]], wall_s: float, busy_s: float) -> dict[str, Any]:
    """A profile as the output holds it: kernels given as {"name", "calls", "s"}, the seconds profiled and
    the seconds in which some kernel ran; kernel time by kind and every kernel, largest first."""
    kernels = sorted(kernels, key=lambda kernel: kernel["s"], reverse=True)
    kernel_s = sum(kernel["s"] for kernel in kernels)
    return {
        "wall_s": round(wall_s, 3),
        "kernel_s": round(kernel_s, 3),
        "gpu_idle_share": round(max(0.0, 1 - busy_s / wall_s), 4) if wall_s else 0.0,
        "by_kind": time_by_kind(kernels),
        "kernels": [
            {**kernel, "s": round(kernel["s"], 4), "share_of_kernel_time": round(kernel["s"] / kernel_s, 4)}
            for kernel in kernels
        ],
    }


def where_the_time_went(profiler: Any, wall_s: float) -> dict[str, Any]:
    """The pass's profile from the in-process profiler's per-name totals (one stream: the kernels' sum is
    the time some kernel ran)."""
    kernels = []
    for event in profiler.key_averages():
        micros = getattr(event, "self_device_time_total", None) or getattr(event, "self_cuda_time_total", 0)
        if micros > 0:
            kernels.append({"name": event.key, "calls": int(event.count), "s": micros / 1e6})
    return kernel_profile(kernels, wall_s, busy_s=sum(kernel["s"] for kernel in kernels))


def _unusable(path: Path, why: str) -> NoReturn:
    print(f"{path}: {why}", file=sys.stderr)
    raise SystemExit(2)


def _read_json(path: Path) -> Any:
    """A saved output or a worker's trace, gzipped or not."""
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as stream:
            return json.load(stream)
    except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        _unusable(path, f"cannot be read as JSON ({exc})")


# The chrome-trace categories of GPU work in a torch profiler trace.
_GPU_EVENTS = {"kernel", "gpu_memcpy", "gpu_memset"}


def profile_of_trace(path: Path) -> dict[str, Any]:
    """One worker's GPU work from its torch profiler trace (a chrome trace, gzipped or not): kernel time by
    kind and every kernel, over the traced window, from the first kernel's start to the last one's end,
    and the share of it in which no kernel ran (kernels on several streams overlap: their union counts)."""
    trace = _read_json(path)
    events = trace.get("traceEvents") if isinstance(trace, dict) else None
    if not isinstance(events, list):
        _unusable(path, "no traceEvents list: not a torch profiler trace")
    try:
        spans = sorted(
            (float(event["ts"]), float(event["ts"]) + float(event.get("dur", 0)), event["name"])
            for event in events
            if event.get("ph") == "X" and event.get("cat") in _GPU_EVENTS
        )
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        _unusable(path, f"a GPU event without a number ts or dur, or a name ({exc!r})")
    if not spans:
        raise SystemExit(f"{path}: no GPU kernels in the trace (was the profiler's window past the pass?)")
    totals: dict[str, list[float]] = {}
    busy_us, covered_to = 0.0, spans[0][0]
    for start, end, name in spans:
        entry = totals.setdefault(name, [0, 0.0])
        entry[0] += 1
        entry[1] += end - start
        busy_us += max(0.0, end - max(start, covered_to))
        covered_to = max(covered_to, end)
    kernels = [
        {"name": name, "calls": int(calls), "s": micros / 1e6} for name, (calls, micros) in totals.items()
    ]
    return kernel_profile(kernels, wall_s=(covered_to - spans[0][0]) / 1e6, busy_s=busy_us / 1e6)


def print_profile_summary(path: Path) -> None:
    """The kinds table of a saved profile, classified as this file does now (profiles written before all
    kernels were kept list the 30 busiest, which held 99.9 % of the kernel time)."""
    saved = _read_json(path)
    # One profile from a one-GPU pass, or one per worker of a tensor- or pipeline-parallel engine.
    profiles = (saved.get("profiles") or {"": saved.get("profile")}) if isinstance(saved, dict) else None
    needed = {"kernel_s", "wall_s", "gpu_idle_share"}
    if not isinstance(profiles, dict) or not all(
        isinstance(profile, dict) and needed <= profile.keys() for profile in profiles.values()
    ):
        _unusable(
            path, "no profile or profiles with kernel_s, wall_s and gpu_idle_share: not this script's output"
        )
    for worker, profile in profiles.items():
        kernels = profile.get("kernels") or profile["top_kernels"]
        idle = profile["gpu_idle_share"]
        where = f"{worker}: " if worker else ""
        print(f"{where}{profile['kernel_s']} s of kernels in {profile['wall_s']} s; GPU idle {idle:.1%}")
        print("| kind | s | share of kernel time |\n|---|---|---|")
        for kind, share in time_by_kind(kernels).items():
            print(f"| {kind} | {share['s']} | {share['share_of_kernel_time']:.1%} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--system")
    parser.add_argument("--benchmark", default="llama3.1-8b")
    parser.add_argument("--round", dest="round_name", help="Run in this round instead of the descriptor's.")
    parser.add_argument("--samples", type=int, default=13368)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", dest="changes")
    parser.add_argument("--profile", action="store_true", help="Record the pass's GPU kernels (see above).")
    parser.add_argument(
        "--profile-after", type=int, default=200, help="Several GPUs: steps before the trace."
    )
    parser.add_argument("--profile-steps", type=int, default=50, help="Several GPUs: steps traced.")
    parser.add_argument("--summarize", type=Path, metavar="OUT_JSON", help="Print a saved profile's kinds.")
    options = parser.parse_args()
    if options.summarize:
        print_profile_summary(options.summarize)
        return
    if not options.system or not options.out:
        parser.error("--system and --out are required for a pass")

    # The harness's own plan supplies the engine spec and its environment, so both sides run the same.
    system = load_descriptor(descriptor_path(options.system))
    if options.round_name:
        system = system.model_copy(update={"round": options.round_name})
    if options.benchmark not in system.benchmarks:
        parser.error(
            f"{options.system} sets up no {options.benchmark}: one of {', '.join(system.benchmarks)}"
        )
    # One engine: a replicated setup's first replica, on its GPUs.
    one = system.benchmarks[options.benchmark].model_copy(update={"replicas": 1})
    system = system.model_copy(update={"benchmarks": {**system.benchmarks, options.benchmark: one}})
    plan = plan_run(
        RunRequest(
            system=system,
            benchmark=options.benchmark,
            scenario=Scenario.OFFLINE,
            mode=Mode.PERFORMANCE,
            smoke=Smoke(samples=options.samples),
        )
    )
    engine = plan.engine.model_copy(update={"args": {**plan.engine.args, **_changes(options.changes)}})
    os.environ.update(plan.engine_environment)
    traces = (
        options.out.resolve().with_suffix(".traces")
        if options.profile and engine.gpus_per_replica > 1
        else None
    )
    if options.profile and traces is None:
        os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
    generation = plan.benchmark.generation
    prompts = load_plugin(plan.plugin).load_samples(
        plan.dataset, limit=options.samples, max_input_tokens=generation.max_input_tokens if generation else 0
    )
    if prompts.media is not None:
        parser.error(f"{options.benchmark}'s samples carry audio or images: this pass sends token ids only")
    from vllm import LLM

    engine_args = engine_keyword_arguments(engine, harness_args=HARNESS_ARGS)
    arguments = dict(engine_args)
    if traces is not None:
        arguments["profiler_config"] = {
            "profiler": "torch",
            "torch_profiler_dir": str(traces),
            "torch_profiler_with_stack": False,
            "delay_iterations": options.profile_after,
            "max_iterations": options.profile_steps,
        }
    began = time.monotonic()
    llm = LLM(**arguments)
    requests = [token_prompt(ids) for ids in prompts.token_ids]
    lengths = prompts.output_lengths or (None,) * len(prompts)
    per_sample = SamplingForSamples(engine.generation, streaming=False)
    sampling = [
        per_sample(Sample(id=index, index=index, prompt=ids, reference_output_tokens=length))
        for index, (ids, length) in enumerate(zip(prompts.token_ids, lengths, strict=True))
    ]
    profiler = None
    if options.profile and traces is None:
        import torch.profiler

        llm.generate(requests[:64], sampling[:64], use_tqdm=False)  # warm-up: first-call work stays untraced
        profiler = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA])
        profiler.start()
    elif traces is not None:
        llm.start_profile()  # the workers trace from step --profile-after on
    started = time.monotonic()
    outputs = llm.generate(requests, sampling, use_tqdm=False)
    seconds = time.monotonic() - started
    if profiler is not None:
        profiler.stop()
    elif traces is not None:
        llm.stop_profile()
    tokens = sum(len(output.outputs[0].token_ids) for output in outputs)
    result = {
        "system": options.system,
        "benchmark": options.benchmark,
        "round": plan.rules.name,
        "samples": len(prompts),
        "output_tokens": tokens,
        "generate_s": round(seconds, 3),
        "tokens_per_second": round(tokens / seconds, 2),
        "engine_start_s": round(started - began, 3),
        "changes": options.changes,
        "engine_args": engine_args,
        "environment": plan.engine_environment,
        "versions": vllm_versions(),
    }
    if profiler is not None:
        result["profile"] = where_the_time_went(profiler, seconds)
    elif traces is not None:
        result["profiled_steps"] = {"after": options.profile_after, "steps": options.profile_steps}
        result["profiles"] = {
            trace.name.split(".")[0]: profile_of_trace(trace)
            for trace in sorted(traces.glob("*.pt.trace.json*"))
        }
    options.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({key: value for key, value in result.items() if key not in ("profile", "profiles")}))


if __name__ == "__main__":
    main()
