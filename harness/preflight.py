"""Checks made before a run starts, so bad input ends with a clear message and nothing written.

Each check raises a `SubmitterError` (or `UsageProblem`) that says what is wrong, where, and how to fix it.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from harness.cpu_shares import read_host, split_cpus
from harness.engines.registry import args_class
from harness.environment import gpus, visible_devices
from harness.ledger import LEDGER
from harness.media import image_pixel_limits
from harness.model_size import Precision, model_size
from harness.stand_in_models import DUMMY_MARKER
from harness.topology import (
    MemoryFit,
    Placement,
    check_fits,
    described_gpus,
    described_node_gpus,
    memory_fit,
    place,
    place_on_cluster,
)
from submitter import hub
from submitter.errors import SubmitterError, UsageProblem
from submitter.fileformats.run_record import ClusterNodeRecord
from submitter.fileio import ensure_writable
from submitter.systems.backends import backend_info
from submitter.systems.descriptor import BenchmarkSetup, ClusterSetup
from submitter.systems.descriptor_rules import SETTABLE_USER_CONF_KEYS

_WEIGHT_PATTERNS = ("*.safetensors", "*.bin", "*.pt", "*.gguf")


T = TypeVar("T")


class PreflightFailed(SubmitterError):
    """More than one check failed; all of them are reported at once."""

    def __init__(self, problems: list[SubmitterError]) -> None:
        self.problems = problems
        self.exit_code = 2 if any(isinstance(problem, UsageProblem) for problem in problems) else 1
        listed = "\n".join(f"- {problem}" for problem in problems)
        super().__init__(f"{len(problems)} problems; nothing was run:\n{listed}")


class Problems:
    """Runs independent checks, keeping every failure, so a user fixes them all in one go."""

    def __init__(self) -> None:
        self.found: list[SubmitterError] = []

    def check(self, check: Callable[..., T], *args: Any) -> T | None:
        try:
            return check(*args)
        except PreflightFailed as failed:
            self.found += failed.problems
        except SubmitterError as problem:
            self.found.append(problem)
        return None

    def raise_if_any(self) -> None:
        if len(self.found) == 1:
            raise self.found[0]
        if self.found:
            raise PreflightFailed(self.found)


def check_runs_destination(runs_root: Path, run_folder: Path | None = None) -> None:
    """The runs folder, its ledger and the folder a run goes into can be written (folders missing
    are made later): refused here, before an engine starts, not by a traceback half-way. Exit 2."""
    ensure_writable(runs_root, folder=True, make_parents=True)
    ensure_writable(runs_root / LEDGER, make_parents=True)
    if run_folder is not None:
        ensure_writable(run_folder, folder=True, make_parents=True)


def check_no_stray_audit_config(directory: Path) -> None:
    stray = directory / "audit.config"
    if stray.exists():
        raise SubmitterError(
            f"{stray} exists: LoadGen's default would turn any run started here into an audit run. "
            "submitter passes audit files explicitly; remove or rename this one"
        )


def check_user_conf(keys: dict[str, int | float], where: str) -> None:
    refused = sorted(set(keys) - SETTABLE_USER_CONF_KEYS)
    if refused:
        raise SubmitterError(
            f"{where}: user.conf keys {', '.join(refused)} may not be set by a submitter (mlperf.conf fixes "
            f"them); settable keys: {', '.join(sorted(SETTABLE_USER_CONF_KEYS))}"
        )


def resolve_model(backend: str, model: str) -> tuple[str, bool]:
    """The model to load and whether it is a dummy-weights directory; only in-process engines load one."""
    if not backend_info(backend).needs_gpu:
        return model, False
    path = Path(model).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise UsageProblem(f"model directory {path} has no config.json; point --model at a checkpoint")
        if (path / DUMMY_MARKER).is_file():
            return str(path.resolve()), True
        if not any(next(path.glob(pattern), None) for pattern in _WEIGHT_PATTERNS):
            raise UsageProblem(
                f"model directory {path} has no weight files (*.safetensors); download the checkpoint, "
                "or make a dummy-weights model for timing with `submitter data dummy-model`"
            )
        return str(path.resolve()), False
    if hub.snapshots(model):
        return model, False
    raise UsageProblem(
        f"model {model!r} is neither a local directory nor in the Hugging Face cache ({hub.hub_cache()}); "
        f"download it first (huggingface-cli download {model}) or pass --model DIR"
    )


def check_engine_installed(backend: str) -> None:
    package = backend_info(backend).package
    if package is not None and importlib.util.find_spec(package) is None:
        raise SubmitterError(
            f"backend {backend} needs {package}, which is not installed here; on a GPU host: "
            f"pip install '.[{package}]'"
        )


def check_backend_takes_media(backend: str, media: str | None, where: str) -> None:
    """The openai backend sends chats with images, never audio (OpenAI's API has no such prompt)."""
    if media == "audio" and backend == "openai":
        raise UsageProblem(f"{where}: backend openai sends no audio; use backend vllm for this benchmark")


def place_engines(
    backend: str, setup: BenchmarkSetup, system: Mapping[str, Any], where: str, described_host: bool
) -> Placement | None:
    """The GPUs each replica of an in-process GPU engine runs on (harness.topology), on this host or,
    when planning ahead, on the host the descriptor describes; None for engines that load no model here."""
    if not backend_info(backend).needs_gpu:
        return None
    if described_host:
        return place(setup, described_gpus(system), system, where)
    available = gpus(visible_devices(setup.environment.get("CUDA_VISIBLE_DEVICES")))
    if not available:
        raise SubmitterError(
            f"{where}: backend {backend} needs {setup.accelerators_needed} GPU(s) (replicas x tensor x "
            "pipeline parallel size) but nvidia-smi reports none; run on a GPU host, plan for the described "
            "one with run-all --dry-run --described-gpus, or use the synthetic or openai backend here"
        )
    placement = place(setup, available, system, where)
    if setup.replicas > 1:
        host = read_host([group[0].bus_id for group in placement.groups])
        placement = dataclasses.replace(placement, cpu_shares=split_cpus(host))
    return placement


def cluster_nodes(
    cluster: ClusterSetup, system: Mapping[str, Any], described_host: bool
) -> list[ClusterNodeRecord]:
    """A multi-node system's nodes: the live Ray cluster's, each checked against the descriptor (reachable,
    its nodes and GPUs per node, the same submitter, vLLM and torch everywhere), or, when planning ahead,
    the nodes the descriptor declares."""
    if described_host:
        return [
            ClusterNodeRecord(
                node_id=f"described-{number}",
                host=f"node-{number}",
                ip="described",
                gpus=cluster.gpus_per_node,
                devices=described_node_gpus(system),
            )
            for number in range(cluster.nodes)
        ]
    from harness.ray_cluster import preflight_nodes

    return list(preflight_nodes(cluster))


def place_engines_on_cluster(
    backend: str,
    setup: BenchmarkSetup,
    cluster: ClusterSetup,
    nodes: list[ClusterNodeRecord],
    system: Mapping[str, Any],
    where: str,
) -> Placement:
    """Which node runs each replica's stages; a GPU engine's nodes must hold the described GPUs."""
    return place_on_cluster(setup, cluster, nodes, system, where, check_kind=backend_info(backend).needs_gpu)


def check_memory(
    model: str,
    quantization: str | None,
    args: Mapping[str, Any],
    placement: Placement,
    where: str,
    mean_tokens: int | None = None,
) -> MemoryFit | None:
    """That each replica's GPUs hold the weights and at least one full-length sequence's KV cache under
    the engine arguments (and how many of the data set's mean sequence, `mean_tokens`, where known); None
    where the checkpoint's architecture is not one harness.model_size knows, or the GPUs' memory is not (a
    described host that leaves it unstated)."""
    config = hub.checkpoint_json(model, "config.json")
    if config is None or any(gpu.memory_bytes is None for gpu in placement.gpus):
        return None
    try:
        size = model_size(config)
        precision = Precision.of(config, quantization)
    except UsageProblem:
        return None
    max_pixels = None
    if size.encoder is not None and (processor := hub.checkpoint_json(model, "preprocessor_config.json")):
        limits = image_pixel_limits(processor)
        max_pixels = limits[1] if limits else None
    fit = memory_fit(size, precision, placement, args, mean_tokens, max_pixels)
    check_fits(fit, where)
    return fit


def check_engine_args(backend: str, args: dict[str, Any], where: str) -> None:
    """The harness's own engines declare their arguments; vLLM checks its own when it starts."""
    model = args_class(backend_info(backend))
    if model is None:
        return
    try:
        model.model_validate(args)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'engine_args'}: {e['msg']}" for e in exc.errors()
        )
        raise SubmitterError(f"{where}: engine_args for backend {backend} are wrong: {problems}") from None


def check_endpoints(endpoints: list[str], timeout_s: float = 5.0) -> None:
    """Each OpenAI-compatible server answers GET /v1/models."""
    for endpoint in endpoints:
        url = endpoint.rstrip("/") + "/v1/models"
        try:
            with urllib.request.urlopen(url, timeout=timeout_s) as response:
                json.load(response)
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            raise SubmitterError(
                f"the OpenAI-compatible server {endpoint} does not answer {url} ({reason}); start it "
                "(e.g. vllm serve MODEL) or correct engine_args.endpoints"
            ) from None
