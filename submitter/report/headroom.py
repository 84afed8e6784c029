"""Headroom: how far each number of a result is from the limit the round sets for it.

The checker is the one judge. Which limits apply to a result, and whether one was broken, is what
`submitter check` decided over the same parsed tree: an item is FAIL exactly where an error of the check
names it (its metric, log key or file), and a result the check finds valid never shows a failed item.
What this module adds is the distance to each limit, and a warning where little is left.

Warn thresholds, and why:
- accuracy: a target is a share of the reference (ROUGE 99 %, gen_len 90 %), so a result equal to the
  reference has a margin of only 1.01 % over a ROUGE target. A result warns once it has used more than half
  of what the round allows it to lose against the reference: it still passes, but another engine version
  or quantisation can tip it over. The same rule applies to upper limits and to gen_len's window.
- latencies: Server and Interactive runs are tuned towards their limits; a p99 within 5 % of its limit
  (above 95 % of it) warns.
- a number beyond its limit where no rule of the check applies (the open division) warns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from submitter.check.context import ResultContext
from submitter.check.rules.accuracy import numeric_score
from submitter.fileformats.mlperf_log import DetailLog
from submitter.report.model import (
    AccuracyFacts,
    AccuracyMargin,
    AuditCheck,
    Headroom,
    LatencyShare,
    Status,
    WindowPosition,
)
from submitter.rounds.models import AccuracyBound, AccuracyRules, AuditRules, BenchmarkRules, Scenario
from submitter.rule_registry import Finding

# Warn once more than this share of the allowed deviation from the reference is used.
ALLOWANCE_WARN_FRACTION = 0.5
# Warn when a p99 latency exceeds this share of its limit.
LATENCY_WARN_SHARE_PERCENT = 95.0
# Metrics that are totals over the samples scored, so a trial on fewer samples is scaled to the dataset.
SUMMED_METRICS = frozenset({"GEN_LEN"})
LATENCY_PERCENTILE = 99.0
NS_PER_MS = 1_000_000
TEST06 = "TEST06"
# The p99 log keys the check judges latencies by (LoadGen's, and an endpoints result's mapped to them).
_P99_KEYS = {
    "TTFT": "result_first_token_99.00_percentile_latency_ns",
    "TPOT": "result_time_per_output_token_99.00_percentile_ns",
    "latency": "result_99.00_percentile_latency_ns",
}


def margin_percent(value: float, threshold: float, *, upper: bool = False) -> float | None:
    """The room left before a threshold, as a share of it: 0 at the threshold, negative beyond it."""
    if threshold == 0:
        return None
    room = threshold - value if upper else value - threshold
    return room / abs(threshold) * 100


def margin_status(margin: float | None, allowance: float | None, *, failed: bool = False) -> Status:
    """FAIL where the check failed the item; otherwise how much room is left. `allowance` is the margin
    a result equal to the reference has."""
    if failed:
        return Status.FAIL
    if margin is None:
        return Status.NOT_JUDGED
    if margin < 0:
        return Status.WARN  # beyond the limit, where no rule of the check applies (the open division)
    if allowance is not None and allowance > 0 and margin < allowance * ALLOWANCE_WARN_FRACTION:
        return Status.WARN
    return Status.PASS


def accuracy_margin(
    bound: AccuracyBound, value: float | None, *, upper: bool, failed: bool = False, note: str = ""
) -> AccuracyMargin:
    margin = None if value is None else margin_percent(value, bound.threshold, upper=upper)
    allowance = margin_percent(bound.reference, bound.threshold, upper=upper)
    return AccuracyMargin(
        metric=bound.metric,
        bound="upper limit" if upper else "target",
        value=value,
        threshold=bound.threshold,
        reference=bound.reference,
        margin_percent=margin,
        status=margin_status(margin, allowance, failed=failed),
        note=note,
    )


def window_position(
    value: float, lower: AccuracyBound, upper: AccuracyBound, *, failed: bool = False, note: str = ""
) -> WindowPosition | None:
    """Where `value` sits between a target and an upper limit of the same metric."""
    low, high = lower.threshold, upper.threshold
    if high <= low:
        return None
    position = (value - low) / (high - low) * 100
    reference = (lower.reference - low) / (high - low) * 100
    if failed:
        status = Status.FAIL
    elif not 0 <= position <= 100:
        status = Status.WARN  # outside the window, where no rule of the check applies
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
    values: Mapping[str, str],
    rules: AccuracyRules,
    samples: int | None,
    dataset_size: int,
    *,
    scenario: Scenario | None = None,
    failed: frozenset[str] = frozenset(),
) -> tuple[tuple[AccuracyMargin, ...], tuple[WindowPosition, ...]]:
    """Margins of accuracy.txt's values; `failed`: the metrics the check found missing or out of bounds."""
    margins: list[AccuracyMargin] = []
    judged: dict[str, tuple[float, str]] = {}
    for bounds, upper in ((rules.targets_for(scenario), False), (rules.upper_limits, True)):
        for bound in bounds:
            value = _number(values.get(bound.metric))
            if value is None:
                # A target the evaluator must print; an upper limit applies only where it prints the metric.
                note = "not found in accuracy.txt" if not upper else "not printed by the evaluator"
                margins.append(
                    accuracy_margin(bound, None, upper=upper, failed=bound.metric in failed, note=note)
                )
                continue
            value, note = scaled_to_dataset(bound.metric, value, samples, dataset_size)
            judged[bound.metric] = (value, note)
            margins.append(
                accuracy_margin(bound, value, upper=upper, failed=bound.metric in failed, note=note)
            )
    windows = []
    for upper_bound in rules.upper_limits:
        lower_bound = next((b for b in rules.targets_for(scenario) if b.metric == upper_bound.metric), None)
        if lower_bound is not None and upper_bound.metric in judged:
            value, note = judged[upper_bound.metric]
            window = window_position(
                value, lower_bound, upper_bound, failed=upper_bound.metric in failed, note=note
            )
            if window is not None:
                windows.append(window)
    return tuple(margins), tuple(windows)


