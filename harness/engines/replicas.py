"""Data parallelism by processes: N copies of an engine, each in its own process on its own GPUs.

Replica r sees the r-th group of tensor x pipeline parallel GPUs among those the run was given
(CUDA_VISIBLE_DEVICES, which the runner sets from the placement preflight decided: harness.topology).
Each sample goes to the replica with the least work outstanding (prompt plus answer tokens), so one
Offline query is split evenly and Server queries go where there is room. Replicas send their events
back on one queue; a single collector thread reports them to LoadGen.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

from harness.engines.base import CompletionEvents, Engine, EngineSpec, Generation, Sample
from harness.environment import visible_devices
from harness.lifetime import end_with_parent
from harness.topology import replica_slices

EngineFactory = Callable[[EngineSpec], Engine]

_READY, _FIRST, _DONE, _FAILED, _STOPPED = "ready", "first", "done", "failed", "stopped"


class _QueueEvents:
    """CompletionEvents inside a replica: everything goes back to the parent's collector."""

    def __init__(self, outbox: Any) -> None:
        self._outbox = outbox

    def first_token(self, sample_id: int, token_ids: Sequence[int]) -> None:
        self._outbox.put((_FIRST, sample_id, list(token_ids)))

    def complete(self, sample_id: int, token_ids: Sequence[int]) -> None:
        self._outbox.put((_DONE, sample_id, list(token_ids)))

    def fail(self, sample_id: int, reason: str) -> None:
        self._outbox.put((_FAILED, sample_id, reason))


def _serve_replica(
    replica: int,
    spec: EngineSpec,
    create: EngineFactory,
    devices: str | None,
    inbox: Any,
    outbox: Any,
    parent_pid: int,
) -> None:
    end_with_parent(parent_pid)
    if devices is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = devices
    try:
        engine = create(spec)
        engine.start()
    except Exception as exc:
        outbox.put((_FAILED, None, f"replica {replica} did not start: {type(exc).__name__}: {exc}"))
        return
    outbox.put((_READY, None, engine.versions()))
    events = _QueueEvents(outbox)
    while (message := inbox.get()) is not None:
        if isinstance(message, Generation):
            engine.use_generation(message)
        else:
            engine.submit([Sample(*fields) for fields in message], events)
    engine.stop()
    outbox.put((_STOPPED, None, None))


class ReplicatedEngine:
    """`create` builds one copy in each process (a module-level function: it crosses to the child by
    name); `on_gpus`: each copy gets its own group of tensor x pipeline parallel GPUs of those this process
    was given (2 replicas of TP=4 on 8 GPUs: 0-3 and 4-7)."""

    def __init__(self, spec: EngineSpec, create: EngineFactory, on_gpus: bool) -> None:
        self._create = create
        self._on_gpus = on_gpus
        self._count = spec.replicas
        self._single = spec.model_copy(update={"replicas": 1})
        self._group_size = spec.gpus_per_replica
        self._answer_tokens = spec.generation.max_tokens
        context = multiprocessing.get_context("spawn")
        self._outbox = context.Queue()
        self._inboxes = [context.Queue() for _ in range(self._count)]
        self._processes: list[Any] = []
        self._outstanding = [0] * self._count
        self._cost: dict[int, tuple[int, int]] = {}
        self._events: dict[int, CompletionEvents] = {}
        self._lock = threading.Lock()
        self._versions: dict[str, str] = {}
        self._context = context
        self._collector = threading.Thread(target=self._collect, name="replica-collector", daemon=True)

    def _devices(self, replica: int) -> str | None:
        if not self._on_gpus:
            return None
        # Counted within the GPUs this process was given, so two runs can share a host.
        given = visible_devices() or [str(index) for index in range(self._count * self._group_size)]
        return ",".join(replica_slices(given, self._count, self._group_size)[replica])

    def start(self) -> None:
        for replica in range(self._count):
            process = self._context.Process(
                target=_serve_replica,
                args=(
                    replica,
                    self._single,
                    self._create,
                    self._devices(replica),
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
        for _ in range(self._count):
            kind, _, payload = self._outbox.get()
            if kind != _READY:
                self._shutdown()
                raise RuntimeError(payload)
            self._versions = payload
        self._collector.start()

    def use_generation(self, generation: Generation) -> None:
        # Queued before the next test's samples, so every replica switches before it sees them.
        with self._lock:
            self._answer_tokens = generation.max_tokens
        for inbox in self._inboxes:
            inbox.put(generation)

    def submit(self, samples: Sequence[Sample], events: CompletionEvents) -> None:
        batches: list[list[tuple[int, int, Any, int | None, Any]]] = [[] for _ in range(self._count)]
        with self._lock:
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
        for replica, batch in enumerate(batches):
            if batch:
                self._inboxes[replica].put(batch)

    def flush(self) -> None:
        """Replicas generate as samples arrive; nothing is held back."""

    def stop(self) -> None:
        for inbox in self._inboxes:
            inbox.put(None)
        self._collector.join()
        self._shutdown()

    def versions(self) -> dict[str, str]:
        return {**self._versions, "replicas": str(self._count)}

    def _shutdown(self) -> None:
        for process in self._processes:
            process.join(timeout=60)
            if process.is_alive():
                process.terminate()

    def _collect(self) -> None:
        running = self._count
        while running:
            kind, sample_id, payload = self._outbox.get()
            if kind == _STOPPED:
                running -= 1
                continue
            with self._lock:
                events = self._events[sample_id]
                if kind != _FIRST:
                    del self._events[sample_id]
                    owner, cost = self._cost.pop(sample_id)
                    self._outstanding[owner] -= cost
            if kind == _FIRST:
                events.first_token(sample_id, payload)
            elif kind == _DONE:
                events.complete(sample_id, payload)
            else:
                events.fail(sample_id, payload)
