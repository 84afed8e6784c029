"""llama3.1-405b's stand-ins: long-context records in the reference's format, each with its metric
(summaries scored by ROUGE-L, needle-in-a-haystack UUIDs and question answers by exact match) in the
dataset's proportions, with the real input and output lengths, and a demo model that passes.

Answers to the exact-match samples are short, so the summaries' answers are made long enough for the
whole set's mean output length to be the benchmark's tokens per sample; each record's `tok_ref_output_len`
is the length a dummy-weight run generates for it.
"""

from __future__ import annotations

import random
import uuid
from pathlib import Path

from harness.benchmarks.demo_text import (
    ANSWER_WORDS,
    mutate_words,
    text_of_length,
    write_text_demo_model,
)
from harness.benchmarks.lengths import lognormal_lengths, random_token_ids, shares_to_kinds
from harness.benchmarks.llama3_1_405b.dataset import OUTPUT_LENGTH_COLUMN
from submitter.rounds.models import GenerationRules

# Share of each metric's samples in the dataset.
METRIC_SHARES = {"rouge": 0.5, "niah_em": 0.25, "qa_em": 0.25}
_LLAMA3_ORDINARY_IDS = range(1000, 120000)
_SHORT_ANSWER_TOKENS = 16  # about what a needle or a short answer takes in demo tokens
_CITIES = ("Paris", "Lisbon", "Nairobi", "Lima", "Oslo", "Hanoi", "Quito", "Perth", "Accra", "Riga")


def synthesize_records(count: int, generation: GenerationRules, seed: int) -> list[dict[str, object]]:
    draw = random.Random(seed)
    metrics = shares_to_kinds(count, METRIC_SHARES)
    mean_output = generation.mean_output_tokens or generation.max_output_tokens / 3
    rouge_share = METRIC_SHARES["rouge"]
    summary_mean = (mean_output - (1 - rouge_share) * _SHORT_ANSWER_TOKENS) / rouge_share
    prompt_lengths = lognormal_lengths(
        count, generation.mean_input_tokens, 64, generation.max_input_tokens, draw
    )
    summary_lengths = iter(
        lognormal_lengths(
            metrics.count("rouge"), summary_mean, 32, generation.max_output_tokens, draw, sigma=0.3
        )
    )
    records = []
    for number, (metric, prompt_length) in enumerate(zip(metrics, prompt_lengths, strict=True)):
        answer_length = _SHORT_ANSWER_TOKENS
        if metric == "rouge":
            answer_length = next(summary_lengths)
            truth = text_of_length(draw, ANSWER_WORDS, answer_length)
            task = "Summarize the report above."
        elif metric == "niah_em":
            truth = str(uuid.UUID(int=draw.getrandbits(128)))
            task = "What is the special magic uuid mentioned in the text above?"
        else:
            city = draw.choice(_CITIES)
            truth = f"{city}|{city.lower()}, the capital"
            task = "Which city is the answer? Answer with the name after 'Answer: '."
        tok_input = [
            generation.bos_token_id,
            *random_token_ids(draw, _LLAMA3_ORDINARY_IDS, prompt_length - 1),
        ]
        records.append(
            {
                "input": f"<|begin_of_text|>synthetic long context {number} ... {task}",
                "tok_input": tok_input,
                "tok_input_len": len(tok_input),
                "gt_output": truth,
                "metric": metric,
                OUTPUT_LENGTH_COLUMN: answer_length,
            }
        )
    return records


def _demo_answer(record: dict[str, object], draw: random.Random) -> str:
    truth, metric = str(record["gt_output"]), record["metric"]
    if metric == "rouge":
        return mutate_words(truth, ANSWER_WORDS, draw)
    right = draw.random() < 0.95
    if metric == "niah_em":
        found = truth if right else str(uuid.UUID(int=draw.getrandbits(128)))
        return f"The special magic uuid is: {found}"
    return f"The text says so. Answer: {truth.split('|')[0] if right else 'Nowhere'}"


def write_demo_model(
    directory: Path, records: list[dict[str, object]], max_tokens: int, seed: int = 1
) -> Path:
    draw = random.Random(seed)
    return write_text_demo_model(directory, [_demo_answer(record, draw) for record in records], max_tokens)
