"""Replicas on one host each get their own CPUs, near their GPUs and made of whole cores, and one torch
thread: decided by preflight, recorded in run.json, and applied by the replica processes themselves."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from harness_helpers import fake_nvidia_smi, where_engine
from hypothesis import given
from hypothesis import strategies as st

from harness.cpu_shares import (
    HostCpus,
    cpu_list_text,
    front_end_threads,
    parse_cpu_list,
    read_host,
    renderer_workers,
    split_cpus,
)
from harness.engines.base import EngineSpec, Generation, Sample
from harness.engines.replicas import ProcessReplicas, ReplicatedEngine
from harness.preflight import place_engines
from submitter.systems.descriptor import BenchmarkSetup

GENERATION = Generation(max_tokens=8, min_tokens=1, eos_token_id=2)


def two_socket_host(cores_per_socket: int, threads_per_core: int) -> tuple[dict[int, tuple[int, int]], list]:
    """Linux's usual numbering: first every core's first thread (socket 0, then socket 1), then every
    core's second thread in the same order. Returns each CPU's (socket, core) and each socket's CPUs."""
    cores = 2 * cores_per_socket
    core_of = {
        thread * cores + core: (core // cores_per_socket, core % cores_per_socket)
        for thread in range(threads_per_core)
        for core in range(cores)
    }
    sockets = [frozenset(cpu for cpu, (socket, _) in core_of.items() if socket == s) for s in (0, 1)]
    return core_of, sockets


@pytest.mark.parametrize(
    ("gpu_sockets", "expected"),
    [
        ((0, 0, 1, 1), ["0-7,32-39", "8-15,40-47", "16-23,48-55", "24-31,56-63"]),
        # GPUs 0 and 2 on socket 0, 1 and 3 on socket 1: replica 1 takes socket 1's first half, not the
        # next cores in number order (socket 0's second half).
        ((0, 1, 0, 1), ["0-7,32-39", "16-23,48-55", "8-15,40-47", "24-31,56-63"]),
    ],
)
def test_four_replicas_on_two_sockets_take_whole_cores_near_their_gpus(
    gpu_sockets: tuple[int, ...], expected: list[str]
) -> None:
    # 2 sockets x 16 cores x 2 threads: CPUs 0-15 and 32-47 are socket 0's, 16-31 and 48-63 socket 1's.
    core_of, sockets = two_socket_host(16, 2)
    shares = split_cpus(HostCpus(tuple(range(64)), core_of, tuple(sockets[s] for s in gpu_sockets)))
    assert shares is not None
    assert [cpu_list_text(share) for share in shares] == expected


@given(
    cores_per_socket=st.integers(1, 12),
    threads=st.integers(1, 2),
    gpu_sockets=st.lists(st.sampled_from([0, 1, None]), min_size=1, max_size=8),
    usable_fraction=st.floats(0.3, 1.0),
)
def test_shares_never_overlap_keep_cores_whole_and_stay_near_their_gpus(
    cores_per_socket: int, threads: int, gpu_sockets: list[int | None], usable_fraction: float
) -> None:
    core_of, sockets = two_socket_host(cores_per_socket, threads)
    usable = tuple(sorted(core_of)[: max(1, round(len(core_of) * usable_fraction))])
    near = tuple(None if socket is None else sockets[socket] for socket in gpu_sockets)
    shares = split_cpus(HostCpus(usable, core_of, near))
    if len(usable) < len(gpu_sockets):
        assert shares is None
        return
    assert shares is not None and len(shares) == len(gpu_sockets)
    every = [cpu for share in shares for cpu in share]
    assert len(every) == len(set(every)) and set(every) <= set(usable) and all(shares)
    # Each replica stays among the CPUs near its GPU, unless those are unknown, overlap another GPU's, or
    # are fewer than the replicas near them: then all usable CPUs are split.
    everywhere = frozenset(usable)
    hoods = [((cpus & everywhere) or everywhere) if cpus is not None else everywhere for cpus in near]
    members = {hood: [r for r, h in enumerate(hoods) if h == hood] for hood in set(hoods)}
    overlap = sum(map(len, members)) != len(frozenset().union(*members))
    if overlap or any(len(hood) < len(replicas) for hood, replicas in members.items()):
        hoods = [everywhere] * len(near)
        members = {everywhere: list(range(len(near)))}
    for replica, share in enumerate(shares):
        assert set(share) <= hoods[replica]
    # Whole cores wherever a neighbourhood has a core for each of its replicas.
    for hood, replicas in members.items():
        if len({core_of[cpu] for cpu in hood}) >= len(replicas):
            owner = {core_of[cpu]: r for r in replicas for cpu in shares[r]}
            assert all(
                core_of[cpu] in owner and owner[core_of[cpu]] == r for r in replicas for cpu in shares[r]
            )
            assert sum(len(shares[r]) for r in replicas) == len(hood)


def test_too_few_cpus_leave_the_host_shared_and_unknown_gpus_split_all_usable_cpus() -> None:
    assert split_cpus(HostCpus((0,), {}, (None, None))) is None
    # One core with two threads, two replicas: a thread each rather than none.
    assert split_cpus(HostCpus((0, 1), {0: (0, 0), 1: (0, 0)}, (None, None))) == ((0,), (1,))
    # Overlapping neighbourhoods (one GPU says every CPU) cannot be honoured: everything is split evenly.
    overlapping = (frozenset(range(8)), frozenset(range(4)))
    assert split_cpus(HostCpus(tuple(range(8)), {}, overlapping)) == ((0, 1, 2, 3), (4, 5, 6, 7))


@given(st.sets(st.integers(0, 300), max_size=40))
def test_cpu_lists_read_back_as_written(cpus: set[int]) -> None:
    text = cpu_list_text(sorted(cpus))
    assert parse_cpu_list(text) == frozenset(cpus)
    assert all(part and part.count("-") <= 1 for part in text.split(",")) or not cpus


def test_the_host_is_read_from_sysfs(tmp_path: Path) -> None:
    usable = sorted(os.sched_getaffinity(0))
    for cpu in usable:
        topology = tmp_path / "devices/system/cpu" / f"cpu{cpu}" / "topology"
        topology.mkdir(parents=True)
        (topology / "physical_package_id").write_text("0\n")
        (topology / "core_id").write_text(f"{cpu // 2}\n")
    card = tmp_path / "bus/pci/devices/0000:18:00.0"
    card.mkdir(parents=True)
    (card / "local_cpulist").write_text("0-31,64-95\n")
    host = read_host(["00000000:18:00.0", "00000000:28:00.0", None], sysfs=tmp_path)
    assert host.usable == tuple(usable)
    assert host.core_of == {cpu: ("0", str(cpu // 2)) for cpu in usable}
    assert host.near_gpu == (frozenset([*range(32), *range(64, 96)]), None, None)


def test_preflight_gives_replicas_on_this_host_their_shares(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_nvidia_smi(tmp_path, [("NVIDIA H100 80GB HBM3", 81559)] * 2)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    two = BenchmarkSetup.model_validate(
        {"backend": "vllm", "model_path": "m", "replicas": 2, "scenarios": {"Offline": {}}}
    )
    placement = place_engines("vllm", two, {}, "here", described_host=False)
    assert placement is not None
    expected = split_cpus(read_host([gpu.bus_id for gpu in placement.gpus]))
    assert placement.cpu_shares == expected
    if expected is not None:
        assert [record.cpus for record in placement.records()] == [cpu_list_text(share) for share in expected]
        assert ", CPUs " in placement.describe()
    # Planning for the described host knows nothing of its CPUs, and one engine keeps the whole host.
    assert (
        place_engines("vllm", two, {"accelerators_per_node": "2"}, "", described_host=True).cpu_shares is None
    )
    one = two.model_copy(update={"replicas": 1})
    alone = place_engines("vllm", one, {}, "here", described_host=False)
    assert alone is not None and alone.cpu_shares is None


class Answers:
    def __init__(self, expected: int) -> None:
        self.tokens: dict[int, list[int]] = {}
        self.expected = expected
        self.done = threading.Event()

    def first_token(self, sample_id: int, token_ids: list[int]) -> None: ...

    def complete(self, sample_id: int, token_ids: list[int]) -> None:
        self.tokens[sample_id] = list(token_ids)
        if len(self.tokens) == self.expected:
            self.done.set()

    def fail(self, sample_id: int, reason: str) -> None:
        raise AssertionError(reason)


def test_each_replica_process_runs_on_its_share() -> None:
    usable = sorted(os.sched_getaffinity(0))
    assert len(usable) >= 2, "two replicas need two CPUs to be given one each"
    shares = ((usable[-1],), tuple(usable[:-1]))
    spec = EngineSpec(
        backend="synthetic", model="synthetic", generation=GENERATION, replicas=2, cpu_shares=shares
    )
    engine = ReplicatedEngine(spec, ProcessReplicas(spec, where_engine, on_gpus=False))
    engine.start()
    answers = Answers(expected=2)
    # The dispatcher gives the first sample to replica 0 and the second, with replica 0 busy, to replica 1.
    engine.submit([Sample(0, 0, [1, 2, 3]), Sample(1, 1, [1, 2, 3])], answers)
    assert answers.done.wait(60)
    engine.stop()
    assert answers.tokens == {0: [usable[-1]], 1: usable[:-1]}
    assert os.sched_getaffinity(0) == set(usable)  # the harness's own process keeps its CPUs


@given(st.integers(min_value=1, max_value=512))
def test_the_front_end_takes_half_its_cpus_and_leaves_the_rest(cpus: int) -> None:
    threads = front_end_threads(cpus)
    assert 1 <= threads <= cpus
    assert threads == cpus or cpus - threads >= threads  # as many left over for the engine core and vLLM


@given(st.integers(min_value=1, max_value=512))
def test_media_inputs_are_made_on_the_front_ends_threads_unless_the_descriptor_chose(cpus: int) -> None:
    assert renderer_workers("audio", True, {"max_num_seqs": 256}, cpus) == front_end_threads(cpus)
    assert renderer_workers("image", True, {"mm_processor_cache_gb": 0}, cpus) == front_end_threads(cpus)
    assert renderer_workers(None, True, {}, cpus) is None  # token prompts need no inputs made
    assert renderer_workers("audio", False, {}, cpus) is None  # the descriptor sets the threads
    assert renderer_workers("audio", True, {"renderer_num_workers": 2}, cpus) is None
    assert renderer_workers("image", True, {"mm_processor_cache_gb": 4}, cpus) is None  # a cache, unshared


def test_a_share_the_host_no_longer_has_fails_that_replica_by_name() -> None:
    usable = sorted(os.sched_getaffinity(0))
    gone = max(usable) + 4096  # a CPU this process may not use, as after the host's CPU set shrank
    spec = EngineSpec(
        backend="synthetic",
        model="synthetic",
        generation=GENERATION,
        replicas=2,
        cpu_shares=((usable[0],), (gone,)),
    )
    engine = ReplicatedEngine(spec, ProcessReplicas(spec, where_engine, on_gpus=False))
    with pytest.raises(RuntimeError, match=r"replica 1 did not start: OSError"):
        engine.start()
