"""Every engine backend a descriptor may name, one record each: the facts the harness, preflight, plan
estimates and descriptor validation read.

Adding a backend is a module under `harness/engines/` implementing `Engine` and one record in `BACKENDS`.
The engine class and its argument model are named by import path and imported only by the harness when
that backend is chosen (`harness.engines.registry`), so a CPU host never imports vLLM and this layer
imports no engine.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BackendInfo:
    name: str  # the descriptor's `backend`
    engine: str  # "module:Class" implementing harness.engines.base.Engine
    args_model: str | None  # "module:Class", a pydantic model of engine_args; None: the engine checks them
    needs_gpu: bool  # the model is loaded here, on GPUs: preflight counts them and resolves the model
    start_s: float  # typical seconds from process start to a ready engine, for plan estimates
    replicas: bool  # `replicas > 1` runs one process per copy (ReplicatedEngine)
    # Its work runs on the system's accelerators (here or behind a server); False for a timing model.
    uses_accelerators: bool = True
    not_submittable: str | None = None  # why its results may never be submitted; None: they may be
    checks_endpoints: bool = False  # engine_args.endpoints are servers that must answer before a run
    package: str | None = None  # the Python package it needs installed (preflight names it)
    # Its engines can be placed on a Ray cluster's nodes (harness.engines.ray_replicas); False for
    # backends that reach servers someone else started.
    on_cluster: bool = True


# vLLM's start measured 36-202 s on an H200 (bench/RESULTS.md, GPU smoke): the first start on a host
# compiles, later ones hit the cache. vllm-async has vLLM's own data parallelism instead of replicas,
# and openai servers are scaled on their side.
BACKENDS: dict[str, BackendInfo] = {
    info.name: info
    for info in (
        BackendInfo(
            name="vllm",
            engine="harness.engines.vllm_offline:VllmOfflineEngine",
            args_model=None,
            needs_gpu=True,
            start_s=120.0,
            replicas=True,
            package="vllm",
        ),
        BackendInfo(
            name="vllm-async",
            engine="harness.engines.vllm_async:VllmAsyncEngine",
            args_model=None,
            needs_gpu=True,
            start_s=120.0,
            replicas=False,
            package="vllm",
        ),
        BackendInfo(
            name="openai",
            engine="harness.engines.openai:OpenAIEngine",
            args_model="harness.engines.openai:OpenAIArgs",
            needs_gpu=False,
            start_s=2.0,
            replicas=False,
            checks_endpoints=True,
            on_cluster=False,
        ),
        BackendInfo(
            name="synthetic",
            engine="harness.engines.synthetic:SyntheticEngine",
            args_model="harness.engines.synthetic:SyntheticArgs",
            needs_gpu=False,
            start_s=2.0,
            replicas=True,
            uses_accelerators=False,
            not_submittable="the synthetic engine is a timing model, not an inference system",
        ),
    )
}


def backend_info(name: str) -> BackendInfo:
    try:
        return BACKENDS[name]
    except KeyError:
        raise ValueError(f"unknown backend {name!r}; known: {', '.join(BACKENDS)}") from None
