"""How the official checker judges accuracy.txt (shared/spec/checker.md §6).

Line by line: every line that matches a metric's pattern before all targets and the hash were seen
counts, so a later line below the target fails an earlier good one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from msgspec import Struct

from submitter.fileformats.accuracy_txt import HASH_PATTERN, AccuracyValue, metric_pattern
from submitter.fileformats.mlperf_log import DetailLog
from submitter.rounds.models import AccuracyBound

# The key of the samples an accuracy run was asked for, and the one of the samples its QSL held.
ASKED_SAMPLES, HELD_SAMPLES = "effective_accuracy_sample_count", "qsl_reported_total_count"


class Miss(Struct, frozen=True):
    """A line whose value misses its target (below) or its upper limit (above)."""

    bound: AccuracyBound
    value: str
    line: int
    upper: bool


class AccuracyJudgement(Struct, frozen=True):
    misses: tuple[Miss, ...]
    unseen: tuple[AccuracyBound, ...]  # targets no line met
    not_numbers: tuple[AccuracyValue, ...]  # matched text that is not a number (the official checker raises)
    hash: str | None
    reported: dict[str, str]  # metric -> the last value read, as summary.csv's Accuracy column shows it


def judge(
    lines: Sequence[str],
    targets: Sequence[AccuracyBound],
    upper_limits: Sequence[AccuracyBound],
    patterns: Mapping[str, str],
) -> AccuracyJudgement:
    """The official accuracy.txt judgement: stops once every target was met and a hash line was seen."""
    misses: list[Miss] = []
    not_numbers: list[AccuracyValue] = []
    met = [False] * len(targets)
    digest = None
    reported: dict[str, str] = {}
    for number, line in enumerate(lines, start=1):
        if targets and (match := HASH_PATTERN.match(line)):
            digest = match.group(1)
        for index, bound in enumerate(targets):
            raw = _match(patterns, bound.metric, line)
            if raw is None:
                continue
            value = _number(raw, number, not_numbers)
            if value is not None and value >= bound.threshold:
                met[index] = True
            elif value is not None:
                misses.append(Miss(bound, raw, number, upper=False))
            if raw:
                reported[bound.metric] = raw
        for bound in upper_limits:
            raw = _match(patterns, bound.metric, line)
            value = None if raw is None else _number(raw, number, not_numbers)
            if value is not None and value > bound.threshold:
                misses.append(Miss(bound, raw or "", number, upper=True))
        if all(met) and digest:
            break
    unseen = tuple(bound for bound, seen in zip(targets, met, strict=True) if not seen)
    return AccuracyJudgement(tuple(misses), unseen, tuple(not_numbers), digest, reported)


def samples_covered(log: DetailLog) -> int | None:
    """How many samples an accuracy log covers: those LoadGen was asked for, but no more than its QSL
    held (a 256-sample trial of gpt-oss-120b logs 4395 asked)."""
    asked, held = _count(log.get(ASKED_SAMPLES)), _count(log.get(HELD_SAMPLES))
    if asked is not None and held is not None:
        return min(asked, held)
    return asked if asked is not None else held


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _match(patterns: Mapping[str, str], metric: str, line: str) -> str | None:
    pattern = patterns.get(metric)
    match = metric_pattern(pattern).match(line) if pattern else None
    return match.group(1) if match else None


def _number(raw: str, line: int, not_numbers: list[AccuracyValue]) -> float | None:
    try:
        return float(raw)
    except ValueError:
        not_numbers.append(AccuracyValue(raw, line))
        return None
