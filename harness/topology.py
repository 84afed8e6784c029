"""Where a benchmark's engine copies run, and whether the model fits them: decided before any engine starts.

A setup runs `replicas` copies of one engine, each on a group of tensor x pipeline parallel GPUs. Replica r
takes the r-th group: the descriptor's `gpu_groups`, or else the next consecutive GPUs in the order this
process sees them. The run's worker is then given exactly those GPUs, group after group
(CUDA_VISIBLE_DEVICES), so every engine's own placement (the harness's replica processes, vLLM's
data-parallel ranks, vLLM's tensor-parallel workers) puts replica r on group r: `replica_slices` is that
one rule.

The memory estimate is vLLM's own arithmetic in outline: of `gpu_memory_utilization` of each GPU, the
weights and the activation peak of its profiling pass are taken first, and what is left holds the KV
cache, which must take at least one sequence of max_model_len tokens or vLLM refuses to start.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.cpu_shares import cpu_list_text
from harness.model_size import ModelSize, Precision
from submitter.errors import SubmitterError
from submitter.fileformats.run_record import ClusterNodeRecord, Gpu, MemoryEstimateRecord, ReplicaRecord
from submitter.systems.accelerators import identify
from submitter.systems.cluster_layout import LayoutProblem, describe_layout, lay_out
from submitter.systems.descriptor import BenchmarkSetup, ClusterSetup

GIB = 1 << 30
# vLLM's defaults where the engine arguments leave them out (EngineArgs, vLLM 0.26 on Hopper).
_DEFAULT_UTILIZATION = 0.9
_DEFAULT_BATCHED_TOKENS = 16384
_DEFAULT_MAX_SEQS = 1024
# The CUDA context, CUDA graphs, NCCL's buffers and the allocator's slack: measured 1.5-3 GiB per GPU.
FIXED_RESERVE = 2 * GIB
# A GPU's memory may differ from its nominal size by this much and still be the described part (the
# L40S's ECC reserve is the largest gap seen: 45.0 GiB of "48 GB").
_MEMORY_TOLERANCE = 0.07


def replica_slices(devices: Sequence[str], replicas: int, group_size: int) -> list[list[str]]:
    """Replica r's devices: the r-th run of `group_size` in the order given."""
    return [list(devices[r * group_size : (r + 1) * group_size]) for r in range(replicas)]


@dataclass(frozen=True)
class Placement:
    tensor_parallel: int
    pipeline_parallel: int
    groups: tuple[tuple[Gpu, ...], ...]
    # On a cluster: `replica 0 on node-a | replica 1 on node-b` (cluster_layout); None on one host.
    layout: str | None = None
    # Replica r's own CPUs on this host (harness.cpu_shares); None: the replicas share the host's.
    cpu_shares: tuple[tuple[int, ...], ...] | None = None

    @property
    def gpus(self) -> list[Gpu]:
        return [gpu for group in self.groups for gpu in group]

    @property
    def visible_devices(self) -> str:
        """CUDA_VISIBLE_DEVICES for the worker: every group's GPUs, in replica order."""
        return ",".join(str(gpu.index) for gpu in self.gpus)

    def records(self) -> list[ReplicaRecord]:
        return [
            ReplicaRecord(
                replica=number,
                gpus=[gpu.index for gpu in group if gpu.index is not None],
                bus_ids=[gpu.bus_id for gpu in group if gpu.bus_id],
                cpus=cpu_list_text(self.cpu_shares[number]) if self.cpu_shares else None,
            )
            for number, group in enumerate(self.groups)
        ]

    def describe(self) -> str:
        shape = f"TP={self.tensor_parallel}" + (
            f" x PP={self.pipeline_parallel}" if self.pipeline_parallel > 1 else ""
        )
        copies = f"{len(self.groups)} replica(s) of {shape}"
        names = sorted({gpu.name for gpu in self.gpus})
        if self.layout is not None:
            return f"{copies}: {self.layout} ({len(self.gpus)}x {' / '.join(names)})"
        groups = " | ".join(",".join(str(gpu.index) for gpu in group) for group in self.groups)
        cpus = ""
        if self.cpu_shares:
            cpus = ", CPUs " + " | ".join(cpu_list_text(share) for share in self.cpu_shares)
        return f"{copies} on GPUs {groups}{cpus} ({len(self.gpus)}x {' / '.join(names)})"


