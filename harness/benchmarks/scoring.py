"""What the LLM benchmarks' evaluators share around their own metrics: the logged answers of a run,
checked against the dataset, and accuracy.txt with accuracy.json written beside the log."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from submitter.errors import SubmitterError
from submitter.evaluation.accuracy_log import (
    LoggedPayload,
    LoggedResponse,
    first_per_sample,
    read_accuracy_log,
    read_logged_payloads,
)
from submitter.evaluation.detokenize import Detokenizer, load_detokenizer
from submitter.evaluation.verdicts import AccuracyReport, MetricVerdict, ScoredResult, judge
from submitter.fileio import write_text_atomic
from submitter.rounds.models import BenchmarkRules

# What an LLM plug-in's write_accuracy writes beside the log: the checker's input, then the verdicts.
ACCURACY_FILES = ("accuracy.txt", "accuracy.json")
ACCURACY_LOG = "mlperf_log_accuracy.json"


class Evaluator(Protocol):
    def __call__(
        self, accuracy_log: Path, dataset: Path, detokenize: Detokenizer, workers: int | None = None
    ) -> ScoredResult: ...


class AccuracyWriter(Protocol):
    def __call__(
        self,
        run_dir: Path,
        dataset: Path,
        tokenizer_dir: Path,
        benchmark: BenchmarkRules,
        patterns: Mapping[str, str],
        workers: int | None = None,
        trial: bool = False,
    ) -> AccuracyReport: ...


def logged_answers(accuracy_log: Path, dataset: Path, dataset_size: int) -> list[LoggedResponse]:
    """Each sample's first answer in log order; an answer to a sample the dataset lacks is an error."""
    return first_answers(read_accuracy_log(accuracy_log), accuracy_log, dataset, dataset_size)


def first_answers(
    entries: list[LoggedResponse], accuracy_log: Path, dataset: Path, dataset_size: int
) -> list[LoggedResponse]:
    """`logged_answers` of entries already read from `accuracy_log` (for evaluators that count them all)."""
    return checked_answers(first_per_sample(entries), accuracy_log, dataset, dataset_size)


def checked_answers(
    answers: list[LoggedResponse], accuracy_log: Path, dataset: Path, dataset_size: int
) -> list[LoggedResponse]:
    """`answers` (every logged entry, or each sample's first), which must be some, all of samples the
    dataset has."""
    if not answers:
        raise SubmitterError(f"{accuracy_log} holds no responses; repeat the run")
    outside = [answer.qsl_idx for answer in answers if not 0 <= answer.qsl_idx < dataset_size]
    if outside:
        raise SubmitterError(
            f"{accuracy_log} answers samples {outside[:5]} that {dataset} ({dataset_size} records) "
            "does not have; evaluate with the dataset the run used"
        )
    return answers


def logged_payloads(accuracy_log: Path, dataset: Path, dataset_size: int) -> list[LoggedPayload]:
    """Every logged response as the SUT sent it (benchmarks that log text), each to a sample the dataset
    has."""
    payloads = read_logged_payloads(accuracy_log)
    if not payloads:
        raise SubmitterError(f"{accuracy_log} holds no responses; repeat the run")
    for position, payload in enumerate(payloads):
        if not 0 <= payload.qsl_idx < dataset_size:
            raise SubmitterError(
                f"{accuracy_log}: record {position} answers sample {payload.qsl_idx}, which {dataset} "
                f"({dataset_size} samples) does not have; evaluate with the dataset the run used"
            )
    return payloads


def text_accuracy_writer(evaluate: Callable[[Path, Path], ScoredResult]) -> AccuracyWriter:
    """A plug-in's `write_accuracy` for answers logged as text (whisper, qwen3-vl): no tokenizer needed."""

    def write_accuracy(
        run_dir: Path,
        dataset: Path,
        tokenizer_dir: Path | None,
        benchmark: BenchmarkRules,
        patterns: Mapping[str, str],
        workers: int | None = None,
        trial: bool = False,
    ) -> AccuracyReport:
        result = evaluate(run_dir / ACCURACY_LOG, dataset)
        return write_report(run_dir, ACCURACY_FILES, result, benchmark, patterns, trial)

    return write_accuracy


def write_report(
    run_dir: Path,
    files: tuple[str, ...],
    result: ScoredResult,
    benchmark: BenchmarkRules,
    patterns: Mapping[str, str],
    trial: bool,
    extra_verdicts: Sequence[MetricVerdict] = (),
) -> AccuracyReport:
    """accuracy.txt and accuracy.json (`files`, in that order); a trial is judged scaled to the dataset.
    `extra_verdicts`: the evaluator's own, beside the round's targets (e.g. code it could not run)."""
    scale_to = benchmark.dataset.size if trial else None
    verdicts = [*judge(result, benchmark.accuracy, patterns, scale_to), *extra_verdicts]
    report = AccuracyReport(result=result, verdicts=verdicts)
    accuracy_txt_file, accuracy_json_file = (run_dir / name for name in files)
    write_text_atomic(accuracy_txt_file, result.accuracy_txt())
    write_text_atomic(accuracy_json_file, report.model_dump_json(indent=2) + "\n")
    return report


def accuracy_writer(
    evaluate: Evaluator,
    extra_verdicts: Callable[[ScoredResult], Sequence[MetricVerdict]] = lambda _: (),
    skip_special_tokens: bool = True,
) -> AccuracyWriter:
    """A plug-in's `write_accuracy`: evaluate the run's log with the model's tokenizer (decoding as the
    reference does), then write accuracy.txt (the checker's input) and accuracy.json beside it."""

    def write_accuracy(
        run_dir: Path,
        dataset: Path,
        tokenizer_dir: Path,
        benchmark: BenchmarkRules,
        patterns: Mapping[str, str],
        workers: int | None = None,
        trial: bool = False,
    ) -> AccuracyReport:
        result = evaluate(
            run_dir / ACCURACY_LOG, dataset, load_detokenizer(tokenizer_dir, skip_special_tokens), workers
        )
        return write_report(
            run_dir, ACCURACY_FILES, result, benchmark, patterns, trial, extra_verdicts(result)
        )

    return write_accuracy
