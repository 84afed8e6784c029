"""TEST01 verification of an audit run, as compliance/TEST01/run_verification.py makes it.

verify_accuracy.py: each answer the audit run logged (LoadGen samples them with the audit file's seed and
target) is compared with the accuracy run's answer to the same sample by its first element, read as the
benchmark's response type; it passes when some samples matched and none differed. verify_performance.py:
the audit's result must be VALID and within 10 % of the performance run's (20 % for short single-stream
and multi-stream latencies), the same scenario and, in Server, the same target latency. Both outputs are
written as the scripts print them. Where answers differed (a non-deterministic engine), the submitter's
fallback is scored too, when the benchmark's evaluator is at hand: the accuracy run's answers to the
audit's samples (baseline_accuracy.txt) against the audit's own (compliance_accuracy.txt), which the
checker accepts within the benchmark's accuracy delta.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from compliance.registry import AuditContext
from submitter.errors import SubmitterError
from submitter.evaluation.accuracy_log import LoggedPayload, payloads_of, read_log_records
from submitter.fileformats.mlperf_log import parse_detail_log
from submitter.fileio import write_text_atomic

VERIFY_FILE = "verify_accuracy.txt"
PERFORMANCE_FILE = "verify_performance.txt"
ACCURACY_LOG = "mlperf_log_accuracy.json"
DETAIL_LOG = "mlperf_log_detail.txt"
# verify_performance.py RESULT_FIELD
RESULT_FIELD = {
    "Offline": "result_samples_per_second",
    "SingleStream": "early_stopping_latency_ss",
    "MultiStream": "early_stopping_latency_ms",
    "Server": "result_completed_samples_per_sec",
}
_BASELINE_FOLDER = "baseline"


@dataclass
class Test01Verdict:
    accuracy_passed: bool = False
    performance_passed: bool = False
    samples: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.accuracy_passed and self.performance_passed

    def failures(self) -> list[str]:
        return self.problems


def compare_answers(
    reference: list[LoggedPayload], audit: list[LoggedPayload], dtype: str
) -> tuple[list[str], int, int]:
    """verify_accuracy.py's count lines, the number of matched samples and of differing answers; a
    response that is no whole number of `dtype` elements is a SubmitterError (the script would crash)."""
    answers: dict[int, bytes] = {}
    duplicates = reference_mismatches = 0
    for entry in reference:
        if entry.qsl_idx in answers:
            duplicates += 1
            reference_mismatches += answers[entry.qsl_idx] != entry.data
        else:
            answers[entry.qsl_idx] = entry.data
    matched = mismatches = missing = 0
    for entry in audit:
        if entry.qsl_idx in answers:
            matched += 1
            mine, theirs = _elements(entry.data, dtype), _elements(answers[entry.qsl_idx], dtype)
            if mine.size == 0 or theirs.size == 0:
                mismatches += mine.size != theirs.size
            elif mine[0] != theirs[0]:
                mismatches += 1
        else:
            missing += 1
        answers[entry.qsl_idx] = entry.data
    lines = [
        "Verifying accuracy. This might take a while...",
        "Reading accuracy mode results...",
        "Reading performance mode results...",
        f"num_acc_log_entries = {len(reference)}",
        f"num_acc_log_duplicate_keys = {duplicates}",
        f"num_acc_log_data_mismatch = {reference_mismatches}",
        f"num_perf_log_entries = {len(audit)}",
        f"num_perf_log_qsl_idx_match = {matched}",
        f"num_perf_log_data_mismatch = {mismatches}",
        f"num_missing_qsl_idxs = {missing}",
    ]
    return lines, matched, mismatches


def _elements(data: bytes, dtype: str) -> np.ndarray:
    size = np.dtype(dtype).itemsize
    if len(data) % size:
        raise SubmitterError(f"a logged response of {len(data)} bytes is not made of {dtype} elements")
    return np.frombuffer(data, dtype)


def _result(detail: Path) -> tuple[str | None, float | None, object, str | None]:
    """(scenario, score, Server target latency, why it cannot be used)."""
    try:
        log = parse_detail_log(detail.read_text(encoding="utf-8"), str(detail))
    except OSError as exc:
        return None, None, None, f"{detail} cannot be read ({exc})"
    scenario = log.get("effective_scenario")
    score = log.get(RESULT_FIELD.get(str(scenario), ""))
    if log.get("result_validity") != "VALID":
        return scenario, None, None, f"TEST FAIL: Invalid results in {detail}"
    if not isinstance(score, int | float):
        return scenario, None, None, f"{detail} has no {RESULT_FIELD.get(str(scenario), 'result')}"
    return scenario, float(score), log.get("effective_target_latency_ns"), None


def compare_performance(reference: Path, audit: Path) -> tuple[list[str], bool]:
    """verify_performance.py's output and verdict."""
    lines = ["Verifying performance."]
    ref_scenario, ref_score, ref_latency, ref_problem = _result(reference)
    test_scenario, test_score, test_latency, test_problem = _result(audit)
    problem = ref_problem or test_problem
    if problem:
        return [*lines, problem], False
    assert ref_score is not None and test_score is not None
    if test_scenario != ref_scenario:
        return [*lines, "TEST FAIL: Test and reference scenarios do not match!"], False
    if ref_scenario == "Server" and test_latency != ref_latency:
        return [*lines, "TEST FAIL: Server target latency mismatch"], False
    lines += [f"Reference score = {ref_score}", f"Test score = {test_score}"]
    threshold = 0.10
    if (ref_scenario == "SingleStream" and ref_score <= 200000) or (
        ref_scenario == "MultiStream" and ref_score <= 1600000
    ):
        threshold = 0.20
    passed = ref_score * (1 - threshold) <= test_score <= ref_score * (1 + threshold)
    return [*lines, "TEST PASS" if passed else "TEST FAIL: Test score invalid"], passed