def _same_part(described: str, found: str) -> bool:
    part_described, part_found = identify(described), identify(found)
    return part_described is None or part_described == part_found


def _described_bytes(capacity: str | None) -> int | None:
    """ "80 GB" as a system description writes it: the vendor's nominal size, which is about the GiB the
    driver reports (H100 79.6 GiB, H200 140.4 GiB, L40S 45.0 GiB of "48 GB")."""
    if not capacity:
        return None
    amount, _, unit = capacity.strip().partition(" ")
    scale = {"GB": GIB, "GiB": GIB, "TB": 1 << 40}.get(unit.strip())
    try:
        return round(float(amount) * scale) if scale else None
    except ValueError:
        return None


def described_gpus(system: Mapping[str, Any]) -> list[Gpu]:
    """The GPUs a system description names (accelerators_per_node of accelerator_model_name, each of
    accelerator_memory_capacity), to plan for a host before it is at hand."""
    count = int(system.get("accelerators_per_node") or 0) * int(system.get("number_of_nodes") or 1)
    name = system.get("accelerator_model_name") or "unnamed accelerator"
    memory = _described_bytes(system.get("accelerator_memory_capacity"))
    memory_text = f"{memory / (1 << 20):.0f} MiB" if memory else "unknown"
    return [Gpu(index=index, name=name, memory=memory_text, driver="described") for index in range(count)]


def place(
    setup: BenchmarkSetup, available: Sequence[Gpu], system: Mapping[str, Any], where: str
) -> Placement:
    """The groups of GPUs the setup's replicas run on; refused with every problem named at once: too few
    GPUs, GPUs of another kind or size than the descriptor describes, or gpu_groups naming GPUs this
    process cannot use."""
    needed = setup.accelerators_needed
    group_size = setup.gpus_per_replica
    shape = (
        f"{setup.replicas} replica(s) x {setup.tensor_parallel_size} (tensor) x "
        f"{setup.pipeline_parallel_size} (pipeline) = {needed} GPU(s)"
    )
    if len(available) < needed:
        raise SubmitterError(
            f"{where}: {shape} are needed but {len(available)} can be used here (nvidia-smi, "
            "CUDA_VISIBLE_DEVICES); run on the host the descriptor describes, or lower replicas"
        )
    by_index = {gpu.index: gpu for gpu in available}
    if setup.gpu_groups is not None:
        unknown = sorted({index for group in setup.gpu_groups for index in group} - set(by_index))
        if unknown:
            usable = ", ".join(str(gpu.index) for gpu in available)
            raise SubmitterError(
                f"{where}: gpu_groups name GPU(s) {', '.join(map(str, unknown))}, which are not among those "
                f"this process can use ({usable}); correct gpu_groups or CUDA_VISIBLE_DEVICES"
            )
        groups = tuple(tuple(by_index[index] for index in group) for group in setup.gpu_groups)
    else:
        groups = tuple(tuple(group) for group in replica_slices(list(available), setup.replicas, group_size))
    placement = Placement(setup.tensor_parallel_size, setup.pipeline_parallel_size, groups)
    problems = _kind_problems(placement, system)
    if problems:
        raise SubmitterError(f"{where}: " + "; ".join(problems))
    return placement


def described_node_gpus(system: Mapping[str, Any]) -> list[Gpu]:
    """One node's GPUs as the system description names them."""
    return described_gpus({**system, "number_of_nodes": 1})


