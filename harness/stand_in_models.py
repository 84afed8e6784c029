"""What stands in for a model that cannot be downloaded here: an architecture with no weights (vLLM builds
it with random weights, `load_format="dummy"`), marked so preflight and run.json say so."""

from __future__ import annotations

import hashlib
import json
from array import array
from collections.abc import Sequence
from pathlib import Path

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


def architecture_file(benchmark: str) -> Path:
    """The architecture of a benchmark's model (its accuracy variants -99 and -99.9 share one)."""
    for name in (benchmark, benchmark.removesuffix("-99.9").removesuffix("-99")):
        config = _ARCHITECTURES_DIR / f"{name}.json"
        if config.is_file():
            return config
    known = ", ".join(sorted(p.stem for p in _ARCHITECTURES_DIR.glob("*.json")))
    raise UsageProblem(f"no model architecture for {benchmark!r}; known: {known}")


def write_dummy_model(
    directory: Path, benchmark: str, *, fp8: bool = False, layers: int | None = None
) -> Path:
    """config.json of the benchmark's architecture, optionally as an FP8 checkpoint or with fewer
    layers (the same model, shallower, where the whole one does not fit the GPUs at hand). Models that
    take audio or images also need their processor and tokenizer files beside it, which vLLM reads even
    with dummy weights (bench/multimodal_model_folders.py writes complete folders)."""
    config = json.loads(architecture_file(benchmark).read_text(encoding="utf-8"))
    # A vision-language model keeps its language model's depth in text_config (Qwen3-VL).
    text = config.get("text_config", config)
    full_depth = text["num_hidden_layers"]
    if layers is not None:
        if not 1 <= layers <= full_depth:
            raise UsageProblem(f"--layers must be between 1 and {full_depth} for {benchmark}")
        text["num_hidden_layers"] = layers
        for key in ("encoder_layers", "decoder_layers"):  # whisper: both halves as deep
            if key in text:
                text[key] = layers
        if "layer_types" in text:  # per-layer attention kinds (gpt-oss): the first `layers` of them
            text["layer_types"] = text["layer_types"][:layers]
        if "mlp_only_layers" in text:
            text["mlp_only_layers"] = [n for n in text["mlp_only_layers"] if n < layers]
    if fp8 and "quantization_config" not in config:  # a model published quantised keeps its own format
        config["quantization_config"] = _FP8_CHECKPOINT
    write_text_atomic(directory / "config.json", json.dumps(config, indent=2) + "\n")
    marker = {
        "benchmark": benchmark,
        "note": "no weights: vLLM builds this architecture with random weights",
        "layers": text["num_hidden_layers"],
        "model_layers": full_depth,
        "weights": "fp8 checkpoint" if fp8 else config.get("torch_dtype") or text.get("dtype"),
    }
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
