"""llama3.1-8b's stand-ins for what cannot be downloaded here: a dataset with the real shape, a demo model.

`synthesize_dataset` writes records in the real file format (`instruction`, `input`, `tok_input`,
`output`) whose prompt lengths follow the real profile: log-normal around the benchmark's mean, the
longest exactly at its maximum. `write_demo_model` writes a tokenizer and the synthetic engine's answers.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from harness.benchmarks.lengths import lognormal_lengths
from harness.benchmarks.llama3_1_8b.dataset import write_dataset
from harness.stand_in_models import DEMO_ANSWERS
from submitter.fileio import write_text_atomic
from submitter.rounds.models import GenerationRules

PROMPT_TEMPLATE = (
    "Summarize the following news article in 128 tokens. Please output the summary only, without any "
    "other text.\n\nArticle:\n{input}\n\nSummary:"
)
# Spread of log(prompt length); CNN/DailyMail prompts run from about a hundred to a few thousand tokens.
_LOG_SIGMA = 0.5
_MIN_PROMPT_TOKENS = 64
# The demo's summaries are news-like sentences over this vocabulary.
_NEWS_TEXT = (
    "the council said police report city new year people government minister school team club match "
    "season court family hospital study market company rain weather storm fire river road officials "
    "announced thousands homes closed friday residents asked experts warned prices rose election "
    "president leaders agreed plan million workers union strike airport flights delayed health service"
)
_WORDS = _NEWS_TEXT.split(" ")


def prompt_lengths(count: int, generation: GenerationRules, draw: random.Random) -> list[int]:
    return lognormal_lengths(
        count, generation.mean_input_tokens, _MIN_PROMPT_TOKENS, generation.max_input_tokens, draw, _LOG_SIGMA
    )


def summary_words(draw: random.Random) -> list[str]:
    """Four sentences of news words, about 600 characters: the length of a CNN/DailyMail highlight."""
    words: list[str] = []
    for _ in range(4):
        sentence = [draw.choice(_WORDS) for _ in range(draw.randrange(17, 27))]
        words += [sentence[0].capitalize(), *sentence[1:], "."]
    return words


def summary_text(words: list[str]) -> str:
    return " ".join(words).replace(" .", ".")


def news_summary(draw: random.Random) -> str:
    return summary_text(summary_words(draw))


def synthesize_records(count: int, generation: GenerationRules, seed: int) -> list[dict[str, object]]:
    draw = random.Random(seed)
    records = []
    for number, length in enumerate(prompt_lengths(count, generation, draw)):
        body = [draw.randrange(1000, 120000) for _ in range(length - 1)]
        records.append(
            {
                "instruction": {"llama": PROMPT_TEMPLATE},
                "input": f"synthetic article {number}",
                "tok_input": [generation.bos_token_id, *body],
                "output": news_summary(draw),
            }
        )
    return records


def synthesize_dataset(
    path: Path, count: int, generation: GenerationRules, seed: int = 0
) -> list[dict[str, object]]:
    records = synthesize_records(count, generation, seed)
    write_dataset(path, records)
    return records


_DEMO_VOCABULARY = ["[UNK]", ".", *_WORDS, *(word.capitalize() for word in _WORDS)]


def write_demo_model(
    directory: Path, records: list[dict[str, object]], max_tokens: int, seed: int = 1
) -> Path:
    """A word-level tokenizer for the demo's summaries, and the synthetic model's answers to each record:
    its reference with about one word in ten changed, so that evaluation gives passing, imperfect ROUGE."""
    references = [str(record["output"]) for record in records]
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocabulary = {token: number for number, token in enumerate(dict.fromkeys(_DEMO_VOCABULARY))}
    tokenizer = Tokenizer(models.WordLevel(vocabulary, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    directory.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(directory / "tokenizer.json"))
    write_text_atomic(directory / "tokenizer_config.json", json.dumps({"clean_up_tokenization_spaces": True}))
    draw = random.Random(seed)
    answers = []
    for reference in references:
        words = reference.replace(".", " .").split()
        changed = [draw.choice(_WORDS) if word != "." and draw.random() < 0.1 else word for word in words]
        answers.append([vocabulary.get(word, 0) for word in changed][:max_tokens])
    write_text_atomic(directory / DEMO_ANSWERS, json.dumps(answers, separators=(",", ":")))
    return directory
