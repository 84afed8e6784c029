"""Data parallelism: N copies of an engine behind one dispatcher, each copy reached through a transport.

The dispatcher (`ReplicatedEngine`) sends each sample to the replica with the least work outstanding
(prompt plus answer tokens), so one Offline query is split evenly and Server queries go where there is
room, and reports the replicas' events to LoadGen. Where the copies run is the transport's business:

- `ProcessReplicas` (this module): one process per copy on this host. Replica r sees the r-th group of
  tensor x pipeline parallel GPUs among those the run was given (CUDA_VISIBLE_DEVICES, which the runner
  sets from the placement preflight decided: harness.topology), runs on its own share of the host's CPUs
  where preflight gave it one, and with the engine's environment: where the harness sets the threads, its
  vLLM engine core has one, and media inputs are made on half its share (harness.cpu_shares says why).
- `RayReplicas` (`ray_replicas`): one Ray actor per copy on a cluster's nodes, for multi-node systems.

Either way a transport hands every event to one `receive` callback: `(FIRST|DONE|FAILED, sample_id,
payload)`, `(STOPPED, None, None)` when a replica has ended, or `(LOST, None, (replica, reason))` when a
replica is gone mid-run (its node left the cluster). A lost replica fails its samples, and every later
one: the run no longer runs on the described system, so it is stopped (`on_fault`) and named.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from harness.engines.base import CompletionEvents, Engine, EngineSpec, Generation, Sample
from harness.environment import visible_devices
from harness.lifetime import end_with_parent
from harness.topology import replica_slices
from submitter.fileformats.run_record import StageRecord

EngineFactory = Callable[[EngineSpec], Engine]
# A sample as it crosses to a replica: id, dataset index, prompt ids, reference length, media.
SampleFields = tuple[int, int, Any, int | None, Any]
# What the dispatcher sends a replica: new sampling, a batch of samples, or None (finish and end).
ReplicaMessage = Generation | list[SampleFields] | None
Receive = Callable[[str, int | None, Any], None]

READY, FIRST, DONE, FAILED, STOPPED, LOST = "ready", "first", "done", "failed", "stopped", "lost"


class ReplicaTransport(Protocol):
    """How the dispatcher reaches its replicas."""

    def start(self, receive: Receive) -> dict[str, str]:
        """Start every replica, return once all are ready (their engines' versions); raise if one is not.
        From then on events go to `receive`, from one thread."""
        ...

    def send(self, replica: int, message: ReplicaMessage) -> None: ...

    def wait_stopped(self) -> None:
        """After None was sent to every replica: wait until all have answered everything and ended."""
        ...

    def placement(self) -> list[StageRecord]:
        """Where each replica's stages run (multi-node transports); empty on one host."""
        ...


class ReplicatedEngine:
    """The one dispatcher: replicas = the transport's copies, each given its share of the samples."""

    def __init__(self, spec: EngineSpec, transport: ReplicaTransport) -> None:
        self._transport = transport
        self._count = spec.replicas
        self._answer_tokens = spec.generation.max_tokens
        self._outstanding = [0] * self._count
        self._cost: dict[int, tuple[int, int]] = {}
        self._events: dict[int, CompletionEvents] = {}
        self._lock = threading.Lock()
        self._versions: dict[str, str] = {}
        self._fault: str | None = None
        self._on_fault: Callable[[str], None] | None = None

    @property
    def fault(self) -> str | None:
        """Why the engine stopped serving (a replica's node was lost); None while it serves."""
        return self._fault

    def on_fault(self, callback: Callable[[str], None]) -> None:
        """Called once, from the transport's thread, when a replica is lost."""
        self._on_fault = callback

    def placement(self) -> list[StageRecord]:
        return self._transport.placement()

    def start(self) -> None:
        self._versions = self._transport.start(self._receive)

    def use_generation(self, generation: Generation) -> None:
        # Sent before the next test's samples, so every replica switches before it sees them.
        with self._lock:
            self._answer_tokens = generation.max_tokens
        for replica in range(self._count):
            self._transport.send(replica, generation)

    def submit(self, samples: Sequence[Sample], events: CompletionEvents) -> None:
        batches: list[list[SampleFields]] = [[] for _ in range(self._count)]
        with self._lock:
            fault = self._fault
            if fault is None:
                for sample in samples:
                    replica = min(range(self._count), key=self._outstanding.__getitem__)
                    cost = len(sample.prompt) + self._answer_tokens
                    self._outstanding[replica] += cost
                    self._cost[sample.id] = (replica, cost)
                    self._events[sample.id] = events
                    fields = (
                        sample.id,
                        sample.index,
                        sample.prompt,
                        sample.reference_output_tokens,
                        sample.media,
                    )
                    batches[replica].append(fields)
        if fault is not None:  # LoadGen still needs an answer for each
            for sample in samples:
                events.fail(sample.id, fault)
            return
        for replica, batch in enumerate(batches):
            if batch:
                self._transport.send(replica, batch)

    def flush(self) -> None:
        """Replicas generate as samples arrive; nothing is held back."""

    def stop(self) -> None:
        for replica in range(self._count):
            self._transport.send(replica, None)
        self._transport.wait_stopped()

    def versions(self) -> dict[str, str]:
        return {**self._versions, "replicas": str(self._count)}

    def _receive(self, kind: str, sample_id: int | None, payload: Any) -> None:
        if kind == STOPPED:
            return
        if kind == LOST:
            self._lose(*payload)
            return
        assert sample_id is not None
        with self._lock:
            events = self._events.get(sample_id)
            if events is None:  # already failed with its lost replica
                return
            if kind != FIRST:
                del self._events[sample_id]
                owner, cost = self._cost.pop(sample_id)
                self._outstanding[owner] -= cost
        if kind == FIRST:
            events.first_token(sample_id, payload)
        elif kind == DONE:
            events.complete(sample_id, payload)
        else:
            events.fail(sample_id, payload)

    def _lose(self, replica: int, reason: str) -> None:
        with self._lock:
            first = self._fault is None
            self._fault = self._fault or reason
            orphans = [
                (sample_id, self._events.pop(sample_id))
                for sample_id, (owner, _) in list(self._cost.items())
                if owner == replica
            ]
            for sample_id, _ in orphans:
                self._cost.pop(sample_id)
            self._outstanding[replica] = 0
        for sample_id, events in orphans:
            events.fail(sample_id, reason)
        if first and self._on_fault is not None:
            self._on_fault(reason)


class _QueueEvents:
    """CompletionEvents inside a replica process: everything goes back to the parent's collector."""

    def __init__(self, outbox: Any) -> None:
        self._outbox = outbox

    def first_token(self, sample_id: int, token_ids: Sequence[int]) -> None:
        self._outbox.put((FIRST, sample_id, list(token_ids)))

    def complete(self, sample_id: int, token_ids: Sequence[int]) -> None:
        self._outbox.put((DONE, sample_id, list(token_ids)))

    def fail(self, sample_id: int, reason: str) -> None:
        self._outbox.put((FAILED, sample_id, reason))


def _serve_replica(
    replica: int,
    spec: EngineSpec,
    create: EngineFactory,
    devices: str | None,
    cpus: tuple[int, ...] | None,
    inbox: Any,
    outbox: Any,
    parent_pid: int,
) -> None:
    end_with_parent(parent_pid)
    if devices is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = devices
    try:
        if cpus:
            os.sched_setaffinity(0, cpus)
        engine = create(spec)
        engine.start()
    except Exception as exc:
        outbox.put((FAILED, None, f"replica {replica} did not start: {type(exc).__name__}: {exc}"))
        return
    outbox.put((READY, None, engine.versions()))
    events = _QueueEvents(outbox)
    while (message := inbox.get()) is not None:
        if isinstance(message, Generation):
            engine.use_generation(message)
        else:
            engine.submit([Sample(*fields) for fields in message], events)
    engine.stop()
    outbox.put((STOPPED, None, None))


class ProcessReplicas:
    """One process per copy on this host. `create` builds the copy in its process (a module-level
    function: it crosses to the child by name); `on_gpus`: each copy gets its own group of tensor x
    pipeline parallel GPUs of those this process was given (2 replicas of TP=4 on 8 GPUs: 0-3 and 4-7)."""

    def __init__(self, spec: EngineSpec, create: EngineFactory, on_gpus: bool) -> None:
        self._create = create
        self._on_gpus = on_gpus
        self._count = spec.replicas
        self._single = spec.model_copy(update={"replicas": 1, "cpu_shares": None})
        self._group_size = spec.gpus_per_replica
        self._cpu_shares = spec.cpu_shares
        context = multiprocessing.get_context("spawn")
        self._outbox = context.Queue()
        self._inboxes = [context.Queue() for _ in range(self._count)]
        self._processes: list[Any] = []
        self._context = context
        self._collector: threading.Thread | None = None

    def _devices(self, replica: int) -> str | None:
        if not self._on_gpus:
            return None
        # Counted within the GPUs this process was given, so two runs can share a host.
        given = visible_devices() or [str(index) for index in range(self._count * self._group_size)]
        return ",".join(replica_slices(given, self._count, self._group_size)[replica])

    def start(self, receive: Receive) -> dict[str, str]:
        for replica in range(self._count):
            process = self._context.Process(
                target=_serve_replica,
                args=(
                    replica,
                    self._single,
                    self._create,
                    self._devices(replica),
                    self._cpu_shares[replica] if self._cpu_shares else None,
                    self._inboxes[replica],
                    self._outbox,
                    os.getpid(),
                ),
                name=f"replica-{replica}",
                # Not daemonic: vLLM starts its engine core as a child process, which daemons may not
                # have. A replica still dies with the run (end_with_parent) and stop() joins it.
            )
            process.start()
            self._processes.append(process)
        versions: dict[str, str] = {}
        for _ in range(self._count):
            kind, _, payload = self._outbox.get()
            if kind != READY:
                for inbox in self._inboxes:  # the replicas that did start end at once
                    inbox.put(None)
                self._shutdown()
                raise RuntimeError(payload)
            versions = payload
        self._collector = threading.Thread(
            target=self._collect, args=(receive,), name="replica-collector", daemon=True
        )
        self._collector.start()
        return versions

    def send(self, replica: int, message: ReplicaMessage) -> None:
        self._inboxes[replica].put(message)

    def wait_stopped(self) -> None:
        if self._collector is not None:
            self._collector.join()
        self._shutdown()

    def placement(self) -> list[StageRecord]:
        return []

    def _shutdown(self) -> None:
        for process in self._processes:
            process.join(timeout=60)
            if process.is_alive():
                process.terminate()

    def _collect(self, receive: Receive) -> None:
        running = self._count
        while running:
            kind, sample_id, payload = self._outbox.get()
            if kind == STOPPED:
                running -= 1
            receive(kind, sample_id, payload)
