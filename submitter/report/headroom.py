"""Headroom: how far each number of a result is from the limit the round sets for it.

Pure functions from parsed facts and round rules to judged items; nothing here reads a file.

Warn thresholds, and why:
- accuracy: a target is a share of the reference (ROUGE 99 %, gen_len 90 %), so a result equal to the
  reference has a margin of only 1.01 % over a ROUGE target. A result warns once it has used more than half
  of what the round allows it to lose against the reference: it still passes, but another engine version
  or quantisation can tip it over. The same rule applies to upper limits and to gen_len's window.
- token latencies: Server and Interactive runs are tuned towards their limits; a p99 within 5 % of its
  limit (above 95 % of it) warns, at or above the limit fails (the checker wants it strictly below).
- TEST06: every check must say True; only Offline may skip the first-token check.
"""

from __future__ import annotations

from collections.abc import Mapping

from submitter.report.model import (
    AccuracyFacts,
    AccuracyMargin,
    AuditCheck,
    Headroom,
    LatencyShare,
    Percentile,
    PerformanceFacts,
    Status,
    WindowPosition,
)
from submitter.rounds.models import (
    AccuracyBound,
    AccuracyRules,
    AuditRules,
    BenchmarkRules,
    Scenario,
    TokenLatencyLimits,
)

# Warn once more than this share of the allowed deviation from the reference is used.
ALLOWANCE_WARN_FRACTION = 0.5
# Warn when a p99 token latency exceeds this share of its limit.
LATENCY_WARN_SHARE_PERCENT = 95.0
# Metrics that are totals over the samples scored, so a trial on fewer samples is scaled to the dataset.
SUMMED_METRICS = frozenset({"GEN_LEN"})
TOKEN_LATENCY_PERCENTILE = 99.0
TEST06 = "TEST06"


def margin_percent(value: float, threshold: float, *, upper: bool = False) -> float | None:
    """The room left before a threshold, as a share of it: 0 at the threshold, negative beyond it."""
    if threshold == 0:
        return None
    room = threshold - value if upper else value - threshold
    return room / abs(threshold) * 100


def margin_status(margin: float | None, allowance: float | None) -> Status:
    """`allowance` is the margin a result equal to the reference has."""
    if margin is None:
        return Status.NOT_JUDGED
    if margin < 0:
        return Status.FAIL
    if allowance is not None and allowance > 0 and margin < allowance * ALLOWANCE_WARN_FRACTION:
        return Status.WARN
    return Status.PASS


def accuracy_margin(
    bound: AccuracyBound, value: float | None, *, upper: bool, note: str = ""
) -> AccuracyMargin:
    margin, status = None, Status.FAIL
    if value is None:
        note = "not found in accuracy.txt"
    else:
        margin = margin_percent(value, bound.threshold, upper=upper)
        status = margin_status(margin, margin_percent(bound.reference, bound.threshold, upper=upper))
    return AccuracyMargin(
        metric=bound.metric,
        bound="upper limit" if upper else "target",
        value=value,
        threshold=bound.threshold,
        reference=bound.reference,
        margin_percent=margin,
        status=status,
        note=note,
    )


def window_position(
    value: float, lower: AccuracyBound, upper: AccuracyBound, note: str = ""
) -> WindowPosition | None:
    """Where `value` sits between a target and an upper limit of the same metric."""
    low, high = lower.threshold, upper.threshold
    if high <= low:
        return None
    position = (value - low) / (high - low) * 100
    reference = (lower.reference - low) / (high - low) * 100
    if not 0 <= position <= 100:
        status = Status.FAIL
    elif position < reference * ALLOWANCE_WARN_FRACTION or position > 100 - (100 - reference) * (
        ALLOWANCE_WARN_FRACTION
    ):
        status = Status.WARN
    else:
        status = Status.PASS
    return WindowPosition(
        metric=lower.metric,
        value=value,
        lower=low,
        upper=high,
        reference=lower.reference,
        position_percent=position,
        reference_percent=reference,
        status=status,
        note=note,
    )


def scaled_to_dataset(metric: str, value: float, samples: int | None, dataset_size: int) -> tuple[float, str]:
    """A total over fewer samples than the dataset (a trial), scaled to the dataset, and a note saying so."""
    if metric not in SUMMED_METRICS or not samples or samples == dataset_size:
        return value, ""
    return value * dataset_size / samples, f"scaled from {samples} to {dataset_size} samples"


def _number(raw: str | None) -> float | None:
    try:
        return None if raw is None else float(raw)
    except ValueError:
        return None