def latency_share(
    name: str, value_ms: float | None, limit_ms: float, *, failed: bool = False
) -> LatencyShare:
    share = None if value_ms is None or limit_ms <= 0 else value_ms / limit_ms * 100
    if failed:
        status = Status.FAIL
    elif share is None:
        status = Status.NOT_JUDGED
    elif share >= 100 or share > LATENCY_WARN_SHARE_PERCENT:
        status = Status.WARN
    else:
        status = Status.PASS
    return LatencyShare(
        name=name,
        percentile=LATENCY_PERCENTILE,
        value_ms=value_ms,
        limit_ms=limit_ms,
        share_percent=share,
        status=status,
    )


def latency_limits(bench: BenchmarkRules, scenario: Scenario | None) -> list[tuple[str, float]]:
    """The p99 limits (name, ms) of a directory scenario: TTFT and TPOT for an LLM, else the whole
    query's latency where the round constrains it."""
    if scenario is None:
        return []
    tokens = bench.token_latency_limits.get(scenario) if bench.llm else None
    if tokens is not None:
        return [("TTFT", tokens.ttft_ms), ("TPOT", tokens.tpot_ms)]
    latency_ns = bench.latency_constraint_ns.get(scenario)
    return [("latency", latency_ns / NS_PER_MS)] if latency_ns and scenario is not Scenario.OFFLINE else []


def latency_headroom(
    log: DetailLog | None, limits: Sequence[tuple[str, float]], failed_keys: frozenset[str] = frozenset()
) -> tuple[LatencyShare, ...]:
    shares = []
    for name, limit_ms in limits:
        key = _P99_KEYS[name]
        found = log.get(key) if log is not None else None
        value_ms = (
            found / NS_PER_MS if isinstance(found, int | float) and not isinstance(found, bool) else None
        )
        shares.append(latency_share(name, value_ms, limit_ms, failed=key in failed_keys))
    return tuple(shares)


def _split(line: str) -> tuple[str, str]:
    label, _, value = line.strip().partition(": ")
    return label, value


