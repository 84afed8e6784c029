"""llama3.1-405b's three per-sample metrics, as the reference's evaluate-accuracy.py defines them.

Each takes the post-processed reference and answer and gives one number out of 100:
- `rouge`: ROUGE-L F-measure with stemming (rouge-score), x 100, for the summaries;
- `niah_em`: for the needle-in-a-haystack samples, the UUIDs in the answer against those of the reference.
  The reference scores each answer UUID by the share of its paired reference UUID's *characters* that
  occur in it (it iterates over a string where RULER iterates over a list), then averages over the
  answer's UUIDs and rounds to two places; that is reproduced here, since the targets were set with it;
- `qa_em`: the text after the answer's last "Answer: " found in the reference, else any `|`-separated
  reference alternative contained in it, both without white space and lower-cased: 100 or 0.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache

_UUID = re.compile(r"[\w]{8}-[\w]{4}-[\w]{4}-[\w]{4}-[\w]{12}")
_ANSWER_MARK = "Answer: "
_SPACE = re.compile(r"\s+")


@cache
def _rouge_l_scorer():  # type: ignore[no-untyped-def]
    from rouge_score.rouge_scorer import RougeScorer

    return RougeScorer(["rougeL"], use_stemmer=True)


def rouge(reference: str, answer: str) -> float:
    return 100 * _rouge_l_scorer().score(reference, answer)["rougeL"].fmeasure


def niah_em(reference: str, answer: str) -> float:
    answer_ids = _UUID.findall(answer)
    if not answer_ids:
        return 0.0
    reference_ids = _UUID.findall(reference)
    shares = []
    for answer_id, reference_id in zip(answer_ids, reference_ids, strict=False):
        found = sum(1.0 for character in reference_id if character.lower() in answer_id.lower())
        shares.append(found / len(reference_id))
    return round(sum(shares) / len(answer_ids) * 100, 2)


def qa_em(reference: str, answer: str) -> float:
    if _ANSWER_MARK in answer:
        answer = answer[answer.rfind(_ANSWER_MARK) + len(_ANSWER_MARK) :]
    if answer in reference:
        return 100.0
    squeezed = _SPACE.sub("", answer).lower()
    alternatives = (_SPACE.sub("", entry).lower() for entry in reference.split("|"))
    return 100.0 if any(entry in squeezed for entry in alternatives) else 0.0


METRICS: dict[str, Callable[[str, str], float]] = {"rouge": rouge, "niah_em": niah_em, "qa_em": qa_em}
# The key each metric's scores are reported under in accuracy.txt.
REPORTED_AS = {"rouge": "rougeL", "niah_em": "exact_match", "qa_em": "exact_match"}