def accuracy_headroom(
    values: Mapping[str, str], rules: AccuracyRules, samples: int | None, dataset_size: int
) -> tuple[tuple[AccuracyMargin, ...], tuple[WindowPosition, ...]]:
    margins: list[AccuracyMargin] = []
    judged: dict[str, tuple[float, str]] = {}
    for bounds, upper in ((rules.targets, False), (rules.upper_limits, True)):
        for bound in bounds:
            value = _number(values.get(bound.metric))
            note = ""
            if value is not None:
                value, note = scaled_to_dataset(bound.metric, value, samples, dataset_size)
                judged[bound.metric] = (value, note)
            margins.append(accuracy_margin(bound, value, upper=upper, note=note))
    windows = []
    for upper_bound in rules.upper_limits:
        lower_bound = next((b for b in rules.targets if b.metric == upper_bound.metric), None)
        if lower_bound is not None and upper_bound.metric in judged:
            value, note = judged[upper_bound.metric]
            window = window_position(value, lower_bound, upper_bound, note)
            if window is not None:
                windows.append(window)
    return tuple(margins), tuple(windows)


def latency_share(name: str, value_ms: float | None, limit_ms: float) -> LatencyShare:
    share = None if value_ms is None or limit_ms <= 0 else value_ms / limit_ms * 100
    if share is None:
        status = Status.FAIL if value_ms is None else Status.NOT_JUDGED
    elif share >= 100:
        status = Status.FAIL
    elif share > LATENCY_WARN_SHARE_PERCENT:
        status = Status.WARN
    else:
        status = Status.PASS
    return LatencyShare(
        name=name,
        percentile=TOKEN_LATENCY_PERCENTILE,
        value_ms=value_ms,
        limit_ms=limit_ms,
        share_percent=share,
        status=status,
    )


def _at(series: tuple[Percentile, ...], percentile: float) -> float | None:
    return next((point.ms for point in series if point.percentile == percentile), None)


def latency_headroom(
    performance: PerformanceFacts | None, limits: TokenLatencyLimits | None
) -> tuple[LatencyShare, ...]:
    if limits is None:
        return ()
    ttft = _at(performance.ttft, TOKEN_LATENCY_PERCENTILE) if performance else None
    tpot = _at(performance.tpot, TOKEN_LATENCY_PERCENTILE) if performance else None
    return (latency_share("TTFT", ttft, limits.ttft_ms), latency_share("TPOT", tpot, limits.tpot_ms))


def _split(line: str) -> tuple[str, str]:
    label, _, value = line.strip().partition(": ")
    return label, value


def judge_test06(
    text: str | None, verification: AuditRules, scenario: Scenario | None
) -> tuple[AuditCheck, ...]:
    """Each check of verify_accuracy.txt against what the round requires of it."""
    if text is None:
        return (
            AuditCheck(
                check=verification.verification_file or TEST06,
                found=None,
                expected="present",
                status=Status.FAIL,
            ),
        )
    found = dict(_split(line) for line in text.splitlines() if ": " in line)
    checks = []
    label, passing = _split(verification.first_token_pass or "")
    _, skipped = _split(verification.first_token_skipped or "")
    value = found.get(label)
    offline = scenario is Scenario.OFFLINE
    accepted = value == passing or (value == skipped and offline)
    expected = f"{passing} or {skipped}" if offline else passing
    checks.append(AuditCheck(check=label, found=value, expected=expected, status=_passed(accepted)))
    for line in verification.required_lines:
        label, passing = _split(line)
        value = found.get(label)
        checks.append(
            AuditCheck(check=label, found=value, expected=passing, status=_passed(value == passing))
        )
    return tuple(checks)


def _passed(ok: bool) -> Status:
    return Status.PASS if ok else Status.FAIL


def result_headroom(
    bench: BenchmarkRules | None,
    scenario: Scenario | None,
    *,
    closed: bool,
    performance: PerformanceFacts | None,
    accuracy: AccuracyFacts | None,
    test06_text: str | None,
    verifications: Mapping[str, AuditRules],
) -> Headroom:
    """Every headroom item of one result."""
    if bench is None:
        return Headroom(notes=("the round has no rules for this benchmark, so nothing is judged",))
    notes = []
    if not closed:
        notes.append(
            "open division: the official checker does not enforce accuracy targets or compliance tests; "
            "the headroom is shown for reference"
        )
    margins: tuple[AccuracyMargin, ...] = ()
    windows: tuple[WindowPosition, ...] = ()
    if accuracy is None:
        notes.append("accuracy.txt is missing, so no accuracy headroom")
    else:
        margins, windows = accuracy_headroom(
            accuracy.values, bench.accuracy, accuracy.samples, bench.dataset.accuracy_sample_count
        )
    limits = bench.token_latency_limits.get(scenario) if scenario is not None else None
    checks: tuple[AuditCheck, ...] = ()
    verification = verifications.get(TEST06)
    if TEST06 in bench.compliance_tests and verification is not None:
        if test06_text is not None or closed:
            checks = judge_test06(test06_text, verification, scenario)
        else:
            notes.append("no TEST06 verification (the open division does not require it)")
    return Headroom(
        accuracy=margins,
        windows=windows,
        latency=latency_headroom(performance, limits),
        test06=checks,
        notes=tuple(notes),
    )
