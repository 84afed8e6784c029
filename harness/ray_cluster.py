"""The Ray cluster of a multi-node system: joined, asked about its nodes, checked against the descriptor.

`ray` is imported here and in `harness.engines.ray_replicas` only, inside functions: a single-host run
and `submitter check` never load it (tests/test_architecture.py holds that), and a host without the
`ray` extra gets a message naming it. Nodes are asked with one tiny task each, pinned to the node, so the
answer (host name, GPUs, driver, versions) comes from the node itself, not from the driver's view.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from types import ModuleType
from typing import Any

from submitter.errors import SubmitterError
from submitter.fileformats.run_record import ClusterNodeRecord, Gpu
from submitter.systems.cluster_layout import LayoutProblem, StageSlot, lay_out
from submitter.systems.descriptor import ClusterSetup

# Versions every node must share: a result is one engine and one harness, whichever node ran a part.
SHARED_VERSIONS = ("submitter", "vllm", "torch")
_PROBE_TIMEOUT_S = 60.0
_CONNECT_TIMEOUT_S = 5.0
# The environment of a process that runs engines on the cluster (the run's worker, Ray's driver), read when
# it imports ray: every line an actor prints reaches it (Ray folds lines repeated across workers into
# "[repeated 3x across cluster]"), without colour codes, flushed as it arrives, so the run's engine.log has
# vLLM's own log from every node, as a single-host run's has.
DRIVER_LOG_ENVIRONMENT = {"RAY_DEDUP_LOGS": "0", "RAY_COLOR_PREFIX": "0", "RAY_FLUSH_DRIVER_LOGS": "1"}


def import_ray() -> ModuleType:
    try:
        import ray
    except ImportError:
        raise SubmitterError(
            "this system runs on a Ray cluster (its descriptor has a cluster section), but ray is not "
            "installed here; pip install '.[ray]' on this host and every node"
        ) from None
    return ray


def _gcs_address(address: str | None) -> str | None:
    """The head's host:port to probe first (ray.init waits minutes for a head that is not there);
    None where Ray finds the head itself (a local head, or `auto` without RAY_ADDRESS)."""
    if address == "auto":
        address = os.environ.get("RAY_ADDRESS") or None
    if address is None or "://" in address or ":" not in address:
        return None
    return address


def _reachable(address: str | None) -> None:
    gcs = _gcs_address(address)
    if gcs is None:
        return
    host, _, port = gcs.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=_CONNECT_TIMEOUT_S):
            pass
    except (OSError, ValueError) as exc:
        raise SubmitterError(
            f"the Ray cluster's head at {gcs} does not answer ({exc}); start the cluster (`ray start --head` "
            "on the head node, `ray start --address=HEAD:PORT` on the others) or correct cluster.address "
            "in the descriptor"
        ) from None


def join(address: str | None, *, engine_logs: bool = False) -> ModuleType:
    """Connect this process to the cluster (a local head is started where address is null). With
    engine_logs, what the actors print comes out on this process's stdout and stderr, as an engine's
    processes print on a single host (its environment: DRIVER_LOG_ENVIRONMENT)."""
    ray = import_ray()
    if ray.is_initialized():
        return ray
    _reachable(address)
    # ray.init makes SIGTERM call sys.exit and print a C++ stack. This process keeps its own meaning of it:
    # the command line's interrupt (exit 130, clean-up) or, in a LoadGen worker, the default quiet end.
    on_main_thread = threading.current_thread() is threading.main_thread()
    sigterm = signal.getsignal(signal.SIGTERM) if on_main_thread else None
    try:
        ray.init(address=address, logging_level="ERROR", log_to_driver=engine_logs, configure_logging=False)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise SubmitterError(
            f"cannot join the Ray cluster at {address or 'a local head'}: {exc}; start it or correct "
            "cluster.address in the descriptor"
        ) from None
    finally:
        if sigterm is not None:  # None: a handler set outside Python, which Python cannot put back
            signal.signal(signal.SIGTERM, sigterm)
    return ray


@contextmanager
def joined(address: str | None) -> Iterator[ModuleType]:
    """Connected for the block only; a process that was connected before stays connected."""
    ray = import_ray()
    already = ray.is_initialized()
    try:
        yield join(address)
    finally:
        if not already:
            ray.shutdown()


def describe_this_node() -> dict[str, Any]:
    """Runs on each node (a Ray task): what run.json records of it."""
    from harness import environment

    return {
        "host": socket.gethostname(),
        "devices": [gpu.model_dump() for gpu in environment.gpus()],
        "versions": environment.versions(),
        "git_commit": environment.git_state().commit,
    }


def node_order(node: dict[str, Any]) -> tuple[str, str]:
    """Nodes in a stable order (by address, then id), so a layout's node numbers mean the same nodes."""
    return (node["NodeManagerAddress"], node["NodeID"])


def gpu_nodes(ray: ModuleType) -> list[dict[str, Any]]:
    """The live nodes that offer GPUs (a head without GPUs runs no engine), in node order."""
    alive = [node for node in ray.nodes() if node["Alive"] and node["Resources"].get("GPU", 0) > 0]
    return sorted(alive, key=node_order)