def verify_run(run_dir: Path, context: AuditContext) -> Test01Verdict:
    """Compare the audit with the newest accuracy and performance runs; writes both verification files."""
    verdict = Test01Verdict()
    accuracy_run, performance_run = context.reference_run("accuracy"), context.reference_run("performance")
    if accuracy_run is None or performance_run is None:
        missing = " and ".join(
            m for m, r in (("accuracy", accuracy_run), ("performance", performance_run)) if r is None
        )
        note = f"no {missing} run of this scenario to verify against; run it, then TEST01 again"
        write_text_atomic(run_dir / VERIFY_FILE, f"{note}\nTEST FAIL\n")
        write_text_atomic(run_dir / PERFORMANCE_FILE, f"{note}\nTEST FAIL\n")
        verdict.problems.append(note)
        return verdict
    audit_records = read_log_records(run_dir / ACCURACY_LOG)
    reference_records = read_log_records(accuracy_run / ACCURACY_LOG)
    audit_entries = payloads_of(audit_records, run_dir / ACCURACY_LOG)
    reference_entries = payloads_of(reference_records, accuracy_run / ACCURACY_LOG)
    lines, matched, mismatches = compare_answers(reference_entries, audit_entries, context.response_dtype)
    verdict.samples = len(audit_entries)
    verdict.accuracy_passed = mismatches == 0 and matched > 0
    write_text_atomic(
        run_dir / VERIFY_FILE,
        "\n".join([*lines, "TEST PASS" if verdict.accuracy_passed else "TEST FAIL"]) + "\n\n",
    )
    if not verdict.accuracy_passed:
        verdict.problems.append(f"{mismatches} of {matched} logged answers differ from the accuracy run's")
        sampled = {entry.qsl_idx for entry in audit_entries}
        baseline = [
            record
            for record, entry in zip(reference_records, reference_entries, strict=True)
            if entry.qsl_idx in sampled
        ]
        _score_both(run_dir, baseline, context, verdict)
    performance_lines, verdict.performance_passed = compare_performance(
        performance_run / DETAIL_LOG, run_dir / DETAIL_LOG
    )
    write_text_atomic(run_dir / PERFORMANCE_FILE, "\n".join(performance_lines) + "\n")
    if not verdict.performance_passed:
        verdict.problems.append(performance_lines[-1])
    return verdict


def _score_both(run_dir: Path, baseline: list, context: AuditContext, verdict: Test01Verdict) -> None:
    """The fallback for non-deterministic answers: the accuracy of the audit's samples in both runs
    (`baseline`: the accuracy run's records of those samples, as it logged them)."""
    if context.accuracy_report is None:
        verdict.problems.append(
            "the answers cannot be scored (no tokenizer), so there is no accuracy fallback"
        )
        return
    baseline_dir = run_dir / _BASELINE_FOLDER
    baseline_dir.mkdir(exist_ok=True)
    write_text_atomic(baseline_dir / ACCURACY_LOG, json.dumps(baseline, indent=0) + "\n")
    try:
        baseline_text = context.accuracy_report(baseline_dir / ACCURACY_LOG).accuracy_txt()
        compliance_text = context.accuracy_report(run_dir / ACCURACY_LOG).accuracy_txt()
    except SubmitterError as problem:
        verdict.problems.append(f"the accuracy fallback could not be scored: {problem}")
        return
    write_text_atomic(run_dir / "baseline_accuracy.txt", baseline_text)
    write_text_atomic(run_dir / "compliance_accuracy.txt", compliance_text)
    # Whether the two are within the delta is the checker's call (COMP-TEST01); the test itself failed.
