"""llama3.1-405b's accuracy of a run, as the reference's evaluate-accuracy.py computes it.

Each sample's first logged answer is decoded without special tokens; answers and references are
stripped and split one sentence per line (all samples, whatever their metric); each sample is scored by
its metric. `rougeL` is the mean over the ROUGE samples and `exact_match` the mean over the needle and
question samples together, unrounded, in the order the metrics first appear in the log (the reference's
DataFrame of per-sample dicts puts them so). gen_len is the characters of the post-processed answers,
gen_tok_len every token the answers carried, tokens_per_sample their ratio to one decimal.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from pydantic import BaseModel

from harness.benchmarks.llama3_1_405b.dataset import references
from harness.benchmarks.llama3_1_405b.metrics import METRICS, REPORTED_AS
from harness.benchmarks.scoring import accuracy_writer, logged_answers
from submitter.evaluation.detokenize import Detokenizer
from submitter.evaluation.parallel import map_chunks
from submitter.evaluation.sentences import one_sentence_per_line
from submitter.evaluation.verdicts import ScoredResult

_CHUNK = 64


class MetricSummary(BaseModel):
    samples: int
    mean: float


class AccuracyResult(ScoredResult):
    # The reference's keys: exact_match pools the needle and question samples.
    exact_match: float | None = None
    rougeL: float | None = None
    gen_len: int
    gen_num: int
    gen_tok_len: int
    tokens_per_sample: float
    # Each metric of the dataset on its own, in the order it first appears in the log.
    by_metric: dict[str, MetricSummary]

    def printed(self) -> str:
        """The reference's line: the means in first-seen order, then the totals."""
        means = {"exact_match": self.exact_match, "rougeL": self.rougeL}
        first_seen = dict.fromkeys(REPORTED_AS[metric] for metric in self.by_metric)
        line = {
            **{key: means[key] for key in first_seen},
            "gen_len": self.gen_len,
            "gen_num": self.gen_num,
            "gen_tok_len": self.gen_tok_len,
            "tokens_per_sample": self.tokens_per_sample,
        }
        return repr(line)

    @property
    def samples(self) -> int:
        return self.gen_num


def _score_chunk(items: Sequence[tuple[str, str, str]]) -> list[tuple[int, float]]:
    """(characters of the post-processed answer, its score) for each (answer, reference, metric)."""
    rows = []
    for answer, reference, metric in items:
        processed = one_sentence_per_line(answer)
        rows.append((len(processed), METRICS[metric](one_sentence_per_line(reference), processed)))
    return rows


def score(items: Sequence[tuple[str, str, str]], workers: int | None) -> list[tuple[int, float]]:
    chunks = [items[start : start + _CHUNK] for start in range(0, len(items), _CHUNK)]
    return [row for rows in map_chunks(_score_chunk, chunks, workers) for row in rows]


def evaluate(
    accuracy_log: Path, dataset: Path, detokenize: Detokenizer, workers: int | None = None
) -> AccuracyResult:
    truth = references(dataset)
    answers = logged_answers(accuracy_log, dataset, len(truth))
    texts = detokenize([answer.token_ids for answer in answers])
    metrics = [truth[answer.qsl_idx].metric for answer in answers]
    items = [
        (text, truth[answer.qsl_idx].answer, metric)
        for text, answer, metric in zip(texts, answers, metrics, strict=True)
    ]
    rows = score(items, workers)
    scores = [value for _, value in rows]
    keys = [REPORTED_AS[metric] for metric in metrics]
    by_metric: dict[str, list[float]] = {}
    for metric, value in zip(metrics, scores, strict=True):
        by_metric.setdefault(metric, []).append(value)
    generated_tokens = sum(len(answer.token_ids) for answer in answers)
    return AccuracyResult(
        **{key: column_mean(scores, [row_key == key for row_key in keys]) for key in dict.fromkeys(keys)},
        gen_len=sum(length for length, _ in rows),
        gen_num=len(answers),
        gen_tok_len=generated_tokens,
        tokens_per_sample=round(generated_tokens / len(answers), 1),
        by_metric={
            metric: MetricSummary(samples=len(values), mean=_mean(values))
            for metric, values in by_metric.items()
        },
    )


def column_mean(scores: list[float], present: list[bool]) -> float:
    """The mean of one key's scores as the reference's pandas `describe()` takes it: over the column of
    every sample, the other metrics' rows counted as 0 in numpy's pairwise sum (so the additions group as
    there, to the last digit), divided by the samples that have the key."""
    column = np.where(present, np.asarray(scores, dtype=np.float64), 0.0)
    return float(column.sum() / sum(present))


def _mean(values: list[float]) -> float:
    return column_mean(values, [True] * len(values))


write_accuracy = accuracy_writer(evaluate)
