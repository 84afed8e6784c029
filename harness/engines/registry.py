"""Engines by backend name: the records in `submitter.systems.backends`, their classes imported on demand.

Adding a backend is a module implementing `base.Engine` and one record in `BACKENDS`; nothing here changes.
"""

from __future__ import annotations

import importlib
from typing import Any

from pydantic import BaseModel

from harness.engines.base import Engine, EngineSpec
from submitter.systems.backends import BackendInfo, backend_info


def engine_class(info: BackendInfo) -> type[Engine]:
    return _load(info.engine)


def args_class(info: BackendInfo) -> type[BaseModel] | None:
    return None if info.args_model is None else _load(info.args_model)


def create_engine(spec: EngineSpec) -> Engine:
    """The engine of a spec: on a Ray cluster's nodes where the system has one (every replica an actor,
    even a single one), else N processes on this host, else the backend's engine in this process."""
    info = backend_info(spec.backend)
    if spec.cluster is not None:
        from harness.engines.ray_replicas import RayReplicas
        from harness.engines.replicas import ReplicatedEngine

        return ReplicatedEngine(spec, RayReplicas(spec, engine_class(info)))
    if spec.replicas > 1 and info.replicas:
        from harness.engines.replicas import ProcessReplicas, ReplicatedEngine

        return ReplicatedEngine(spec, ProcessReplicas(spec, create_engine, on_gpus=info.needs_gpu))
    return engine_class(info)(spec)


def _load(reference: str) -> Any:
    module, name = reference.split(":")
    return getattr(importlib.import_module(module), name)
