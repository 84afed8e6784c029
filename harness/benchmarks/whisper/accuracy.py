"""whisper's accuracy as the reference's accuracy_eval.py computes it: every logged answer's int64
character labels back to text, each against its clip's transcript (mapped through the same labels), word
error rate over all of them with whisper's English normalisation, printed as the reference prints it."""

from __future__ import annotations

from pathlib import Path

from harness.benchmarks.scoring import logged_payloads, text_accuracy_writer
from harness.benchmarks.whisper.dataset import transcripts
from submitter.errors import SubmitterError
from submitter.evaluation.verdicts import ScoredResult
from submitter.evaluation.word_error_rate import (
    WordErrorRate,
    labels_text,
    payload_labels,
    transcript_labels,
    word_error_rate,
)


class WordAccuracy(ScoredResult):
    errors: int
    words: int
    answers: int

    @property
    def samples(self) -> int:
        return self.answers

    def printed(self) -> str:
        return WordErrorRate(errors=self.errors, words=self.words).printed()

    def accuracy_txt(self) -> str:
        return self.printed() + "\n"


def evaluate(accuracy_log: Path, dataset: Path) -> WordAccuracy:
    references = transcripts(dataset)
    hypotheses, reference_texts = [], []
    for position, payload in enumerate(logged_payloads(accuracy_log, dataset, len(references))):
        try:
            labels = payload_labels(payload.data)
        except ValueError as exc:
            raise SubmitterError(f"{accuracy_log}: record {position}: {exc}") from None
        hypotheses.append(labels_text(labels))
        reference_texts.append(labels_text(transcript_labels(references[payload.qsl_idx])))
    try:
        rate = word_error_rate(hypotheses, reference_texts)
    except ValueError as exc:  # e.g. transcripts with no words: not whisper's manifest
        raise SubmitterError(f"{accuracy_log} cannot be scored against {dataset}: {exc}") from None
    return WordAccuracy(errors=rate.errors, words=rate.words, answers=len(hypotheses))


# The answers are characters already, so no tokenizer is needed.
write_accuracy = text_accuracy_writer(evaluate)
