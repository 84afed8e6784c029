"""Word error rate of whisper's transcriptions, computed as the speech2text (whisper-large-v3) reference does.

Sources, by path and line (mlcommons/inference at b66003e, directory speech2text/):

- SUT = reference_SUT.py, AE = accuracy_eval.py, H = helpers.py, LH = legacy_helpers.py, M = manifest.py,
  PU = utils/preprocessing_utils.py.

What travels through LoadGen is not text but character labels, indices into a 42-symbol alphabet
(`LABELS`, AE:32-74 = SUT:65-107):

- The SUT's side (`answer_labels`, SUT:240-250): whisper's text lower-cased and stripped, then every
  character outside the alphabet dropped, logged as int64 (`payload_labels` reads them back). Dropping is
  not replacing: a newline or a comma between two words joins them ("one,two" -> "onetwo").
- The dataset's side (`transcript_labels`, M:103-107): the manifest's transcript with characters outside
  the alphabet dropped, and no lower-casing (the dataset is lower-cased when it is prepared, PU:41; an
  upper-case transcript would lose all its letters).
- Both go back to text (`labels_text`, LH:42-65).

Scoring (`word_errors`, `word_error_rate`, AE:84-114, H:20-101, LH:20-39): each text goes through
openai-whisper's `EnglishTextNormalizer` (spelled numbers to digits, British to American spelling,
contractions expanded, fillers removed) and is split on whitespace. The two word lists are then walked
in step: equal words pair up; where 2 or 3 consecutive words of one side, joined, spell the single word
at the other side's position ("base ball" and "baseball"), they become one unit on each side; otherwise
the two words pair up as a substitution and both sides move on one word. Words left over on either side
stay as they are. The sample's errors are the Levenshtein distance between the two unit lists; its
words are the normalised reference's words, counted before any joining. Errors and words are summed over all
samples and divided once (a corpus ratio, not a mean of per-sample ratios), and the line the MLPerf
checker reads is printed with Python's default float formatting (AE:151-154, `WordErrorRate.printed`).

Differences from the reference, both in how failures are reported, not in any number:

- A set of references with no words at all raises ValueError here; the reference divides by zero.
- A label outside 0..41 raises ValueError here; the reference raises KeyError.

The normaliser comes from the `whisper-normalizer` package, pinned to 0.1.1: its `EnglishTextNormalizer`
is openai-whisper's (whisper/normalizers, unchanged in behaviour since openai-whisper 20230124) with the
same spelling table, without openai-whisper's PyTorch. Later releases (0.1.2 on) add their own rules
("cause" becomes "because", "kinda" "kind of"), which the reference does not have.
"""

from __future__ import annotations

import functools
import sys
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "LABELS",
    "WordErrorRate",
    "answer_labels",
    "labels_text",
    "normalise",
    "payload_labels",
    "transcript_labels",
    "word_error_rate",
    "word_errors",
]

# AE:32-74 and SUT:65-107 (the same list): index 0 is the space, then a-z, the apostrophe, 0-9, $ % + -.
LABELS: tuple[str, ...] = (" ", *"abcdefghijklmnopqrstuvwxyz", "'", *"0123456789", "$", "%", "+", "-")
_LABEL_INDEX = {label: index for index, label in enumerate(LABELS)}
# H:55: a unit joins at most three words of one side.
_LONGEST_JOIN = 3
_INT64_BYTES = 8


# ---------------------------------------------------------------------------------------------------------
# Labels
# ---------------------------------------------------------------------------------------------------------


def transcript_labels(text: str) -> list[int]:
    """The dataset's side: each character's label; characters outside `LABELS` (upper case too) dropped."""
    return [_LABEL_INDEX[character] for character in text if character in _LABEL_INDEX]


def answer_labels(text: str) -> list[int]:
    """The SUT's side: whisper's text lower-cased and stripped, then labelled like a transcript."""
    return transcript_labels(text.lower().strip())


def labels_text(labels: Iterable[int]) -> str:
    """The text that labels spell; a label outside 0..41 is an error (a negative one is not counted back)."""
    characters = []
    for position, label in enumerate(labels):
        if not 0 <= label < len(LABELS):
            raise ValueError(f"label {label} at position {position} is outside 0..{len(LABELS) - 1}")
        characters.append(LABELS[label])
    return "".join(characters)


def payload_labels(data: bytes) -> list[int]:
    """A logged response's labels: int64 values (SUT:250), little-endian as on every MLPerf host."""
    if len(data) % _INT64_BYTES:
        raise ValueError(f"{len(data)} bytes is not a whole number of int64 labels")
    labels = array("q")
    labels.frombytes(data)
    if sys.byteorder == "big":
        labels.byteswap()
    return labels.tolist()


