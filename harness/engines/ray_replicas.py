"""The replica transport of a multi-node system: each copy of the engine a Ray actor on the cluster's nodes.

LoadGen and the dispatcher (`replicas.ReplicatedEngine`) stay in the run's worker process, the Ray driver.
Each replica's tensor x pipeline parallel GPUs are reserved by one placement group, a bundle per GPU
(vLLM's Ray executor puts one worker in each), pinned to the nodes `cluster_layout` chose for its stages:
STRICT_PACK where all its stages share a node, PACK where pipeline stages span nodes. The replica's actor
runs in its first bundle and builds the backend's engine there; for vLLM with more than one GPU that is
vLLM's own multi-node path (`distributed_executor_backend="ray"`, its workers in the same placement group,
as vLLM's RLHF examples place it). The synthetic engine runs the same way, so all of this runs on a CPU.

Samples reach an actor in numbered messages (a threaded actor may run calls out of order; the number
puts them back in order); events come back by long polling, one outstanding `events` call per actor. An
actor that dies (its node left the cluster) ends its poll with an error: the transport names the node and
tells the dispatcher the replica is lost.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from typing import Any

from harness.engines.base import CompletionEvents, Engine, EngineSpec, Generation, Sample
from harness.engines.replicas import DONE, FAILED, FIRST, LOST, STOPPED, Receive, ReplicaMessage
from harness.ray_cluster import cluster_problems, gpu_nodes, import_ray, join, stage_slots
from submitter.errors import SubmitterError
from submitter.fileformats.run_record import ClusterNodeRecord, StageRecord
from submitter.systems.backends import backend_info

_RESERVE_TIMEOUT_S = 120.0
_POLL_S = 0.5  # how long an actor holds an events call open when it has nothing to report
# How long a replica's lost actor waits for Ray to declare its node dead: the actor's connection drops at
# once, while Ray's health checks declare the node dead after health_check_period_ms x
# health_check_failure_threshold (3 s x 5 by default).
_NODE_DEATH_WAIT_S = 30.0


class _Outbox:
    """CompletionEvents inside an actor: kept until the driver's next `events` call takes them."""

    def __init__(self) -> None:
        self._events: list[tuple[str, int | None, Any]] = []
        self._ready = threading.Condition()

    def put(self, event: tuple[str, int | None, Any]) -> None:
        with self._ready:
            self._events.append(event)
            self._ready.notify()

    def first_token(self, sample_id: int, token_ids: Sequence[int]) -> None:
        self.put((FIRST, sample_id, list(token_ids)))

    def complete(self, sample_id: int, token_ids: Sequence[int]) -> None:
        self.put((DONE, sample_id, list(token_ids)))

    def fail(self, sample_id: int, reason: str) -> None:
        self.put((FAILED, sample_id, reason))

    def take(self, wait_s: float) -> list[tuple[str, int | None, Any]]:
        with self._ready:
            if not self._events:
                self._ready.wait(wait_s)
            taken, self._events = self._events, []
            return taken


class ReplicaActor:
    """One replica, inside its Ray actor (made a Ray class at start, so this module imports without ray)."""

    def __init__(self, spec: EngineSpec, engine_type: type[Engine]) -> None:
        self._spec = spec
        self._engine_type = engine_type
        self._engine: Any = None
        self._outbox = _Outbox()
        self._next = 0
        self._held: dict[int, ReplicaMessage] = {}
        self._order = threading.Lock()

    def start(self) -> dict[str, str]:
        if backend_info(self._spec.backend).needs_gpu and self._spec.gpus_per_replica > 1:
            # vLLM's Ray workers take the placement group's GPUs; Ray must not narrow this actor's view.
            os.environ.pop("CUDA_VISIBLE_DEVICES", None)
        self._engine = self._engine_type(self._spec)
        self._engine.start()
        return dict(self._engine.versions())

    def deliver(self, number: int, message: ReplicaMessage) -> None:
        """Apply messages in the order the dispatcher numbered them, whatever order they arrive in."""
        with self._order:
            self._held[number] = message
            while self._next in self._held:
                self._apply(self._held.pop(self._next))
                self._next += 1

    def _apply(self, message: ReplicaMessage) -> None:
        if message is None:
            self._engine.stop()
            self._outbox.put((STOPPED, None, None))
        elif isinstance(message, Generation):
            self._engine.use_generation(message)
        else:
            events: CompletionEvents = self._outbox
            self._engine.submit([Sample(*fields) for fields in message], events)

    def events(self, wait_s: float) -> list[tuple[str, int | None, Any]]:
        return self._outbox.take(wait_s)


