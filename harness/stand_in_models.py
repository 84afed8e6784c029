"""What stands in for a model that cannot be downloaded here: an architecture with no weights (vLLM builds
it with random weights, `load_format="dummy"`), marked so preflight and run.json say so."""

from __future__ import annotations

import json
from pathlib import Path

from submitter.errors import UsageProblem
from submitter.fileio import write_text_atomic

# Beside config.json in a model folder: the weights are random, so results are never submittable.
DUMMY_MARKER = "submitter-dummy-weights.json"
# Beside tokenizer.json in a demo model folder: the synthetic engine's answer to each sample.
DEMO_ANSWERS = "answers.json"
_ARCHITECTURES_DIR = Path(__file__).resolve().parent / "models"


def write_dummy_model(directory: Path, benchmark: str) -> Path:
    config = _ARCHITECTURES_DIR / f"{benchmark}.json"
    if not config.is_file():
        known = ", ".join(sorted(p.stem for p in _ARCHITECTURES_DIR.glob("*.json")))
        raise UsageProblem(f"no model architecture for {benchmark!r}; known: {known}")
    write_text_atomic(directory / "config.json", config.read_text(encoding="utf-8"))
    marker = {"benchmark": benchmark, "note": "no weights: vLLM builds this architecture with random weights"}
    write_text_atomic(directory / DUMMY_MARKER, json.dumps(marker, indent=2) + "\n")
    return directory
