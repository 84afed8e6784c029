"""llama2-70b's accuracy of a run, as the reference's evaluate-accuracy.py computes it.

Each sample's first logged answer (duplicates skipped) is decoded without special tokens; answers and
references are stripped and split one sentence per line; ROUGE-1/2/L/Lsum with stemming per sample,
each mean x 100 rounded to four places (numpy's rounding, as the reference's np.float64). gen_len is the
characters of the post-processed answers, gen_tok_len every token the answers carried, and
tokens_per_sample their ratio to one decimal. The printed line has bare numbers, which the checker's
ROUGE and tokens_per_sample patterns read.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from harness.benchmarks.llama2_70b.dataset import reference_answers
from harness.benchmarks.scoring import accuracy_writer, logged_answers
from submitter.evaluation.detokenize import Detokenizer
from submitter.evaluation.rouge import ROUGE_TYPES, score_samples
from submitter.evaluation.verdicts import ScoredResult


class AccuracyResult(ScoredResult):
    rouge1: float
    rouge2: float
    # The reference's key names, so that the printed line is the reference's.
    rougeL: float
    rougeLsum: float
    gen_len: int
    gen_num: int
    gen_tok_len: int
    tokens_per_sample: float

    def printed(self) -> str:
        return repr(self.model_dump())

    @property
    def samples(self) -> int:
        return self.gen_num


def evaluate(
    accuracy_log: Path, dataset: Path, detokenize: Detokenizer, workers: int | None = None
) -> AccuracyResult:
    references = reference_answers(dataset)
    answers = logged_answers(accuracy_log, dataset, len(references))
    predictions = detokenize([answer.token_ids for answer in answers])
    scores = score_samples(predictions, [references[answer.qsl_idx] for answer in answers], workers)
    means = {name: float(round(np.mean(scores.fmeasures[name]) * 100, 4)) for name in ROUGE_TYPES}
    generated_tokens = sum(len(answer.token_ids) for answer in answers)
    return AccuracyResult(
        **means,
        gen_len=sum(scores.prediction_lengths),
        gen_num=len(answers),
        gen_tok_len=generated_tokens,
        tokens_per_sample=round(generated_tokens / len(answers), 1),
    )


write_accuracy = accuracy_writer(evaluate)
