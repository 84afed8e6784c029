"""Engines behind one protocol (`base.Engine`); each backend in its own module, imported only when chosen.

| backend      | module         | runs                                                        |
|--------------|----------------|-------------------------------------------------------------|
| `vllm`       | `vllm_offline` | vLLM's in-process `LLM`, every sample handed over at once     |
| `vllm-async` | `vllm_async`   | vLLM's in-process `AsyncLLM`, streaming first tokens          |
| `openai`     | `openai`       | `/v1/completions` on one or many OpenAI-compatible servers    |
| `synthetic`  | `synthetic`    | a deterministic timing model on the CPU                       |

`event_loop.SampleLoop` is the asyncio thread the two streaming engines (`vllm-async`, `openai`) share.
`replicas > 1` runs that many copies of the `vllm` or `synthetic` engine, one process each (`replicas`
module); `vllm-async` uses vLLM's own data parallelism instead.
"""

from __future__ import annotations

import importlib

from harness.engines.base import Engine, EngineSpec

_MODULES = {
    "vllm": ("harness.engines.vllm_offline", "VllmOfflineEngine"),
    "vllm-async": ("harness.engines.vllm_async", "VllmAsyncEngine"),
    "openai": ("harness.engines.openai", "OpenAIEngine"),
    "synthetic": ("harness.engines.synthetic", "SyntheticEngine"),
}
GPU_BACKENDS = frozenset({"vllm", "vllm-async"})
# Typical seconds from process start to a ready engine, for plan estimates. vLLM measured 36-202 s on an
# H200 (bench/RESULTS.md, GPU smoke): the first start on a host compiles, later ones hit the cache.
ENGINE_START_S = {"vllm": 120.0, "vllm-async": 120.0, "openai": 2.0, "synthetic": 2.0}


def create_engine(spec: EngineSpec) -> Engine:
    if spec.backend not in _MODULES:
        raise ValueError(f"unknown backend {spec.backend!r}; known: {', '.join(_MODULES)}")
    # vllm-async has vLLM's own data parallelism, and openai servers are scaled on their side.
    if spec.replicas > 1 and spec.backend in {"vllm", "synthetic"}:
        from harness.engines.replicas import ReplicatedEngine

        return ReplicatedEngine(spec)
    module_name, class_name = _MODULES[spec.backend]
    engine_class = getattr(importlib.import_module(module_name), class_name)
    return engine_class(spec)
