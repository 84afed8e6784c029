"""llama3.1-8b's accuracy of a run: every logged answer decoded, scored against the dataset's reference
summaries.

Numbers are formed exactly as the reference evaluator forms them (each ROUGE mean x 100 rounded to four
places, as a string; gen_len the characters of the post-processed answers; gen_num the samples), and
accuracy.txt prints them in the line the checker parses, with gen_len as a plain integer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from harness.benchmarks.scoring import logged_answers, write_report
from submitter.errors import UsageProblem
from submitter.evaluation.detokenize import Detokenizer, load_detokenizer
from submitter.evaluation.rouge import ROUGE_TYPES, score_samples
from submitter.evaluation.verdicts import AccuracyReport, ScoredResult
from submitter.rounds.models import BenchmarkRules

# What write_accuracy writes into the run directory: the checker's input, and the verdicts.
ACCURACY_FILES = ("accuracy.txt", "accuracy.json")


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


def write_accuracy(
    run_dir: Path,
    dataset: Path,
    tokenizer_dir: Path,
    benchmark: BenchmarkRules,
    patterns: Mapping[str, str],
    workers: int | None = None,
    trial: bool = False,
) -> AccuracyReport:
    """Evaluate a run's accuracy log; accuracy.txt (the checker's input) and accuracy.json go beside it."""
    result = evaluate(run_dir / "mlperf_log_accuracy.json", dataset, load_detokenizer(tokenizer_dir), workers)
    return write_report(run_dir, ACCURACY_FILES, result, benchmark, patterns, trial)
