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
import sys
from dataclasses import dataclass
from pathlib import Path

from harness.engine_log import memory_in
from harness.model_size import Precision, model_size
from harness.stand_in_models import stand_in_config
from harness.topology import FIXED_RESERVE, GIB, memory_fit, place
from submitter.fileformats.run_record import EngineMemoryRecord, Gpu
from submitter.systems.descriptor import BenchmarkSetup

RESULTS = Path(__file__).resolve().parent / "results"
# (descriptor's label, nvidia-smi's name, total MiB, reserved MiB where a lease's gpu-memory.txt measured it:
# the four H200s of gpu-topology-405b-h200x4-20261127 reserved 616 MiB each, and torch's total was the rest).
H100 = ("H100-SXM", "NVIDIA H100 80GB HBM3", 81559, None)
H200 = ("H200", "NVIDIA H200", 143771, 616)
# Qwen3-VL's processor allows images of up to 16,777,216 pixels (bench/multimodal_model_folders.py writes its
# preprocessor_config.json), which vLLM's profiling pass encodes.
QWEN3_VL_MAX_PIXELS = 16_777_216


@dataclass(frozen=True)
class Run:
    log: str  # under bench/results
    benchmark: str
    gpu: tuple[str, str, int, int | None]
    tensor_parallel: int
    max_num_seqs: int
    max_num_batched_tokens: int
    max_pixels: int | None = None
    utilization: float = 0.92
    kv_cache_dtype: str = "fp8"


# The bench descriptors' engine arguments at the time of each lease (bench/RESULTS.md names the commits).
RUNS = (
    Run("gpu-topology-h100x4-20261126/run-all.log", "llama2-70b-99.9", H100, 2, 512, 16384),
    Run("gpu-topology-mixtral-h100x2-20261127/run-all.log.xz", "mixtral-8x7b", H100, 2, 512, 16384),
    Run("gpu-raw-mixtral-h100-20261127/raw-profile.log", "mixtral-8x7b", H100, 1, 512, 16384),
    Run("gpu-topology-gptoss-h100x2-20261127/run-all.log.xz", "gpt-oss-120b", H100, 1, 256, 16384),
    Run("gpu-topology-gptoss-h100x4-20261127/full-length/run-all.log.xz", "gpt-oss-120b", H100, 2, 256, 1024),
    Run(
        "gpu-topology-gptoss-h200x4-20261127/one-replica-600/run-all.log.xz", "gpt-oss-120b", H200, 1, 256,
        1024,
    ),
    Run(
        "gpu-topology-qwen3vl-h100x4-20261126/eager-600/run-all.log.xz", "qwen3-vl-235b-a22b", H100, 4, 256,
        16384, QWEN3_VL_MAX_PIXELS,
    ),
    Run(
        "gpu-topology-qwen3vl-h200x2-20261127/shortened-5200/run-all.log.xz", "qwen3-vl-235b-a22b", H200, 2,
        256, 16384, QWEN3_VL_MAX_PIXELS,
    ),
    Run(
        "gpu-topology-whisper-waves-h100x2-20261127/one-replica/run-all.log.xz", "whisper", H100, 1, 256,
        16384, utilization=0.9, kv_cache_dtype="auto",
    ),
    Run(
        "gpu-topology-405b-h200x4-20261127/stopped-2000-token-answers/run-all.log.xz", "llama3.1-405b", H200,
        4, 64, 16384,
    ),
)  # fmt: skip


def vllm_accounting(log: Path) -> EngineMemoryRecord | None:
    """vLLM's accounting in a lease's log (its first GPU worker's), as run.json now records it."""
    opener = lzma.open if log.suffix == ".xz" else open
    with opener(log, "rt", encoding="utf-8", errors="replace") as lines:
        return memory_in(lines.read())


def planned(run: Run) -> tuple[float, float, float, float]:
    """(weights, profiling pass, fixed reserve, KV cache) in GiB per GPU, as preflight plans the run."""
    config, _ = stand_in_config(run.benchmark, precision="published")
    label, name, mib, reserved_mib = run.gpu
    reserved = f"{reserved_mib} MiB" if reserved_mib is not None else None
    gpus = [
        Gpu(index=n, name=name, memory=f"{mib} MiB", driver="", reserved=reserved)
        for n in range(run.tensor_parallel)
    ]
    setup = BenchmarkSetup.model_validate(
        {"backend": "vllm", "model_path": "m", "tensor_parallel_size": run.tensor_parallel,
         "scenarios": {"Offline": {}}}
    )  # fmt: skip
    placement = place(setup, gpus, {}, label)
    # max_model_len changes how many sequences, not the GiB compared here.
    args = {
        "kv_cache_dtype": run.kv_cache_dtype,
        "gpu_memory_utilization": run.utilization,
        "max_model_len": 8192,
        "max_num_seqs": run.max_num_seqs,
        "max_num_batched_tokens": run.max_num_batched_tokens,
    }
    size = model_size(config)
    fit = memory_fit(size, Precision.of(config), placement, args, max_pixels=run.max_pixels)
    return fit.weights / GIB, (fit.reserve - FIXED_RESERVE) / GIB, FIXED_RESERVE / GIB, fit.kv_cache / GIB


def main() -> int:
    print(
        "| run (bench/results/...) | GPU, TP | weights: plan / vLLM | profiling pass: plan / vLLM peak "
        "| fixed 2.0 / vLLM non-torch + graphs | KV cache: plan / vLLM |"
    )
    print("|---|---|---|---|---|---|")
    for run in RUNS:
        found = vllm_accounting(RESULTS / run.log)
        if found is None or found.peak_activation_gib is None or found.kv_cache_gib is None:
            print(f"{run.log}: no vLLM accounting in the log", file=sys.stderr)
            continue
        plan_weights, plan_pass, fixed, plan_kv = planned(run)
        overhead = (found.non_torch_gib or 0) + (found.cuda_graphs_gib or 0)
        print(
            f"| `{run.log.split('/')[0]}` {run.benchmark} | {run.gpu[0]}, TP={run.tensor_parallel} "
            f"| {plan_weights:.2f} / {found.weights_gib:.2f} "
            f"| {plan_pass:.2f} / {found.peak_activation_gib:.2f} "
            f"| {fixed:.1f} / {overhead:.2f} | {plan_kv:.2f} / {found.kv_cache_gib:.2f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