# ---------------------------------------------------------------------------------------------------------
# Scoring
# ---------------------------------------------------------------------------------------------------------


@functools.cache
def _english_normaliser() -> Callable[[str], str]:
    # Imported here: only an evaluation of whisper needs it, and building it reads the spelling table.
    from whisper_normalizer.english import EnglishTextNormalizer

    return EnglishTextNormalizer()


def normalise(text: str) -> str:
    """openai-whisper's English normalisation, as both sides get it before they are split into words."""
    return _english_normaliser()(text)


def _joined_widths(reference: Sequence[str], r: int, hypothesis: Sequence[str], h: int) -> tuple[int, int]:
    """How many words of each side, from positions r and h, make the next unit (H:38-83).

    (1, 1) for equal words and for a substitution alike; (k, 1) when reference words r..r+k-1 joined spell
    hypothesis word h; (1, k) the other way round. Words are never empty, so at most one join can match.
    """
    if reference[r] != hypothesis[h]:
        for width in range(2, _LONGEST_JOIN + 1):
            if r + width <= len(reference) and "".join(reference[r : r + width]) == hypothesis[h]:
                return width, 1
            if h + width <= len(hypothesis) and "".join(hypothesis[h : h + width]) == reference[r]:
                return 1, width
    return 1, 1


def _units(reference: Sequence[str], hypothesis: Sequence[str]) -> tuple[list[str], list[str]]:
    """Both word lists with the concatenations the in-step walk finds joined into single units."""
    reference_units: list[str] = []
    hypothesis_units: list[str] = []
    r = h = 0
    while r < len(reference) and h < len(hypothesis):
        reference_width, hypothesis_width = _joined_widths(reference, r, hypothesis, h)
        reference_units.append("".join(reference[r : r + reference_width]))
        hypothesis_units.append("".join(hypothesis[h : h + hypothesis_width]))
        r += reference_width
        h += hypothesis_width
    reference_units.extend(reference[r:])
    hypothesis_units.extend(hypothesis[h:])
    return reference_units, hypothesis_units


def _edit_distance(first: Sequence[str], second: Sequence[str]) -> int:
    """Levenshtein distance between two sequences of units, each edit costing 1 (LH:20-39)."""
    if len(first) < len(second):
        first, second = second, first  # one row as long as the shorter sequence
    previous_row = list(range(len(second) + 1))
    for i, first_unit in enumerate(first, start=1):
        row = [i]
        for j, second_unit in enumerate(second, start=1):
            row.append(
                min(
                    previous_row[j] + 1,
                    row[j - 1] + 1,
                    previous_row[j - 1] + (first_unit != second_unit),
                )
            )
        previous_row = row
    return previous_row[-1]


def word_errors(hypothesis: str, reference: str) -> tuple[int, int]:
    """One sample's (errors, reference words), both texts normalised first; an empty reference has 0 words."""
    reference_words = normalise(reference).split()
    hypothesis_words = normalise(hypothesis).split()
    reference_units, hypothesis_units = _units(reference_words, hypothesis_words)
    return _edit_distance(reference_units, hypothesis_units), len(reference_words)


@dataclass(frozen=True)
class WordErrorRate:
    errors: int  # summed over samples
    words: int  # reference words, summed over samples

    def __post_init__(self) -> None:
        if self.words <= 0 or self.errors < 0:
            raise ValueError(f"a rate needs reference words and errors >= 0, not {self.errors}/{self.words}")

    @property
    def wer(self) -> float:
        """A fraction: above 1 when the hypotheses insert more words than the references hold."""
        return self.errors / self.words

    @property
    def accuracy(self) -> float:
        """A percentage, computed as the reference prints it: (1 - wer) * 100."""
        return (1 - self.wer) * 100

    def printed(self) -> str:
        """AE:151-154, character for character; the checker reads `accuracy=([0-9\\.]+)%` from it."""
        return f"Word Error Rate: {self.wer * 100}%, accuracy={self.accuracy}%"


def word_error_rate(hypotheses: Sequence[str], references: Sequence[str]) -> WordErrorRate:
    """The corpus rate: errors summed over samples over reference words summed over samples."""
    if len(hypotheses) != len(references):
        raise ValueError(
            f"{len(hypotheses)} hypotheses for {len(references)} references; they pair up one to one"
        )
    errors = words = 0
    for hypothesis, reference in zip(hypotheses, references, strict=True):
        sample_errors, sample_words = word_errors(hypothesis, reference)
        errors += sample_errors
        words += sample_words
    if words == 0:
        raise ValueError(
            f"the {len(references)} references hold no words after normalisation; nothing to rate"
        )
    return WordErrorRate(errors=errors, words=words)
