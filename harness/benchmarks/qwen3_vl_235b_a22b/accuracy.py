"""qwen3-vl-235b-a22b's accuracy as the reference's evaluation.py computes it: every logged answer (UTF-8
JSON) against its sample's ground truth, the category's hierarchical F1 into accuracy.txt, the brand and
second-hand scores beside it in accuracy.json."""

from __future__ import annotations

from pathlib import Path

from harness.benchmarks.qwen3_vl_235b_a22b.dataset import ground_truths
from harness.benchmarks.scoring import logged_payloads, text_accuracy_writer
from submitter.errors import SubmitterError
from submitter.evaluation.product_metadata import ProductMetadataScores, score_answers


def evaluate(accuracy_log: Path, dataset: Path) -> ProductMetadataScores:
    truths = ground_truths(dataset)
    answers = []
    for position, payload in enumerate(logged_payloads(accuracy_log, dataset, len(truths))):
        try:
            text = payload.data.decode("utf-8")
        except UnicodeDecodeError:
            raise SubmitterError(f"{accuracy_log}: record {position} is not UTF-8 text") from None
        answers.append((text, truths[payload.qsl_idx]))
    return score_answers(answers)


# The answers are text already, so no tokenizer is needed.
write_accuracy = text_accuracy_writer(evaluate)
