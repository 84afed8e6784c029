"""llama3.1-8b's accuracy of a run: every logged answer decoded, scored against the dataset's reference
summaries.

Numbers are formed exactly as the reference evaluator forms them (each ROUGE mean x 100 rounded to four
places, as a string; gen_len the characters of the post-processed answers; gen_num the samples), and
accuracy.txt prints them in the line the checker parses, with gen_len as a plain integer.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from harness.benchmarks.scoring import accuracy_writer, logged_answers
from submitter.errors import UsageProblem
from submitter.evaluation.detokenize import Detokenizer
from submitter.evaluation.rouge import ROUGE_TYPES, score_samples
from submitter.evaluation.verdicts import ScoredResult


class AccuracyResult(ScoredResult):
    rouge1: str
    rouge2: str
    # The reference's key names, so that the printed line is the reference's.
    rougeL: str
    rougeLsum: str
    gen_len: int
    gen_num: int

    def printed(self) -> str:
        """The reference's dict line: ROUGE values quoted, gen_len and gen_num plain integers."""
        return repr(self.model_dump())

    @property
    def samples(self) -> int:
        return self.gen_num


def reference_summaries(dataset: Path) -> list[str]:
    """The dataset's `output` of every record; a missing or malformed dataset is an input error (exit 2)."""
    try:
        records = json.loads(dataset.read_text(encoding="utf-8"))
        return [str(record["output"]) for record in records]
    except FileNotFoundError:
        raise UsageProblem(
            f"dataset {dataset} does not exist; pass --dataset with the run's dataset"
        ) from None
    except IsADirectoryError:
        raise UsageProblem(
            f"dataset {dataset} is a directory; pass --dataset with the run's .json file"
        ) from None
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError) as exc:
        raise UsageProblem(
            f"dataset {dataset} has no reference summaries (`output`) to score against: {exc}; "
            "pass --dataset with the dataset the run used"
        ) from None


def evaluate(
    accuracy_log: Path, dataset: Path, detokenize: Detokenizer, workers: int | None = None
) -> AccuracyResult:
    references = reference_summaries(dataset)
    responses = logged_answers(accuracy_log, dataset, len(references))
    predictions = detokenize([response.token_ids for response in responses])
    scores = score_samples(predictions, [references[r.qsl_idx] for r in responses], workers)
    means = {name: f"{round(np.mean(scores.fmeasures[name]) * 100, 4)}" for name in ROUGE_TYPES}
    return AccuracyResult(**means, gen_len=sum(scores.prediction_lengths), gen_num=len(responses))


write_accuracy = accuracy_writer(evaluate)