def place_on_cluster(
    setup: BenchmarkSetup,
    cluster: ClusterSetup,
    nodes: Sequence[ClusterNodeRecord],
    system: Mapping[str, Any],
    where: str,
    check_kind: bool,
) -> Placement:
    """Each replica's stages on the cluster's nodes (cluster_layout), each stage the next tensor-parallel
    GPUs of its node; `check_kind`: the nodes' GPUs must be the part the descriptor describes."""
    tensor = setup.tensor_parallel_size
    try:
        slots = lay_out(
            cluster.nodes, cluster.gpus_per_node, tensor, setup.pipeline_parallel_size, setup.replicas
        )
    except LayoutProblem as problem:
        raise SubmitterError(f"{where}: {problem}") from None
    taken = [0] * len(nodes)
    groups: list[list[Gpu]] = [[] for _ in range(setup.replicas)]
    for slot in slots:
        node = nodes[slot.node]
        devices = node.devices or [
            Gpu(name="GPU (Ray resource, no nvidia-smi)", memory="unknown", driver="unknown", index=index)
            for index in range(node.gpus)
        ]
        groups[slot.replica] += devices[taken[slot.node] : taken[slot.node] + tensor]
        taken[slot.node] += tensor
    placement = Placement(
        tensor,
        setup.pipeline_parallel_size,
        tuple(tuple(group) for group in groups),
        layout=describe_layout(slots, [node.host for node in nodes]),
    )
    # Nodes without nvidia-smi report no devices: Ray's GPU count is all that is known of them.
    known = all(node.devices for node in nodes)
    problems = _kind_problems(placement, system) if check_kind and known else []
    if problems:
        raise SubmitterError(f"{where}: " + "; ".join(problems))
    return placement


def _kind_problems(placement: Placement, system: Mapping[str, Any]) -> list[str]:
    """GPUs that are not the part the descriptor describes would publish results under a wrong name."""
    described = system.get("accelerator_model_name")
    capacity = _described_bytes(system.get("accelerator_memory_capacity"))
    problems = []
    for gpu in placement.gpus:
        if described and not _same_part(described, gpu.name):
            problems.append(
                f"GPU {gpu.index} is a {gpu.name}, but the descriptor describes {described}; run on the "
                "described host, or describe this one (submitter systems probe)"
            )
        found = gpu.memory_bytes
        if capacity and found and abs(found - capacity) > _MEMORY_TOLERANCE * capacity:
            problems.append(
                f"GPU {gpu.index} has {found / GIB:.1f} GiB, but the descriptor describes "
                f"{system.get('accelerator_memory_capacity')} per accelerator; correct "
                "accelerator_memory_capacity or run on the described host"
            )
    return problems


@dataclass(frozen=True)
class MemoryFit:
    """One GPU of the placement (the smallest) under the engine arguments: what the weights, the
    profiling pass and the KV cache take, in bytes."""

    gpu_bytes: int
    utilization: float
    ranks: int  # GPUs a replica spans (tensor x pipeline parallel): they share the weights
    weights: int
    reserve: int
    sequence: int  # one max_model_len sequence's KV cache on this GPU
    max_model_len: int
    max_num_seqs: int
    precision: str
    kv_dtype: str
    # The data set's mean sequence (prompt and reference answer), where it records its answers' lengths, and
    # one such sequence's KV cache on this GPU: how many run at once, which max_model_len understates.
    mean_tokens: int | None = None
    mean_sequence: int | None = None

    @property
    def kv_cache(self) -> int:
        return int(self.gpu_bytes * self.utilization) - self.weights - self.reserve

    @property
    def sequences(self) -> int:
        return max(self.kv_cache, 0) // self.sequence if self.sequence else 0

    @property
    def mean_sequences(self) -> int | None:
        if not self.mean_sequence:
            return None
        return max(self.kv_cache, 0) // self.mean_sequence

    @property
    def fits(self) -> bool:
        return self.sequences >= 1

    def describe(self) -> str:
        budget = self.gpu_bytes * self.utilization
        return (
            f"per GPU {budget / GIB:.1f} GiB ({self.utilization:g} of {self.gpu_bytes / GIB:.1f}): weights "
            f"{self.weights / GIB:.1f} GiB ({self.precision}), profiling pass and CUDA graphs about "
            f"{self.reserve / GIB:.1f} GiB, KV cache {self.kv_cache / GIB:.1f} GiB ({self.kv_dtype}) = "
            f"{self.sequences:,} sequence(s) of {self.max_model_len:,} tokens{self._mean_text()} "
            f"(max_num_seqs {self.max_num_seqs:,})"
        )

    def _mean_text(self) -> str:
        if self.mean_sequences is None:
            return ""
        return f", {self.mean_sequences:,} at the data set's mean of {self.mean_tokens:,}"

    def record(self) -> MemoryEstimateRecord:
        return MemoryEstimateRecord(
            gpu_gib=round(self.gpu_bytes / GIB, 2),
            gpu_memory_utilization=self.utilization,
            weights_gib=round(self.weights / GIB, 2),
            reserve_gib=round(self.reserve / GIB, 2),
            kv_cache_gib=round(self.kv_cache / GIB, 2),
            sequences=self.sequences,
            max_model_len=self.max_model_len,
            mean_sequence_tokens=self.mean_tokens,
            mean_sequences=self.mean_sequences,
            precision=self.precision,
            kv_cache_dtype=self.kv_dtype,
        )


