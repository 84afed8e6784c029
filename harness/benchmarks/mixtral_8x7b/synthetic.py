"""mixtral-8x7b's stand-ins: records in the reference's format, a third each OpenOrca, GSM8K and MBXP
(interleaved, so any leading slice has all three; MBXP in the reference's language counts), with the
real input and output lengths, and a demo model whose answers pass each sub-dataset's scoring.

MBXP problems here are small generated ones ("add K to x") with test code in each language's MBXP shape;
their demo answers are real programs that the sandbox compiles and runs.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from harness.benchmarks.demo_text import (
    ANSWER_WORDS,
    mutate_words,
    pieces,
    text_of_length,
    write_text_demo_model,
)
from harness.benchmarks.lengths import lognormal_lengths, random_token_ids
from harness.benchmarks.mixtral_8x7b.dataset import GSM8K, MBXP, OPEN_ORCA, SUBSETS
from submitter.rounds.models import GenerationRules

# MBXP problems per language in the reference's 5,000 (its standalone README's expected output).
MBXP_LANGUAGE_COUNTS = {
    "cpp": 743,
    "python": 863,
    "php": 846,
    "javascript": 834,
    "ruby": 846,
    "typescript": 868,
}
_MISTRAL_ORDINARY_IDS = range(3, 32000)
STOP_SEQUENCE, STOP_SEQUENCE_IDS = "</s>", [2]
_FENCE = "\n```\n"
_COMMENT = {"python": "#", "ruby": "#", "cpp": "//", "javascript": "//", "typescript": "//", "php": "//"}


@dataclass(frozen=True)
class _Problem:
    language: str
    entry_point: str
    addend: int

    def solution(self, correct: bool, comment_words: str) -> str:
        """The program text before the closing fence; a wrong one adds one too many."""
        k = self.addend if correct else self.addend + 1
        note = f"{_COMMENT[self.language]} {comment_words}\n"
        name = self.entry_point
        return {
            "python": f"def {name}(x):\n    {note}    return x + {k}\n",
            "ruby": f"def {name}(x)\n  {note}  x + {k}\nend\n",
            "php": f"<?php\nfunction {name}($x) {{\n    {note}    return $x + {k};\n}}\n",
            "javascript": f"function {name}(x) {{\n    {note}    return x + {k};\n}}\n",
            "typescript": f"function {name}(x: number): number {{\n    {note}    return x + {k};\n}}\n",
            "cpp": f"#include <bits/stdc++.h>\nusing namespace std;\n\nint {name}(int x) {{\n    {note}"
            f"    return x + {k};\n}}\n",
        }[self.language]

    def test_code(self) -> str:
        """Three cases in the language's MBXP test shape (python: a check(candidate) function)."""
        cases = [(x, x + self.addend) for x in (1, 10, -4)]
        name = self.entry_point
        if self.language == "python":
            lines = "".join(f"    assert candidate({x}) == {y}\n" for x, y in cases)
            return f"\n\ndef check(candidate):\n{lines}\n"
        if self.language == "ruby":
            return "".join(
                f"\nx{n} = {name}({x})\nif x{n} != {y}\n"
                f'    raise StandardError, "Error at test case {n}"\nend\n'
                for n, (x, y) in enumerate(cases)
            )
        if self.language == "php":
            return "".join(
                f'\n$x{n} = {name}({x});\nif ($x{n} != {y}) {{\n    throw new Exception("Error at {n}th '
                f'assert statement.");\n}}\n'
                for n, (x, y) in enumerate(cases)
            )
        if self.language == "cpp":
            body = "".join(
                f"    if ({name}({x}) != {y}) {{\n"
                f'        throw runtime_error("Exception -- test case {n} did not pass.");\n    }}\n'
                for n, (x, y) in enumerate(cases)
            )
            return f"\nint main(int argc, char* argv[]) {{\n{body}    return 0;\n}}\n"
        if self.language == "typescript":
            # The MBXP shape: node's assert imported (tsc, without node's types, exits 2: "compiled").
            checks = "".join(
                f"\nlet actual_{n} = {name}({x});\nlet expected_{n} = {y};\n"
                f'assert.deepEqual(actual_{n}, expected_{n}, "Exception --- test case {n} failed to pass");\n'
                for n, (x, y) in enumerate(cases)
            )
            return f"\nimport * as assert from 'assert'\n{checks}"
        return "".join(  # javascript
            f"\nif ({name}({x}) !== {y}) {{\n"
            f'    throw new Error("Exception --- test case {n} failed to pass");\n}}\n'
            for n, (x, y) in enumerate(cases)
        )


