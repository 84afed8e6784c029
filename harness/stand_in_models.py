"""What stands in for a model that cannot be downloaded here: an architecture with no weights (vLLM builds
it with random weights, `load_format="dummy"`), marked so preflight and run.json say so."""

from __future__ import annotations

import hashlib
import json
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.media import Media, media_key
from submitter.errors import UsageProblem
from submitter.fileio import write_text_atomic

# Beside config.json in a model folder: the weights are random, so results are never submittable.
DUMMY_MARKER = "submitter-dummy-weights.json"
# Beside tokenizer.json in a demo model folder: the synthetic engine's answer to each sample.
DEMO_ANSWERS = "answers.json"
_ARCHITECTURES_DIR = Path(__file__).resolve().parent / "models"


def prompt_key(token_ids: Sequence[int], media: Media | None = None) -> str:
    """How answers.json names a prompt when a demo model answers by prompt: SHA-256 of its int32 ids, or
    of its audio or chat where the sample has them (whisper's prompt ids are the same for every sample)."""
    if media is not None:
        return media_key(media)
    return hashlib.sha256(array("i", token_ids).tobytes()).hexdigest()


# Serialized-FP8 weights: vLLM allocates them in FP8 from the start. Quantising random 16-bit weights at
# load time would first hold the whole model in 16 bits, which for a 70B model fills an H200.
_FP8_CHECKPOINT = {"quant_method": "fp8", "activation_scheme": "dynamic"}
# Beside the architectures: the checkpoint each benchmark's published systems ran, and its source.
_PUBLISHED_PRECISION = _ARCHITECTURES_DIR / "published_precision.json"
# What a stand-in's weights are stored as: the architecture file's own (16-bit, or the format the model
# is published in), the precision the published systems ran (published_precision.json), or plain FP8.
PRECISIONS = ("checkpoint", "published", "fp8")


def architecture_file(benchmark: str) -> Path:
    """The architecture of a benchmark's model (its accuracy variants -99 and -99.9 share one)."""
    for name in (benchmark, benchmark.removesuffix("-99.9").removesuffix("-99")):
        config = _ARCHITECTURES_DIR / f"{name}.json"
        if config.is_file():
            return config
    known = ", ".join(sorted(p.stem for p in _ARCHITECTURES_DIR.glob("*.json") if p != _PUBLISHED_PRECISION))
    raise UsageProblem(f"no model architecture for {benchmark!r}; known: {known}")


def published_precision(benchmark: str) -> dict[str, Any]:
    """The checkpoint the published systems loaded and its quantization_config (published_precision.json)."""
    table = json.loads(_PUBLISHED_PRECISION.read_text(encoding="utf-8"))
    name = architecture_file(benchmark).stem
    if name not in table:
        raise UsageProblem(f"published_precision.json names no published precision for {benchmark}")
    return table[name]


def _cut_to(config: dict[str, Any], layers: int) -> None:
    """The same model with its first `layers` decoder layers (the per-layer lists cut to match)."""
    text = config.get("text_config", config)  # a vision-language model keeps its depth in text_config
    full_depth = text["num_hidden_layers"]
    if not 1 <= layers <= full_depth:
        raise UsageProblem(f"--layers must be between 1 and {full_depth}")
    # Qwen3-VL adds its deepstack features after the first text layers, one each: those must exist.
    deepstack = len(config.get("vision_config", {}).get("deepstack_visual_indexes", []))
    if layers < deepstack:
        raise UsageProblem(f"--layers must be at least {deepstack}: the vision tower feeds that many layers")
    text["num_hidden_layers"] = layers
    for key in ("encoder_layers", "decoder_layers"):  # whisper: both halves as deep
        if key in text:
            text[key] = layers
    if "layer_types" in text:  # per-layer attention kinds (gpt-oss): the first `layers` of them
        text["layer_types"] = text["layer_types"][:layers]
    if "mlp_only_layers" in text:
        text["mlp_only_layers"] = [n for n in text["mlp_only_layers"] if n < layers]


def stand_in_config(
    benchmark: str, *, precision: str = "checkpoint", layers: int | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """config.json of a weightless stand-in for the benchmark's model, and its DUMMY_MARKER record."""
    config = json.loads(architecture_file(benchmark).read_text(encoding="utf-8"))
    text = config.get("text_config", config)
    full_depth = text["num_hidden_layers"]
    if layers is not None:
        _cut_to(config, layers)
    if precision not in PRECISIONS:
        raise UsageProblem(f"precision {precision!r}: use one of {', '.join(PRECISIONS)}")
    if precision == "published":
        published = published_precision(benchmark)
        if published["quantization_config"] is not None:
            config["quantization_config"] = published["quantization_config"]
        if "torch_dtype" in published:
            config["torch_dtype"] = published["torch_dtype"]
    elif precision == "fp8" and "quantization_config" not in config:  # a published format is kept
        config["quantization_config"] = _FP8_CHECKPOINT
    quantized = config.get("quantization_config")
    weights = quantized["quant_method"] if quantized else config.get("torch_dtype") or text.get("dtype")
    if precision == "published":
        weights = f"{weights}, as {published['checkpoint']}"
    marker = {
        "benchmark": benchmark,
        "note": "no weights: vLLM builds this architecture with random weights",
        "layers": text["num_hidden_layers"],
        "model_layers": full_depth,
        "weights": weights,
    }
    return config, marker


def write_dummy_model(
    directory: Path, benchmark: str, *, precision: str = "checkpoint", layers: int | None = None
) -> Path:
    """config.json of the benchmark's architecture in a precision (PRECISIONS), optionally with fewer
    layers (the same model, shallower, where the whole one does not fit the GPUs at hand). Models that
    take audio or images also need their processor and tokenizer files beside it, which vLLM reads even
    with dummy weights (bench/multimodal_model_folders.py writes complete folders)."""
    config, marker = stand_in_config(benchmark, precision=precision, layers=layers)
    write_text_atomic(directory / "config.json", json.dumps(config, indent=2) + "\n")
    write_text_atomic(directory / DUMMY_MARKER, json.dumps(marker, indent=2) + "\n")
    return directory


def dummy_description(model_dir: Path) -> str:
    """What a run on this weightless model is, for run.json: "dummy (random) weights[, N of M layers]"."""
    try:
        marker = json.loads((model_dir / DUMMY_MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        marker = {}
    if not isinstance(marker, dict):
        marker = {}
    layers, model_layers = marker.get("layers"), marker.get("model_layers")
    if isinstance(layers, int) and isinstance(model_layers, int) and layers < model_layers:
        return f"dummy (random) weights, {layers} of {model_layers} layers"
    return "dummy (random) weights"
