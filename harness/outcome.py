"""What LoadGen's logs say about a finished run: settings as requested and as applied, validity, metric.

Read from `mlperf_log_detail.txt` with the checker's own parser, so run.json and `submitter check`
can never disagree about a log.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.loadgen_settings import AUDIT_KEYS_IN_LOG, AUDIT_NOTICE
from submitter.fileformats.audit_config import read_audit_config
from submitter.fileformats.mlperf_log import DetailLog, parse_detail_log
from submitter.fileformats.run_mode import Mode
from submitter.fileformats.run_record import LoadGenOutcome

DETAIL_LOG = "mlperf_log_detail.txt"
SUMMARY_LOG = "mlperf_log_summary.txt"
ACCURACY_LOG = "mlperf_log_accuracy.json"

_LATENCY_KEYS = {
    "p99_ttft_ns": "result_first_token_99.00_percentile_latency_ns",
    "p99_tpot_ns": "result_time_per_output_token_99.00_percentile_ns",
    "p99_latency_ns": "result_99.00_percentile_latency_ns",
    "samples_per_second": "result_samples_per_second",
    "completed_samples_per_second": "result_completed_samples_per_sec",
}
# The detail log's verdict on each of LoadGen's validity criteria.
_VALIDITY_CRITERIA = {
    "result_min_duration_met": "min duration",
    "result_min_queries_met": "min queries",
    "result_perf_constraints_met": "latency constraints",
    "early_stopping_met": "early stopping",
}


def read_outcome(
    run_dir: Path, metric_key: str, metric_unit: str, audit_config: Path | None
) -> LoadGenOutcome | None:
    """The outcome, or None when LoadGen wrote no detail log (it never started)."""
    path = run_dir / DETAIL_LOG
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8", errors="replace")
    log = parse_detail_log(text, str(path))
    warnings = [str(record.value) for record in log.warnings]
    outcome = LoadGenOutcome(
        loadgen_version=log.get("loadgen_version"),
        requested={
            key.removeprefix("requested_"): r.value
            for key, r in log.records.items()
            if key.startswith("requested_")
        },
        effective={
            key.removeprefix("effective_"): r.value
            for key, r in log.records.items()
            if key.startswith("effective_")
        },
        validity=log.get("result_validity"),
        invalid_reason=log.get("result_invalid_reason"),
        unmet=[criterion for key, criterion in _VALIDITY_CRITERIA.items() if log.get(key) is False],
        metric=metric_key if metric_key in log else None,
        metric_value=log.get(metric_key),
        metric_unit=metric_unit,
        figures={name: float(log.get(key)) for name, key in _LATENCY_KEYS.items() if key in log},
        errors=[str(record.value) for record in log.errors]
        + [f"line {p.line} {p.message}" for p in log.problems],
        warnings=warnings,
        audit_found=any(AUDIT_NOTICE in message for message in warnings),
    )
    if audit_config is not None:
        outcome.audit_mismatches = audit_mismatches(log, audit_config)
    accuracy = run_dir / ACCURACY_LOG
    outcome.accuracy_log_bytes = accuracy.stat().st_size if accuracy.is_file() else None
    return outcome


def audit_mismatches(log: DetailLog, audit_config: Path) -> list[str]:
    """Audit settings the detail log does not show as applied; empty when the audit took effect."""
    mismatches = []
    for key, value in read_audit_config(audit_config).items():
        log_key, meaning = AUDIT_KEYS_IN_LOG.get(key, (f"requested_{key}", None))
        expected: Any = meaning.get(value, value) if meaning else value
        found = log.get(log_key)
        if str(found).lower() != str(expected).lower():
            mismatches.append(f"{key} = {value} from the audit file, but the log has {log_key} = {found}")
    return mismatches


def mode_problems(mode: Mode, outcome: LoadGenOutcome | None) -> list[str]:
    """Why a finished run does not serve its purpose; empty when it does."""
    if outcome is None:
        return ["LoadGen wrote no detail log"]
    problems = [f"LoadGen error: {message}" for message in outcome.errors]
    if mode is Mode.PERFORMANCE:
        if outcome.validity is None:  # an empty or cut-off log: LoadGen never wrote its result
            problems.append("the detail log holds no verdict: LoadGen did not finish the run")
        elif outcome.validity != "VALID":
            missed = f": {', '.join(outcome.unmet)} not met" if outcome.unmet else ""
            reason = f" ({outcome.invalid_reason.strip()})" if outcome.invalid_reason else ""
            problems.append(f"LoadGen judged the run {outcome.validity}{missed}{reason}")
        if outcome.audit_found:
            problems.append("LoadGen applied an audit config to a performance run")
    elif mode is Mode.ACCURACY:
        if not outcome.accuracy_log_bytes or outcome.accuracy_log_bytes <= 2:
            problems.append("the accuracy log is empty")
    else:
        if not outcome.audit_found:
            problems.append("the detail log does not confirm that LoadGen read the audit config")
        problems += outcome.audit_mismatches
    return problems
