"""What an engine's log says of its memory: vLLM's own accounting, read from a lease's real log."""

from __future__ import annotations

import lzma
from pathlib import Path

from harness.engine_log import engine_memory
from harness.runner import _with_engine_memory
from submitter.fileformats.run_record import EngineMemoryRecord, ReplicaRecord, TopologyRecord

LEASE_LOG = (
    Path(__file__).resolve().parents[1]
    / "bench/results/gpu-topology-qwen3vl-h200x2-20261127/shortened-5200/run-all.log.xz"
)


def test_vllm_s_accounting_is_read_from_its_log(tmp_path: Path) -> None:
    # qwen3-vl on two H200s (bench/RESULTS.md, the thirteenth lease's 5,200 records): vLLM 0.26 printed
    # "Available KV cache memory: 10.63 GiB", "GPU KV cache size: 237,072 tokens" and "Actual usage is 111.6
    # GiB for weight, 3.93 GiB for peak activation, 1.12 GiB for non-torch memory, and 1.37 GiB for CUDAGraph
    # memory" (each TP worker prints its own; the first is read).
    log = tmp_path / "engine.log"
    log.write_bytes(lzma.decompress(LEASE_LOG.read_bytes()))
    assert engine_memory(log) == EngineMemoryRecord(
        weights_gib=111.6,
        peak_activation_gib=3.93,
        non_torch_gib=1.12,
        cuda_graphs_gib=1.37,
        kv_cache_gib=10.63,
        kv_cache_tokens=237_072,
    )
    group = ReplicaRecord(replica=0, gpus=[0, 1], bus_ids=["00000000:00:06.0", "00000000:00:07.0"])
    topology = TopologyRecord(tensor_parallel_size=2, pipeline_parallel_size=1, replicas=[group])
    recorded = _with_engine_memory(topology, log)
    assert recorded is not None and recorded.engine_memory == engine_memory(log)
    assert _with_engine_memory(topology, None) == topology and _with_engine_memory(None, log) is None


def test_a_log_without_the_accounting_says_nothing(tmp_path: Path) -> None:
    quiet = tmp_path / "engine.log"
    quiet.write_text("synthetic engine: 8 sequence(s) at once, model synthetic\n", encoding="utf-8")
    assert engine_memory(quiet) is None
    assert engine_memory(tmp_path / "missing.log") is None
    # Only the KV cache reported (an engine that logs no accounting line): the rest stays unknown.
    partial = tmp_path / "partial.log"
    partial.write_text("INFO [gpu_worker.py:560] Available KV cache memory: 39.3 GiB\n", encoding="utf-8")
    assert engine_memory(partial) == EngineMemoryRecord(kv_cache_gib=39.3)