def ask_nodes(ray: ModuleType) -> list[ClusterNodeRecord]:
    """Every GPU node's answer to `describe_this_node`, one task pinned to each."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    nodes = gpu_nodes(ray)
    probe = ray.remote(num_cpus=0)(describe_this_node)
    pending = [
        probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False)).remote()
        for node in nodes
    ]
    try:
        answers = ray.get(pending, timeout=_PROBE_TIMEOUT_S)
    except Exception as exc:  # a node that cannot run a task (lost meanwhile, or no submitter installed)
        raise SubmitterError(
            f"not every Ray node answered within {_PROBE_TIMEOUT_S:.0f} s ({type(exc).__name__}: {exc}); "
            "install submitter (pip install '.[ray]') on every node and check that all are up (ray status)"
        ) from None
    return [
        ClusterNodeRecord(
            node_id=node["NodeID"],
            host=answer["host"],
            ip=node["NodeManagerAddress"],
            gpus=int(node["Resources"].get("GPU", 0)),
            devices=[Gpu.model_validate(gpu) for gpu in answer["devices"]],
            versions=answer["versions"],
            git_commit=answer["git_commit"],
        )
        for node, answer in zip(nodes, answers, strict=True)
    ]


def cluster_problems(setup: ClusterSetup, nodes: list[ClusterNodeRecord]) -> list[str]:
    """What keeps these nodes from being the declared cluster: their number, their GPUs, their versions."""
    problems = []
    if len(nodes) != setup.nodes:
        listed = ", ".join(node.name for node in nodes) or "none"
        problems.append(
            f"the Ray cluster has {len(nodes)} node(s) with GPUs ({listed}) but the descriptor declares "
            f"{setup.nodes}; start the missing nodes (ray start --address=HEAD:PORT) or correct cluster.nodes"
        )
    for node in nodes:
        if node.gpus != setup.gpus_per_node:
            problems.append(
                f"node {node.name} offers Ray {node.gpus} GPU(s) but the descriptor declares "
                f"{setup.gpus_per_node} per node; start it with --num-gpus={setup.gpus_per_node} or correct "
                "cluster.gpus_per_node"
            )
    problems += device_problems(nodes)
    for package in (*SHARED_VERSIONS, "git commit"):
        found: dict[str, list[str]] = {}
        for node in nodes:
            version = node.git_commit if package == "git commit" else node.versions.get(package)
            found.setdefault(version or "not installed", []).append(node.host)
        if len(found) > 1:
            listed = "; ".join(f"{version} on {', '.join(hosts)}" for version, hosts in found.items())
            problems.append(
                f"the nodes differ in {package} ({listed}); install the same on every node, since one "
                "result must come from one engine and one harness"
            )
    return problems


def device_problems(nodes: list[ClusterNodeRecord]) -> list[str]:
    """Ray counts GPUs it is told of; nvidia-smi on the node says which it may use (the raylet's
    CUDA_VISIBLE_DEVICES). Several raylets on one host must each see their own GPUs, or their engines
    would share the first ones. Nodes without nvidia-smi list no devices and are not judged here."""
    problems = []
    owners: dict[tuple[str, str], str] = {}
    for node in nodes:
        if node.devices and len(node.devices) < node.gpus:
            problems.append(
                f"node {node.name} offers Ray {node.gpus} GPU(s) but nvidia-smi there lists "
                f"{len(node.devices)}; start it with --num-gpus={len(node.devices)} or let it see more GPUs "
                "(CUDA_VISIBLE_DEVICES)"
            )
        for gpu in node.devices[: node.gpus]:
            key = (node.host, gpu.bus_id or str(gpu.index))
            if key in owners:
                problems.append(
                    f"nodes {owners[key]} and {node.name} would both run engines on GPU {gpu.index} "
                    f"({key[1]}) of host {node.host}; start each raylet of a host with its own GPUs (e.g. "
                    "CUDA_VISIBLE_DEVICES=1 ray start --num-gpus=1 ...)"
                )
            else:
                owners[key] = node.name
    return problems


def check_cluster(setup: ClusterSetup, nodes: list[ClusterNodeRecord]) -> None:
    problems = cluster_problems(setup, nodes)
    if problems:
        raise SubmitterError("; ".join(problems))


@cache
def preflight_nodes(setup: ClusterSetup) -> tuple[ClusterNodeRecord, ...]:
    """The live cluster's nodes, checked against the descriptor; asked once per process (run-all plans
    every run against the same cluster)."""
    with joined(setup.address) as ray:
        nodes = ask_nodes(ray)
    check_cluster(setup, nodes)
    return tuple(nodes)


def stage_slots(setup: ClusterSetup, tensor: int, pipeline: int, replicas: int) -> list[StageSlot]:
    try:
        return lay_out(setup.nodes, setup.gpus_per_node, tensor, pipeline, replicas)
    except LayoutProblem as problem:
        raise SubmitterError(str(problem)) from None
