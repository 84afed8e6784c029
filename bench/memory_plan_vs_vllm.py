"""Preflight's memory plan beside what vLLM itself found, for every lease whose log kept vLLM's accounting.

vLLM 0.26 logs, once its profiling pass is done: "Actual usage is W GiB for weight, P GiB for peak
activation, N GiB for non-torch memory, and G GiB for CUDAGraph memory", and "Available KV cache memory: K
GiB". This script plans each of those runs again on this machine (the stand-in's config.json, the run's
topology and engine arguments, the GPU as nvidia-smi lists it) and prints one markdown row per run: the
plan's weights, profiling pass (activations and logits) and KV cache beside vLLM's, GiB per GPU.

    python bench/memory_plan_vs_vllm.py            # the table, into bench/RESULTS.md by hand
"""

from __future__ import annotations

import lzma
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.model_size import Precision, model_size
from harness.stand_in_models import stand_in_config
from harness.topology import GIB, memory_fit, place
from submitter.fileformats.run_record import Gpu
from submitter.systems.descriptor import BenchmarkSetup

RESULTS = Path(__file__).resolve().parent / "results"
H100 = ("H100-SXM", "NVIDIA H100 80GB HBM3", 81559)
H200 = ("H200", "NVIDIA H200", 143771)
# Qwen3-VL's processor allows images of up to 16,777,216 pixels (bench/multimodal_model_folders.py writes its
# preprocessor_config.json), which vLLM's profiling pass encodes.
QWEN3_VL_MAX_PIXELS = 16_777_216
ACCOUNTING = re.compile(
    r"Actual usage is ([\d.]+) GiB for weight, ([\d.]+) GiB for peak activation, ([\d.]+) GiB for non-torch "
    r"memory, and ([\d.]+) GiB for CUDAGraph memory"
)
AVAILABLE_KV = re.compile(r"Available KV cache memory: ([\d.]+) GiB")


@dataclass(frozen=True)
class Run:
    log: str  # under bench/results
    benchmark: str
    gpu: tuple[str, str, int]
    tensor_parallel: int
    engine_args: dict[str, Any]
    max_pixels: int | None = None


# The bench descriptors' engine arguments at the time of each lease (bench/RESULTS.md names the commits).
RUNS = (
    Run(
        "gpu-topology-h100x4-20261126/run-all.log", "llama2-70b-99.9", H100, 2,
        {"max_num_seqs": 512, "max_num_batched_tokens": 16384, "max_model_len": 2048},
    ),
    Run(
        "gpu-topology-mixtral-h100x2-20261127/run-all.log.xz", "mixtral-8x7b", H100, 2,
        {"max_num_seqs": 512, "max_num_batched_tokens": 16384, "max_model_len": 3072},
    ),
    Run(
        "gpu-raw-mixtral-h100-20261127/raw-profile.log", "mixtral-8x7b", H100, 1,
        {"max_num_seqs": 512, "max_num_batched_tokens": 16384, "max_model_len": 3072},
    ),
    Run(
        "gpu-topology-gptoss-h100x2-20261127/run-all.log.xz", "gpt-oss-120b", H100, 1,
        {"max_num_seqs": 256, "max_num_batched_tokens": 16384, "max_model_len": 20480},
    ),
    Run(
        "gpu-topology-gptoss-h100x4-20261127/full-length/run-all.log.xz", "gpt-oss-120b", H100, 2,
        {"max_num_seqs": 256, "max_num_batched_tokens": 1024, "max_model_len": 20480},
    ),
    Run(
        "gpu-topology-qwen3vl-h100x4-20261126/eager-600/run-all.log.xz", "qwen3-vl-235b-a22b", H100, 4,
        {"max_num_seqs": 256, "max_num_batched_tokens": 16384, "max_model_len": 32768}, QWEN3_VL_MAX_PIXELS,
    ),
    Run(
        "gpu-topology-qwen3vl-h200x2-20261127/shortened-5200/run-all.log.xz", "qwen3-vl-235b-a22b", H200, 2,
        {"max_num_seqs": 256, "max_num_batched_tokens": 16384, "max_model_len": 32768}, QWEN3_VL_MAX_PIXELS,
    ),
)  # fmt: skip


def vllm_accounting(log: Path) -> tuple[float, float, float, float, float] | None:
    """(weights, peak activation, non-torch, CUDA graphs, KV cache) in GiB, from the log's first engine."""
    opener = lzma.open if log.suffix == ".xz" else open
    with opener(log, "rt", encoding="utf-8", errors="replace") as lines:
        text = lines.read()
    usage, kv = ACCOUNTING.search(text), AVAILABLE_KV.search(text)
    if usage is None or kv is None:
        return None
    return (*(float(value) for value in usage.groups()), float(kv.group(1)))  # type: ignore[return-value]


def planned(run: Run) -> tuple[float, float, float, float]:
    """(weights, profiling pass, fixed reserve, KV cache) in GiB per GPU, as preflight plans the run."""
    config, _ = stand_in_config(run.benchmark, precision="published")
    label, name, mib = run.gpu
    gpus = [Gpu(index=n, name=name, memory=f"{mib} MiB", driver="") for n in range(run.tensor_parallel)]
    setup = BenchmarkSetup.model_validate(
        {"backend": "vllm", "model_path": "m", "tensor_parallel_size": run.tensor_parallel,
         "scenarios": {"Offline": {}}}
    )  # fmt: skip
    placement = place(setup, gpus, {}, label)
    args = {"kv_cache_dtype": "fp8", "gpu_memory_utilization": 0.92, **run.engine_args}
    size = model_size(config)
    fit = memory_fit(size, Precision.of(config), placement, args, max_pixels=run.max_pixels)
    pass_bytes = fit.reserve - (2 * GIB)  # the fixed part is harness.topology's _FIXED_RESERVE
    return fit.weights / GIB, pass_bytes / GIB, 2.0, fit.kv_cache / GIB


def main() -> int:
    print(
        "| run (bench/results/...) | GPU, TP | weights: plan / vLLM | profiling pass: plan / vLLM peak "
        "| fixed 2.0 / vLLM non-torch + graphs | KV cache: plan / vLLM |"
    )
    print("|---|---|---|---|---|---|")
    for run in RUNS:
        found = vllm_accounting(RESULTS / run.log)
        if found is None:
            print(f"{run.log}: no vLLM accounting in the log", file=sys.stderr)
            continue
        weights, peak, non_torch, graphs, kv = found
        plan_weights, plan_pass, fixed, plan_kv = planned(run)
        print(
            f"| `{run.log.split('/')[0]}` {run.benchmark} | {run.gpu[0]}, TP={run.tensor_parallel} "
            f"| {plan_weights:.2f} / {weights:.2f} | {plan_pass:.2f} / {peak:.2f} "
            f"| {fixed:.1f} / {non_torch + graphs:.2f} | {plan_kv:.2f} / {kv:.2f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