def judge_test06(
    text: str | None, verification: AuditRules, scenario: Scenario | None, *, failed: bool = False
) -> tuple[AuditCheck, ...]:
    """Each check of verify_accuracy.txt against what the round requires of it; `failed`: the check
    found an error in the audit (a line that is not as required is then FAIL, else a warning)."""
    missing = Status.FAIL if failed else Status.WARN
    if text is None:
        check = verification.verification_file or TEST06
        return (AuditCheck(check=check, found=None, expected="present", status=missing),)
    found = dict(_split(line) for line in text.splitlines() if ": " in line)
    checks = []
    label, passing = _split(verification.first_token_pass or "")
    _, skipped = _split(verification.first_token_skipped or "")
    value = found.get(label)
    offline = scenario is Scenario.OFFLINE
    accepted = value == passing or (value == skipped and offline)
    expected = f"{passing} or {skipped}" if offline else passing
    checks.append(AuditCheck(check=label, found=value, expected=expected, status=_met(accepted, missing)))
    for line in verification.required_lines:
        label, passing = _split(line)
        value = found.get(label)
        checks.append(
            AuditCheck(check=label, found=value, expected=passing, status=_met(value == passing, missing))
        )
    return tuple(checks)


def _met(ok: bool, otherwise: Status) -> Status:
    return Status.PASS if ok else otherwise


def endpoints_accuracy(
    scores: Sequence[object], rules: AccuracyRules, scenario: Scenario | None, *, failed: bool = False
) -> tuple[AccuracyMargin, ...]:
    """An endpoints result's score (accuracy_results.json) against the scenario's first target, as the
    check compares it."""
    targets = rules.targets_for(scenario)
    if not scores or not targets:
        return ()
    value = numeric_score(scores[0], [bound.metric for bound in targets])
    return (accuracy_margin(targets[0], value, upper=False, failed=failed),)


def result_headroom(
    ctx: ResultContext, errors: Sequence[Finding], accuracy: AccuracyFacts | None
) -> Headroom:
    """Every headroom item of one result; `errors`: the check's errors that belong to it."""
    bench, scenario = ctx.bench, ctx.scenario
    if bench is None:
        return Headroom(notes=("the round has no rules for this benchmark, so nothing is judged",))
    failed_fields = frozenset(error.field for error in errors if error.field)
    failed_paths = frozenset(error.path for error in errors)
    notes = []
    if not ctx.closed:
        notes.append(
            "open division: the official checker does not enforce accuracy targets or compliance tests; "
            "the headroom is shown for reference"
        )
    margins: tuple[AccuracyMargin, ...] = ()
    windows: tuple[WindowPosition, ...] = ()
    if ctx.files.endpoints is not None:
        scored_file = f"{ctx.path}/accuracy/accuracy_results.json"
        margins = endpoints_accuracy(
            ctx.files.endpoints.accuracy_scores, bench.accuracy, scenario, failed=scored_file in failed_paths
        )
        if not bench.endpoints_scored:
            notes.append("the round does not compare this benchmark's endpoints score with its target")
    elif accuracy is None:
        notes.append("accuracy.txt is missing, so no accuracy headroom")
    else:
        margins, windows = accuracy_headroom(
            accuracy.values,
            bench.accuracy,
            accuracy.samples,
            bench.dataset.accuracy_sample_count,
            scenario=scenario,
            failed=failed_fields,
        )
    checks: tuple[AuditCheck, ...] = ()
    verification = ctx.rules.compliance.get(TEST06)
    # The audit the check requires, or one an open result holds anyway (shown for reference).
    shown = TEST06 in ctx.required_audits or (
        TEST06 in bench.compliance_tests and not ctx.endpoints and ctx.files.test06_verification is not None
    )
    if shown and verification is not None:
        audit = ctx.files.audits.get(TEST06)
        folder = audit.folder if audit else f"{ctx.files.compliance_dir}/{TEST06}"
        failed = any(path == folder or path.startswith(f"{folder}/") for path in failed_paths)
        checks = judge_test06(ctx.files.test06_verification, verification, scenario, failed=failed)
    latency = latency_headroom(ctx.files.performance_log, latency_limits(bench, scenario), failed_fields)
    return Headroom(accuracy=margins, windows=windows, latency=latency, test06=checks, notes=tuple(notes))
