"""qwen3-vl-235b-a22b's accuracy: product metadata answers scored as the reference's evaluation scores them.

Sources, by path and line (mlcommons/inference at b66003e, under multimodal/qwen3-vl/src/mlperf_inf_mm_q3vl/):
EV = evaluation.py, SC = schema.py.

Each accuracy-log entry is scored as it comes, repeats of a sample included (EV:209-271, EV:295-330); its
`data` is the answer's UTF-8 text, decoded by the caller (bytes that are not UTF-8 stop the reference,
EV:211).

Reading an answer (EV:219-241): `ProductMetadata.model_validate_json`, a pydantic model of
category: str, brand: str, is_secondhand: bool with `extra="forbid"` (SC:137-141, SC:822-835).
`ProductAnswer` has the same fields and the same config, so pydantic decides here as it decides there.
What that accepts (pydantic 2.11 and later; the tests hold each case):
- exactly one JSON object, with JSON whitespace (space, tab, CR, LF) around it; a ```json fence, a
  byte-order mark, a trailing comma, comments, single quotes, a second value or a no-break space: refused;
- the three keys, no other (a differently cased key is an extra key); category and brand JSON strings
  only (a number or null is refused); a key given twice: the last value counts and earlier ones are not
  validated (pydantic 2.6 to 2.10 take the first value of some repeated keys: 317 of 60,000 generated
  answers read differently there, none from 2.11 on);
- is_secondhand: true/false, the integers 0 and 1, floats equal to 0 or 1 (1.0, 1e0, -0.0), or a string
  that is, in any case, one of 1 0 true false t f yes no y n on off, with no spaces around it;
- strings with JSON escapes, astral characters included; a lone surrogate (\\ud800) or a raw control
  character inside a string makes the answer invalid JSON.
An answer that is refused becomes, as there: a category of "<|__PRED_CATEGORY_PAD__|>" levels, as many as
the ground truth's category has (so it adds that many predicted levels and, in practice, no shared one),
the brand "<|__PRED_BRAND_PAD__|>", and a random is_secondhand.

Category (EV:37-117, the number accuracy.txt holds): both paths are split on " > " and each level stripped
(so "A > " has two levels, the second empty, and "" is one empty level); the shared levels are the longest
common prefix. Shared, predicted and true levels are summed over all entries; hP = shared / predicted,
hR = shared / true (0 when nothing is predicted or true), F1 = 2 hP hR / (hP + hR), 0 when both are 0.

Side metrics, which the reference logs and does not write (EV:120-165):
- brand: the share of entries whose stripped, lower-cased brands have rapidfuzz `fuzz.ratio` above 90
  (90 itself does not match);
- is_secondhand: scikit-learn's binary `f1_score`, True positive: 2 tp / (2 tp + fp + fn), 0.0 when
  there are no true and no predicted positives (its zero_division default).
The reference's "Random selection" baseline rows (random categories, brands and is_secondhand) are not
computed: they score random guesses, not the run.

accuracy.txt (EV:404-411): "Results", a blank line, `json.dumps({"f1": F1}, sort_keys=True)`, a blank line,
and `hash=` the SHA-256 of that JSON line, with no newline at the end. The checker's F1_HIERARCHICAL pattern
`\\{.*"f1":\\s*([\\d\\.]+).*\\}` reads the number; one below 1e-4 is printed with an exponent (5e-05) and
would be read as its mantissa.

Where this differs, on purpose:
- the random is_secondhand of a refused answer: the reference draws it from numpy generators seeded per
  chunk of min(CPU count, 4) workers and interleaved with draws over each sample's candidate categories
  (EV:200-263, EV:295-305), so its is_secondhand F1 depends on the evaluating host and the dataset's
  candidate lists. Here it is one draw per refused answer from `random.Random(seed)`. The category F1 and
  the brand score never depend on it;
- no entries: every score is 0.0, where the reference divides by zero (brand) and scikit-learn refuses
  empty input.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, ValidationError
from rapidfuzz import fuzz

from submitter.evaluation.verdicts import ScoredResult

__all__ = [
    "BRAND_MATCH_ABOVE",
    "BRAND_PAD",
    "CATEGORY_PAD",
    "CATEGORY_SEPARATOR",
    "DEFAULT_SEED",
    "GroundTruth",
    "ProductAnswer",
    "ProductMetadataScores",
    "brand_score",
    "category_components",
    "category_levels",
    "hierarchical_f1",
    "parse_answer",
    "score_answers",
    "secondhand_f1",
]

CATEGORY_SEPARATOR = " > "
CATEGORY_PAD = "<|__PRED_CATEGORY_PAD__|>"
BRAND_PAD = "<|__PRED_BRAND_PAD__|>"
BRAND_MATCH_ABOVE = 90  # fuzz.ratio (0-100) must exceed this for a brand to count as right
DEFAULT_SEED = 12345  # the reference CLI's --random-seed default


class ProductAnswer(BaseModel):
    """One answer as the reference's ProductMetadata reads it: same fields, same config."""

    # extra="forbid" is what decides most refusals (SC:140); frozen changes nothing in validation.
    model_config = ConfigDict(extra="forbid", frozen=True)

    category: str
    brand: str
    is_secondhand: bool