def memory_fit(
    size: ModelSize,
    precision: Precision,
    placement: Placement,
    engine_args: Mapping[str, Any],
    mean_tokens: int | None = None,
    max_pixels: int | None = None,
) -> MemoryFit:
    """One GPU's memory under the engine arguments; with `mean_tokens`, the data set's mean sequence (prompt
    and answer), also how many sequences of that length the KV cache holds; with `max_pixels`, the largest
    image the model's processor allows, what a vision tower's profiling pass holds."""
    tp, pp = placement.tensor_parallel, placement.pipeline_parallel
    smallest = min((gpu.usable_bytes or 0) for gpu in placement.gpus)
    kv_dtype = str(engine_args.get("kv_cache_dtype", "auto"))
    kv_bytes = 1.0 if kv_dtype.startswith("fp8") else 2.0
    max_model_len = int(engine_args["max_model_len"])
    max_num_seqs = int(engine_args.get("max_num_seqs", _DEFAULT_MAX_SEQS))
    tokens = int(engine_args.get("max_num_batched_tokens", _DEFAULT_BATCHED_TOKENS))
    # The profiling pass: the decoder's activations over a full batch of tokens, float32 logits for every
    # sequence, and what a vision tower's pass over the largest images leaves held meanwhile.
    activations = size.activation_bytes(tokens, tp)
    logits = max_num_seqs * size.vocabulary * 4
    if size.encoder is not None and max_pixels:
        activations += size.encoder.held_bytes(max_pixels, tokens)
    return MemoryFit(
        gpu_bytes=smallest,
        utilization=float(engine_args.get("gpu_memory_utilization", _DEFAULT_UTILIZATION)),
        ranks=tp * pp,
        weights=size.weight_bytes_per_rank(precision, tp, pp),
        reserve=activations + logits + FIXED_RESERVE,
        sequence=size.kv_cache_bytes(max_model_len, tp, pp, kv_bytes),
        max_model_len=max_model_len,
        max_num_seqs=max_num_seqs,
        precision=precision.source,
        kv_dtype="fp8" if kv_bytes == 1 else size.dtype,
        mean_tokens=mean_tokens,
        mean_sequence=size.kv_cache_bytes(mean_tokens, tp, pp, kv_bytes) if mean_tokens else None,
    )


def check_fits(fit: MemoryFit, where: str) -> None:
    if fit.fits:
        return
    room = fit.gpu_bytes * fit.utilization - fit.reserve
    if 0 < room <= fit.weights:
        # More ranks share the weights; the reserve stays about the same per GPU.
        needed = math.ceil(fit.weights * fit.ranks / room)
        raise SubmitterError(
            f"{where}: the model does not fit: {fit.describe()}; the weights alone take more than the engine "
            f"has left on each GPU: spread each replica over at least {needed} GPUs (tensor_parallel_size x "
            f"pipeline_parallel_size; it spans {fit.ranks} now), or load smaller weights"
        )
    raise SubmitterError(
        f"{where}: the model does not fit: {fit.describe()}; vLLM needs room for at least one sequence. "
        "Use more GPUs per replica (tensor_parallel_size), FP8 weights or KV cache, a higher "
        "gpu_memory_utilization or fewer max_num_seqs"
    )
