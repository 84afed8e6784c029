"""GSM8K's exact match, as mixtral-8x7b's reference scores it.

The answer is cut at its first "\nQ:" (the model starting a new question); the number taken is the first
after the last "The answer is", else the last number anywhere; thousands commas are dropped and the
number compared with the reference as floats. An answer without a number is wrong.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_NUMBER = re.compile(r"-?[\d,]*\.?\d+", re.MULTILINE | re.DOTALL | re.IGNORECASE)
_DELIMITER = "The answer is"
_NEXT_QUESTION = "\nQ:"


def answer_number(text: str) -> str:
    text = text.split(_NEXT_QUESTION)[0]
    if _DELIMITER in text:
        after = _NUMBER.findall(text.split(_DELIMITER)[-1])
        if after:
            return after[0].replace(",", "")
    numbers = _NUMBER.findall(text)
    return numbers[-1].replace(",", "") if numbers else ""


def _as_float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def is_correct(answer: str, reference: str) -> bool:
    found = _as_float(answer_number(answer))
    return found is not None and found == _as_float(reference)


def accuracy(answers: Sequence[str], references: Sequence[str]) -> float:
    """Percent correct, unrounded; 0 when there are no GSM8K samples (the reference divides by zero)."""
    if not references:
        return 0.0
    correct = sum(
        is_correct(answer, reference) for answer, reference in zip(answers, references, strict=True)
    )
    return 100.0 * correct / len(references)
