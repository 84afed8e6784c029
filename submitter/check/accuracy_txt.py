"""accuracy.txt: the evaluator's printed metrics and the `hash=` line that truncation appends.

Metric values are read the way the official checker's patterns read them (shared/spec/checker.md §6),
including its quirks: GEN_LEN and TOKENS_PER_SAMPLE need one space and an unquoted number, so numpy 2's
`np.int64(…)` is not a value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_QUOTED = r"\s+'?([\d.]+)'?"
_PLAIN = r"\s([\d.]+)"
METRIC_PATTERNS: dict[str, re.Pattern[str]] = {
    "ROUGE1": re.compile(rf".*'rouge1':{_QUOTED}.*"),
    "ROUGE2": re.compile(rf".*'rouge2':{_QUOTED}.*"),
    "ROUGEL": re.compile(rf".*'rougeL':{_QUOTED}.*"),
    "ROUGELSUM": re.compile(rf".*'rougeLsum':{_QUOTED}.*"),
    "GEN_LEN": re.compile(rf".*'gen_len':{_PLAIN}.*"),
    "TOKENS_PER_SAMPLE": re.compile(rf".*'tokens_per_sample':{_PLAIN}.*"),
    "exact_match": re.compile(rf".*'exact_match':{_PLAIN}.*"),
    "gsm8k_accuracy": re.compile(rf".*'gsm8k':{_PLAIN}.*"),
    "mbxp_accuracy": re.compile(rf".*'mbxp':{_PLAIN}.*"),
}
_HASH = re.compile(r"^hash=([\w\d]+)$")
_NUMPY_SCALAR = re.compile(r"np\.(?:int|float)\d+\(")


@dataclass(frozen=True)
class AccuracyValue:
    raw: str
    line: int

    @property
    def number(self) -> float | None:
        try:
            return float(self.raw)
        except ValueError:
            return None


@dataclass(frozen=True)
class AccuracyFile:
    path: str
    values: dict[str, AccuracyValue] = field(default_factory=dict)
    hash: str | None = None
    numpy_scalar_line: int | None = None


def parse_accuracy_txt(text: str, path: str) -> AccuracyFile:
    values: dict[str, AccuracyValue] = {}
    digest = None
    numpy_line = None
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.rstrip("\r")
        for metric, pattern in METRIC_PATTERNS.items():
            if metric not in values and (match := pattern.match(line)):
                values[metric] = AccuracyValue(match.group(1), number)
        if digest is None and (match := _HASH.match(line)):
            digest = match.group(1)
        if numpy_line is None and _NUMPY_SCALAR.search(line):
            numpy_line = number
    return AccuracyFile(path, values, digest, numpy_line)