@dataclass(frozen=True)
class GroundTruth:
    """A sample's right answer: the dataset's ground_truth_category, _brand and _is_secondhand."""

    category: str
    brand: str
    is_secondhand: bool


class ProductMetadataScores(ScoredResult):
    f1: float  # the category's hierarchical F1: the number accuracy.txt holds
    brand_score: float
    is_secondhand_f1: float
    total_samples: int  # accuracy-log entries scored, repeats included
    unparsable: int  # answers the schema refused, scored as padding

    @property
    def samples(self) -> int:
        return self.total_samples

    def printed(self) -> str:
        return json.dumps({"f1": self.f1}, sort_keys=True)

    def accuracy_txt(self) -> str:
        """The reference's accuracy.txt, byte for byte: the hash is of the JSON line alone."""
        line = self.printed()
        digest = hashlib.sha256(line.encode()).hexdigest()
        return f"Results\n\n{line}\n\nhash={digest}"


def parse_answer(text: str) -> ProductAnswer | None:
    """The answer, or None where the reference's schema refuses it (the module docstring says what passes)."""
    try:
        return ProductAnswer.model_validate_json(text)
    except ValidationError:
        return None


def category_levels(path: str) -> list[str]:
    return [level.strip() for level in path.split(CATEGORY_SEPARATOR)]


def category_components(predicted: str, true: str) -> tuple[int, int, int]:
    """(shared levels, predicted levels, true levels): shared is the longest common prefix of the paths."""
    predicted_levels = category_levels(predicted)
    true_levels = category_levels(true)
    pairs = zip(predicted_levels, true_levels, strict=False)
    first_difference = (depth for depth, (mine, theirs) in enumerate(pairs) if mine != theirs)
    shared = next(first_difference, min(len(predicted_levels), len(true_levels)))
    return shared, len(predicted_levels), len(true_levels)


def hierarchical_f1(pairs: Iterable[tuple[str, str]]) -> float:
    """Corpus-level hierarchical F1 of (predicted, true) category paths: levels are summed over all pairs."""
    shared_total = predicted_total = true_total = 0
    for predicted, true in pairs:
        shared, predicted_count, true_count = category_components(predicted, true)
        shared_total += shared
        predicted_total += predicted_count
        true_total += true_count
    precision = shared_total / predicted_total if predicted_total else 0.0
    recall = shared_total / true_total if true_total else 0.0
    return _harmonic_mean(precision, recall)


def brand_score(pairs: Sequence[tuple[str, str]]) -> float:
    """Share of (predicted, true) brands that match: fuzz.ratio above 90 once stripped and lower-cased."""
    if not pairs:
        return 0.0
    matches = sum(
        1
        for predicted, true in pairs
        if fuzz.ratio(true.strip().lower(), predicted.strip().lower()) > BRAND_MATCH_ABOVE
    )
    return matches / len(pairs)


def secondhand_f1(pairs: Iterable[tuple[bool, bool]]) -> float:
    """Binary F1 of (predicted, true) is_secondhand, True the positive class, as scikit-learn's f1_score."""
    outcomes = Counter((bool(predicted), bool(true)) for predicted, true in pairs)
    true_positives, false_positives = outcomes[True, True], outcomes[True, False]
    false_negatives = outcomes[False, True]
    # Written as scikit-learn computes it (counts, not precision and recall), so the float is the same.
    denominator = 2 * true_positives + false_positives + false_negatives
    return 2 * true_positives / denominator if denominator else 0.0


def score_answers(
    answers: Sequence[tuple[str, GroundTruth]], seed: int = DEFAULT_SEED
) -> ProductMetadataScores:
    """Every (answer text, ground truth) scored in order; a refused answer padded as the reference pads it."""
    coin = random.Random(seed)  # is_secondhand of refused answers only; see the module docstring
    categories: list[tuple[str, str]] = []
    brands: list[tuple[str, str]] = []
    secondhand: list[tuple[bool, bool]] = []
    unparsable = 0
    for text, truth in answers:
        answer = parse_answer(text)
        if answer is None:
            unparsable += 1
            # As many pad levels as the truth has; the padding then goes through the same scoring.
            padding = [CATEGORY_PAD] * len(truth.category.split(CATEGORY_SEPARATOR))
            answer = ProductAnswer(
                category=CATEGORY_SEPARATOR.join(padding), brand=BRAND_PAD, is_secondhand=coin.random() < 0.5
            )
        categories.append((answer.category, truth.category))
        brands.append((answer.brand, truth.brand))
        secondhand.append((answer.is_secondhand, truth.is_secondhand))
    return ProductMetadataScores(
        f1=hierarchical_f1(categories),
        brand_score=brand_score(brands),
        is_secondhand_f1=secondhand_f1(secondhand),
        total_samples=len(answers),
        unparsable=unparsable,
    )


def _harmonic_mean(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0
