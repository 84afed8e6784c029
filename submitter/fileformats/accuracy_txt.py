"""accuracy.txt: the evaluator's printed metrics and the `hash=` line that truncation appends.

Metrics are read with the round's patterns (`accuracy_patterns` in the packs); GEN_LEN and
TOKENS_PER_SAMPLE need one space and an unquoted number, so numpy 2's `np.int64(…)` is not a value.
How the official checker judges the lines is `submitter.check.accuracy_judgement`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache

from msgspec import Struct

HASH_PATTERN = re.compile(r"^hash=([\w\d]+)$")
_NUMPY_SCALAR = re.compile(r"np\.(?:int|float)\d+\(")


@cache
def metric_pattern(pattern: str) -> re.Pattern[str]:
    """A metric's pattern of the packs, compiled once."""
    return re.compile(pattern)


class AccuracyValue(Struct, frozen=True):
    raw: str
    line: int

    @property
    def number(self) -> float | None:
        try:
            return float(self.raw)
        except ValueError:
            return None


class AccuracyFile(Struct, frozen=True):
    path: str
    lines: tuple[str, ...] = ()
    values: dict[str, AccuracyValue] = {}  # first match of each metric
    hash: str | None = None
    numpy_scalar_line: int | None = None


def parse_accuracy_txt(text: str, path: str, patterns: Mapping[str, str]) -> AccuracyFile:
    # Lines as Python's readlines() gives them after universal-newline translation: split at "\n" only.
    lines = tuple(text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"))
    values: dict[str, AccuracyValue] = {}
    digest = None
    numpy_line = None
    for number, line in enumerate(lines, start=1):
        for metric, pattern in patterns.items():
            if metric not in values and (match := metric_pattern(pattern).match(line)):
                values[metric] = AccuracyValue(match.group(1), number)
        if digest is None and (match := HASH_PATTERN.match(line)):
            digest = match.group(1)
        if numpy_line is None and _NUMPY_SCALAR.search(line):
            numpy_line = number
    return AccuracyFile(path, lines, values, digest, numpy_line)
