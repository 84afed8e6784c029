"""Stand-ins for what cannot be downloaded here: a dataset with the real shape, and a weightless model.

`synthesize_dataset` writes records in the real file format (`instruction`, `input`, `tok_input`,
`output`) whose prompt lengths follow the real profile: log-normal around the benchmark's mean, the
longest exactly at its maximum. `write_dummy_model` writes the model architecture's config.json and a
marker, so vLLM builds the real architecture with random weights (`load_format="dummy"`).
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

from harness.preflight import DUMMY_MARKER
from submitter.errors import UsageProblem
from submitter.fileio import write_text_atomic
from submitter.rounds.models import GenerationRules

_MODELS_DIR = Path(__file__).resolve().parent / "models"
PROMPT_TEMPLATE = (
    "Summarize the following news article in 128 tokens. Please output the summary only, without any "
    "other text.\n\nArticle:\n{input}\n\nSummary:"
)
# Spread of log(prompt length); CNN/DailyMail prompts run from about a hundred to a few thousand tokens.
_LOG_SIGMA = 0.5
_MIN_PROMPT_TOKENS = 64
_WORDS = [
    "the",
    "of",
    "council",
    "said",
    "police",
    "report",
    "city",
    "new",
    "year",
    "people",
    "government",
    "minister",
    "school",
    "team",
    "club",
    "match",
    "win",
    "season",
    "court",
    "family",
    "hospital",
    "study",
    "market",
    "company",
    "rain",
    "weather",
    "storm",
    "fire",
    "river",
    "road",
]


def prompt_lengths(count: int, generation: GenerationRules, draw: random.Random) -> list[int]:
    mu = math.log(generation.mean_input_tokens) - _LOG_SIGMA**2 / 2
    lengths = [
        min(generation.max_input_tokens, max(_MIN_PROMPT_TOKENS, round(draw.lognormvariate(mu, _LOG_SIGMA))))
        for _ in range(count)
    ]
    lengths[max(range(count), key=lengths.__getitem__)] = generation.max_input_tokens
    return lengths


def synthesize_records(count: int, generation: GenerationRules, seed: int) -> list[dict[str, object]]:
    draw = random.Random(seed)
    records = []
    for number, length in enumerate(prompt_lengths(count, generation, draw)):
        body = [draw.randrange(1000, 120000) for _ in range(length - 1)]
        summary = " ".join(draw.choice(_WORDS) for _ in range(draw.randrange(40, 90)))
        records.append(
            {
                "instruction": {"llama": PROMPT_TEMPLATE},
                "input": f"synthetic article {number}",
                "tok_input": [generation.bos_token_id, *body],
                "output": summary.capitalize() + ".",
            }
        )
    return records


def synthesize_dataset(path: Path, count: int, generation: GenerationRules, seed: int = 0) -> None:
    records = synthesize_records(count, generation, seed)
    write_text_atomic(path, json.dumps(records, separators=(",", ":")))


def write_dummy_model(directory: Path, benchmark: str) -> Path:
    config = _MODELS_DIR / f"{benchmark}.json"
    if not config.is_file():
        known = ", ".join(sorted(p.stem for p in _MODELS_DIR.glob("*.json")))
        raise UsageProblem(f"no model architecture for {benchmark!r}; known: {known}")
    write_text_atomic(directory / "config.json", config.read_text(encoding="utf-8"))
    marker = {"benchmark": benchmark, "note": "no weights: vLLM builds this architecture with random weights"}
    write_text_atomic(directory / DUMMY_MARKER, json.dumps(marker, indent=2) + "\n")
    return directory