def _node_records(ray: Any) -> list[ClusterNodeRecord]:
    """The live GPU nodes as Ray lists them (the preflight asked them for versions already)."""
    return [
        ClusterNodeRecord(
            node_id=node["NodeID"],
            host=node["NodeManagerHostname"],
            ip=node["NodeManagerAddress"],
            gpus=int(node["Resources"].get("GPU", 0)),
        )
        for node in gpu_nodes(ray)
    ]


class RayReplicas:
    """`spec.replicas` actors on the cluster `spec.cluster` names, placed as `cluster_layout` lays out,
    each running an `engine_type` (the backend's class: it crosses to the actor by name)."""

    def __init__(self, spec: EngineSpec, engine_type: type[Engine]) -> None:
        assert spec.cluster is not None
        self._engine_type = engine_type
        self._cluster = spec.cluster
        self._spec = spec
        self._count = spec.replicas
        args = dict(spec.args)
        info = backend_info(spec.backend)
        if info.needs_gpu and spec.gpus_per_replica > 1:
            args.setdefault("distributed_executor_backend", "ray")
        self._single = spec.model_copy(update={"replicas": 1, "cluster": None, "args": args})
        self._ray: Any = None
        self._groups: list[Any] = []
        self._actors: list[Any] = []
        self._numbers = [0] * self._count
        self._send_lock = threading.Lock()
        self._stages: list[StageRecord] = []
        self._nodes: dict[str, ClusterNodeRecord] = {}
        self._collector: threading.Thread | None = None
        self._joined_here = False

    def start(self, receive: Receive) -> dict[str, str]:
        self._joined_here = not import_ray().is_initialized()
        ray = self._ray = join(self._cluster.address, engine_logs=True)
        try:
            versions = self._place_and_start(ray)
        except BaseException:
            self._release()
            raise
        self._collector = threading.Thread(
            target=self._collect, args=(receive,), name="ray-replica-collector", daemon=True
        )
        self._collector.start()
        return {**versions, "ray": ray.__version__, "nodes": str(self._cluster.nodes)}

    def _place_and_start(self, ray: Any) -> dict[str, str]:
        from ray.util.placement_group import placement_group, placement_group_table
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        nodes = _node_records(ray)
        problems = [p for p in cluster_problems(self._cluster, nodes) if "differ in" not in p]
        if problems:  # checked again here: the cluster may have changed since the plan was made
            raise SubmitterError("; ".join(problems))
        self._nodes = {node.node_id: node for node in nodes}
        spec = self._spec
        tensor = spec.tensor_parallel_size
        slots = stage_slots(self._cluster, tensor, spec.pipeline_parallel_size, self._count)
        for replica in range(self._count):
            stage_nodes = [nodes[slot.node].node_id for slot in slots if slot.replica == replica]
            selectors = [{"ray.io/node-id": node} for node in stage_nodes for _ in range(tensor)]
            self._groups.append(
                placement_group(
                    [{"GPU": 1.0}] * len(selectors),
                    strategy="STRICT_PACK" if len(set(stage_nodes)) == 1 else "PACK",
                    bundle_label_selector=selectors,
                )
            )
        ready, _ = ray.wait(
            [group.ready() for group in self._groups], num_returns=self._count, timeout=_RESERVE_TIMEOUT_S
        )
        if len(ready) < self._count:
            raise SubmitterError(
                f"Ray could not reserve the GPUs of {self._count - len(ready)} replica(s) within "
                f"{_RESERVE_TIMEOUT_S:.0f} s: other jobs hold them; `ray status` shows what is in use"
            )
        for replica, group in enumerate(self._groups):
            bundle_nodes = placement_group_table(group)["bundles_to_node_id"]
            for stage in range(spec.pipeline_parallel_size):
                node = self._nodes[bundle_nodes[stage * tensor]]
                record = StageRecord(
                    replica=replica, stage=stage, node_id=node.node_id, host=node.host, gpus=tensor
                )
                self._stages.append(record)
        own_gpu = backend_info(spec.backend).needs_gpu and spec.gpus_per_replica == 1
        actor_class = ray.remote(ReplicaActor)
        for group in self._groups:
            strategy = PlacementGroupSchedulingStrategy(
                placement_group=group,
                placement_group_bundle_index=0,
                placement_group_capture_child_tasks=True,
            )
            self._actors.append(
                actor_class.options(
                    num_cpus=0,
                    num_gpus=1 if own_gpu else 0,
                    max_concurrency=2,  # one call delivering samples, one long poll for events
                    max_restarts=0,
                    scheduling_strategy=strategy,
                ).remote(self._single, self._engine_type)
            )
        try:
            answers = ray.get([actor.start.remote() for actor in self._actors])
        except Exception as exc:
            raise SubmitterError(f"a replica did not start on the cluster: {_cause(exc)}") from None
        return answers[0]

    def send(self, replica: int, message: ReplicaMessage) -> None:
        with self._send_lock:  # numbered in the order sent, so the actor applies them in that order
            number = self._numbers[replica]
            self._numbers[replica] += 1
            self._actors[replica].deliver.remote(number, message)

    def wait_stopped(self) -> None:
        if self._collector is not None:
            self._collector.join()
        self._release()

    def placement(self) -> list[StageRecord]:
        return list(self._stages)

    def _collect(self, receive: Receive) -> None:
        ray = self._ray
        polls = {actor.events.remote(_POLL_S): replica for replica, actor in enumerate(self._actors)}
        while polls:
            ready, _ = ray.wait(list(polls), num_returns=1, timeout=_POLL_S * 4)
            for reference in ready:
                replica = polls.pop(reference)
                try:
                    events = ray.get(reference)
                except Exception as exc:
                    receive(LOST, None, (replica, self._lost_reason(replica, exc)))
                    continue
                stopped = False
                for kind, sample_id, payload in events:
                    receive(kind, sample_id, payload)
                    stopped = stopped or kind == STOPPED
                if not stopped:
                    polls[self._actors[replica].events.remote(_POLL_S)] = replica

    def _lost_reason(self, replica: int, error: Exception) -> str:
        """Which node went away, when the replica's actor did: the node Ray no longer lists as alive, once
        its health checks have told (an actor that died on a live node waits them out, then says so)."""
        where = [stage for stage in self._stages if stage.replica == replica]
        actor_lost = isinstance(error, self._ray.exceptions.RayActorError)
        deadline = time.monotonic() + _NODE_DEATH_WAIT_S
        while True:
            alive = {node["NodeID"] for node in self._ray.nodes() if node["Alive"]}
            gone = [self._nodes[stage.node_id].name for stage in where if stage.node_id not in alive]
            if gone or not actor_lost or time.monotonic() >= deadline:
                break
            time.sleep(_POLL_S)
        if gone:
            return (
                f"node {', '.join(dict.fromkeys(gone))} left the Ray cluster during the run (replica "
                f"{replica} ran there); run-all keeps the runs already completed: run it again once the "
                f"cluster has its {self._cluster.nodes} nodes"
            )
        hosts = ", ".join(dict.fromkeys(self._nodes[stage.node_id].name for stage in where))
        return f"replica {replica} on {hosts} stopped: {_cause(error)}"

    def _release(self) -> None:
        """End the actors, free their GPUs, and leave the cluster if this transport joined it."""
        ray = self._ray
        if ray is None:
            return
        from ray.util.placement_group import remove_placement_group

        for actor in self._actors:
            try:
                ray.kill(actor)
            except Exception:  # already gone with its node
                continue
        for group in self._groups:
            try:
                remove_placement_group(group)
            except Exception:
                continue
        self._actors, self._groups = [], []
        if self._joined_here:
            ray.shutdown()
        self._ray = None


def _cause(error: BaseException) -> str:
    """A Ray error's first line: its full text repeats the remote traceback."""
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}"