def _mbxp_languages(count: int) -> list[str]:
    """`count` languages in the reference's proportions, spread evenly."""
    total = sum(MBXP_LANGUAGE_COUNTS.values())
    order = sorted(
        ((index + 0.5) * total / share, language)
        for language, share in MBXP_LANGUAGE_COUNTS.items()
        for index in range(share)
    )
    languages = [language for _, language in order]
    return [languages[index * total // count] for index in range(count)] if count else []


def _entry_point(language: str, number: int) -> str:
    return f"addK{number}" if language in ("cpp", "javascript", "typescript") else f"add_k{number}"


def synthesize_records(count: int, generation: GenerationRules, seed: int) -> list[dict[str, object]]:
    draw = random.Random(seed)
    mean_output = generation.mean_output_tokens or generation.max_output_tokens / 4
    prompt_lengths = lognormal_lengths(
        count, generation.mean_input_tokens, 16, generation.max_input_tokens, draw
    )
    answer_lengths = lognormal_lengths(count, mean_output, 8, generation.max_output_tokens - 1, draw)
    subsets = [SUBSETS[number % len(SUBSETS)] for number in range(count)]
    languages = iter(_mbxp_languages(subsets.count(MBXP)))
    records = []
    for number, (subset, prompt_length, answer_length) in enumerate(
        zip(subsets, prompt_lengths, answer_lengths, strict=True)
    ):
        question = f"Synthetic {subset} question {number}: " + text_of_length(draw, ANSWER_WORDS, 30)
        if subset == MBXP:
            language = next(languages)
            problem = _Problem(language, _entry_point(language, number), draw.randrange(1, 100))
            identity, truth = f"{language}_{problem.entry_point}", problem.test_code()
            reference = problem.solution(True, "") + _FENCE
        elif subset == GSM8K:
            answer = draw.randrange(2, 100000)
            identity, truth = f"{GSM8K.lower()}_{number}", str(answer)
            reference = (
                f"{text_of_length(draw, ANSWER_WORDS, max(answer_length - 8, 1))} The answer is {answer}."
            )
        else:
            identity = f"{OPEN_ORCA.lower()}_{number}"
            truth = reference = text_of_length(draw, ANSWER_WORDS, answer_length)
        prompt = f"<s> [INST] {question} [/INST]"
        tok_input = [
            generation.bos_token_id,
            *random_token_ids(draw, _MISTRAL_ORDINARY_IDS, prompt_length - 1),
        ]
        tok_reference = random_token_ids(draw, _MISTRAL_ORDINARY_IDS, answer_length)
        records.append(
            {
                "dataset": subset,
                "id": identity,
                "question": question,
                "input": prompt,
                "ref_output": reference,
                "gt_output": truth,
                "tok_input": tok_input,
                "tok_ref_output": tok_reference,
                "stop_sequence": STOP_SEQUENCE,
                "tok_stop_sequence": STOP_SEQUENCE_IDS,
                "tok_input_len": len(tok_input),
                "tok_ref_output_len": len(tok_reference),
            }
        )
    return records


def _demo_answer(record: dict[str, object], draw: random.Random) -> str:
    """A passing answer most of the time: OpenOrca a lightly changed reference, GSM8K the reference's
    reasoning with the right number 9 times in 10, MBXP a program right 8 times in 10, padded with a
    comment so that answers have about the reference's length."""
    subset, reference = record["dataset"], str(record["ref_output"])
    if subset == OPEN_ORCA:
        return mutate_words(reference, ANSWER_WORDS, draw)
    if subset == GSM8K:
        right = str(record["gt_output"])
        return (
            reference if draw.random() < 0.9 else reference.replace(f"is {right}.", f"is {int(right) + 1}.")
        )
    language, entry_point = str(record["id"]).split("_", 1)
    addend = int(reference.split("+ ")[1].split(";")[0].split("\n")[0])
    problem = _Problem(language, entry_point, addend)
    short = problem.solution(True, "") + _FENCE
    padding = max(int(record["tok_ref_output_len"]) - len(pieces(short)), 1)
    return problem.solution(draw.random() < 0.8, text_of_length(draw, ANSWER_WORDS, padding)) + _FENCE


def write_demo_model(
    directory: Path, records: list[dict[str, object]], max_tokens: int, seed: int = 1
) -> Path:
    draw = random.Random(seed)
    return write_text_demo_model(directory, [_demo_answer(record, draw) for record in records], max_tokens)
