"""Per-sample scoring, spread over all cores: the reference's post-processing, then ROUGE-1/2/L/Lsum.

F-measures with stemming come from rouge-score, as the reference computes them. Each sample's result
depends only on that sample, so chunks scored in worker processes and put back in order give exactly
the numbers one process gives; the means are taken afterwards, in one place, in sample order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from submitter.evaluation.parallel import map_chunks
from submitter.evaluation.sentences import one_sentence_per_line

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")
_CHUNK = 256


@dataclass(frozen=True)
class SampleScores:
    prediction_lengths: list[int]  # characters of each post-processed prediction (gen_len sums them)
    fmeasures: dict[str, list[float]]


def _score_chunk(pairs: Sequence[tuple[str, str]]) -> list[tuple[int, float, float, float, float]]:
    from rouge_score.rouge_scorer import RougeScorer

    scorer = RougeScorer(list(ROUGE_TYPES), use_stemmer=True)
    rows = []
    for raw_reference, raw_prediction in pairs:
        reference, prediction = one_sentence_per_line(raw_reference), one_sentence_per_line(raw_prediction)
        # score(target, prediction): rougeLsum is not symmetric, so the reference goes first.
        scores = scorer.score(reference, prediction)
        rows.append((len(prediction), *(scores[name].fmeasure for name in ROUGE_TYPES)))
    return rows


def score_samples(
    predictions: Sequence[str], references: Sequence[str], workers: int | None = None
) -> SampleScores:
    pairs = list(zip(references, predictions, strict=True))
    chunks = [pairs[start : start + _CHUNK] for start in range(0, len(pairs), _CHUNK)]
    rows = [row for chunk_rows in map_chunks(_score_chunk, chunks, workers) for row in chunk_rows]
    return SampleScores(
        prediction_lengths=[row[0] for row in rows],
        fmeasures={name: [row[position + 1] for row in rows] for position, name in enumerate(ROUGE_TYPES)},
    )
