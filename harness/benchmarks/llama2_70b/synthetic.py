"""llama2-70b's stand-ins: OpenOrca-shaped records (four origins in equal parts, the Llama 2 chat
template, token 29871 after each prompt) with the real input and output lengths, and a demo model."""

from __future__ import annotations

import random
from pathlib import Path

from harness.benchmarks.demo_text import ANSWER_WORDS, mutate_words, text_of_length, write_text_demo_model
from harness.benchmarks.lengths import lognormal_lengths, random_token_ids
from submitter.rounds.models import GenerationRules

ORIGINS = ("cot", "flan", "niv", "t0")
PROMPT_TEMPLATE = "<s>[INST] <<SYS>>\n{system_prompt}\n<</SYS>>\n\n{question} [/INST]"
SYSTEM_PROMPT = "You are an AI assistant. You will be given a task. You must generate a detailed answer."
# The reference appends this id to every prompt: Llama 2 always emits it first.
PROMPT_SUFFIX_TOKEN = 29871
_LLAMA2_ORDINARY_IDS = range(3, 32000)
_MIN_ANSWER_TOKENS = 3  # the reference drops answers shorter than this


def synthesize_records(count: int, generation: GenerationRules, seed: int) -> list[dict[str, object]]:
    draw = random.Random(seed)
    # The reference filters both sides to fewer than max_input_tokens (1024) tokens.
    longest = generation.max_input_tokens
    prompt_lengths = lognormal_lengths(count, generation.mean_input_tokens, 16, longest, draw)
    answer_lengths = lognormal_lengths(
        count, generation.mean_output_tokens, _MIN_ANSWER_TOKENS, generation.max_output_tokens - 1, draw
    )
    records = []
    for number, (prompt_length, answer_length) in enumerate(zip(prompt_lengths, answer_lengths, strict=True)):
        origin = ORIGINS[number % len(ORIGINS)]
        question = f"Synthetic {origin} task {number}: " + text_of_length(draw, ANSWER_WORDS, 40)
        body = random_token_ids(draw, _LLAMA2_ORDINARY_IDS, prompt_length - 2)
        tok_input = [generation.bos_token_id, *body, PROMPT_SUFFIX_TOKEN]
        tok_output = random_token_ids(draw, _LLAMA2_ORDINARY_IDS, answer_length)
        records.append(
            {
                "id": f"{origin}.{number}",
                "system_prompt": SYSTEM_PROMPT,
                "question": question,
                "output": text_of_length(draw, ANSWER_WORDS, answer_length),
                "input": PROMPT_TEMPLATE.format(system_prompt=SYSTEM_PROMPT, question=question),
                "tok_input": tok_input,
                "tok_output": tok_output,
                "origin": origin,
                "tok_input_length": len(tok_input),
                "tok_output_length": len(tok_output),
            }
        )
    return records


def write_demo_model(
    directory: Path, records: list[dict[str, object]], max_tokens: int, seed: int = 1
) -> Path:
    """Answers: each reference with about one word in ten changed (passing, imperfect ROUGE), as many
    demo tokens as the reference's `tok_output_length`, so tokens per sample follow the real profile."""
    draw = random.Random(seed)
    answers = [mutate_words(str(record["output"]), ANSWER_WORDS, draw) for record in records]
    return write_text_demo_model(directory, answers, max_tokens)
