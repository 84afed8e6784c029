"""The CPUs of the engines on one host: vLLM's engine core on one torch thread, the inputs of samples with
audio or images made on several threads beside it, and each replica on its own share of the host's cores,
so that engines do not fight over them.

Every vLLM engine is two busy processes: the harness's, with vLLM's front end, which makes the engine's
inputs, and vLLM's engine core. PyTorch gives each as many threads as the host has cores. One whisper engine
alone on an H100 of a 64-core host kept its engine core at 1,000-3,600 % CPU with the GPU 45-77 % busy
(41.9 samples/s); four of them loaded every core (load average 146) and together ran at under 0.56 of four
times one. With one torch thread per process and a share each, four ran at 186.5 samples/s, 46.6 each,
with the load average at 8 (bench/RESULTS.md, 2026-11-26). So where the descriptor's `environment` does not
set `OMP_NUM_THREADS`, the engine starts with one thread (`with_engine_threads`; vLLM's engine core inherits
it, and vLLM makes the same choice for its own tensor-parallel workers).

Each replica was then bound by its front end: vLLM makes a sample's inputs (whisper's log-mel features, 11-12
ms of torch operations on one thread) inside `add_request`, one sample at a time, always on the one torch
thread `OMP_NUM_THREADS` gives it. Two whisper replicas on two H100s handed over 37 samples/s each, their
GPUs half idle. So a media engine's inputs are made on `front_end_threads` threads, each with vLLM's
renderer (harness.engines.vllm_offline, vllm_async), unless the descriptor chose how they are made
(`renderer_workers`). Each replica's share is taken from the CPUs near its first GPU (the card's NUMA
node, which Linux lists in /sys/bus/pci/devices/BUS/local_cpulist) and made of whole cores, so two
replicas never share a core's hyper-threads.

`split_cpus` decides the shares from facts read once by `read_host` (the edge); preflight records them in
the placement and run.json, and the replica processes pin themselves to them (harness.engines.replicas).
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The torch threads of an engine's processes where the descriptor sets none: vLLM's own choice for the
# worker processes of a tensor-parallel engine (multiproc_executor, "Reducing Torch parallelism").
ENGINE_TORCH_THREADS = "1"
TORCH_THREADS_VARIABLE = "OMP_NUM_THREADS"

_SYSFS = Path("/sys")


@dataclass(frozen=True)
class HostCpus:
    """What decides the shares: the CPUs this process may use, which core each belongs to (CPUs of one
    core are hyper-threads of each other), and, per replica, the CPUs near its first GPU (None: unknown)."""

    usable: tuple[int, ...]
    core_of: Mapping[int, Hashable]
    near_gpu: tuple[frozenset[int] | None, ...]


def with_engine_threads(environment: Mapping[str, str]) -> dict[str, str]:
    """The variables of an engine whose threads the harness sets: one torch thread for vLLM's engine core,
    which the process that starts it passes on."""
    return {**environment, TORCH_THREADS_VARIABLE: ENGINE_TORCH_THREADS}


def front_end_threads(usable_cpus: int) -> int:
    """The threads that make a media engine's inputs, beside its engine core: half the CPUs the process
    feeding the engine may use (at least one), the rest left to the engine core and vLLM's other threads."""
    return max(1, usable_cpus // 2)


def renderer_workers(
    media: str | None, harness_sets_threads: bool, engine_args: Mapping[str, Any], cpus: int
) -> int | None:
    """The threads that make a media engine's inputs, each with vLLM's renderer: `front_end_threads` of the
    `cpus` the process feeding it may use. None, so that vLLM makes them one at a time, for token prompts,
    where the descriptor sets the threads, or where it chose how inputs are made: its own renderer pool
    (`renderer_num_workers`), or a processor cache (`mm_processor_cache_gb`), which threads cannot share."""
    chosen = "renderer_num_workers" in engine_args or bool(engine_args.get("mm_processor_cache_gb"))
    if media is None or not harness_sets_threads or chosen:
        return None
    return front_end_threads(cpus)


def split_cpus(host: HostCpus) -> tuple[tuple[int, ...], ...] | None:
    """Replica r's CPUs, one share per replica, no CPU in two shares; None where the host has fewer CPUs
    than replicas (they then share the host, as any processes do).

    Replicas whose GPUs sit near the same CPUs (one NUMA node) split those CPUs between them in replica
    order, by whole cores, or by single CPUs where there are fewer cores than replicas. Where the GPUs'
    CPU lists are unknown, overlap, or hold fewer CPUs than the replicas near them, all replicas split the
    usable CPUs."""
    usable = frozenset(host.usable)
    replicas = len(host.near_gpu)
    if replicas == 0 or len(usable) < replicas:
        return None
    neighbourhoods = [((cpus & usable) or usable) if cpus is not None else usable for cpus in host.near_gpu]
    distinct = set(neighbourhoods)
    overlap = sum(len(cpus) for cpus in distinct) != len(frozenset().union(*distinct))
    shares = None if overlap else _split(neighbourhoods, host.core_of)
    return shares or _split([usable] * replicas, host.core_of)


def _split(
    neighbourhoods: Sequence[frozenset[int]], core_of: Mapping[int, Hashable]
) -> tuple[tuple[int, ...], ...] | None:
    """Each replica's share of its neighbourhood (disjoint ones); None where one is too small."""
    shares: list[tuple[int, ...]] = [()] * len(neighbourhoods)
    for cpus in set(neighbourhoods):
        members = [replica for replica, near in enumerate(neighbourhoods) if near == cpus]
        dealt = _deal(sorted(cpus), core_of, len(members))
        if dealt is None:
            return None
        for replica, share in zip(members, dealt, strict=True):
            shares[replica] = share
    return tuple(shares)


def _deal(cpus: Sequence[int], core_of: Mapping[int, Hashable], count: int) -> list[tuple[int, ...]] | None:
    """`cpus` in `count` contiguous blocks of whole cores (of single CPUs if there are too few cores)."""
    cores: dict[Hashable, list[int]] = {}
    for cpu in cpus:
        cores.setdefault(core_of.get(cpu, ("cpu", cpu)), []).append(cpu)
    units = list(cores.values()) if len(cores) >= count else [[cpu] for cpu in cpus]
    if len(units) < count:
        return None
    blocks = [units[len(units) * n // count : len(units) * (n + 1) // count] for n in range(count)]
    return [tuple(sorted(cpu for unit in block for cpu in unit)) for block in blocks]


def cpu_list_text(cpus: Sequence[int]) -> str:
    """Linux's cpulist format, as taskset and sysfs write it: `0-15,64-79`."""
    ranges: list[list[int]] = []
    for cpu in sorted(cpus):
        if ranges and cpu == ranges[-1][1] + 1:
            ranges[-1][1] = cpu
        else:
            ranges.append([cpu, cpu])
    return ",".join(str(first) if first == last else f"{first}-{last}" for first, last in ranges)


def parse_cpu_list(text: str) -> frozenset[int]:
    """`0-15,64-79` (sysfs's cpulist) as the CPU numbers; ValueError where it is not one."""
    cpus: set[int] = set()
    for part in text.strip().split(","):
        if not part:
            continue
        first, _, last = part.partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    return frozenset(cpus)


def read_host(gpu_bus_ids: Sequence[str | None], sysfs: Path = _SYSFS) -> HostCpus:
    """This host's facts for `split_cpus`: the CPUs this process may use, each CPU's core from
    sysfs's topology, and the CPUs near each replica's first GPU (nvidia-smi's bus id `00000000:06:00.0`
    is sysfs's `0000:06:00.0`). What sysfs does not say stays unknown."""
    usable = tuple(sorted(os.sched_getaffinity(0)))
    core_of: dict[int, Hashable] = {}
    for cpu in usable:
        topology = sysfs / "devices/system/cpu" / f"cpu{cpu}" / "topology"
        try:
            core_of[cpu] = (
                (topology / "physical_package_id").read_text().strip(),
                (topology / "core_id").read_text().strip(),
            )
        except OSError:
            continue
    near = tuple(_local_cpus(bus_id, sysfs) if bus_id else None for bus_id in gpu_bus_ids)
    return HostCpus(usable, core_of, near)


def _local_cpus(bus_id: str, sysfs: Path) -> frozenset[int] | None:
    domain, _, rest = bus_id.lower().partition(":")
    address = f"{domain[-4:]}:{rest}"
    try:
        return parse_cpu_list((sysfs / "bus/pci/devices" / address / "local_cpulist").read_text())
    except (OSError, ValueError):
        return None
