"""Compliance rules: the audits a round requires of each benchmark (checker.md §9).

What each test leaves behind and what its verification must say is data (`[compliance.TESTxx]` in the
packs); the performance runs of TEST01 and TEST04 are judged by the performance rules themselves. The
open division is not audited, except endpoints-format results, whose audit files the official checker
reads in every division.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

from compliance.registry import VerifierBounds, verifier_bounds
from submitter.check.context import RESULT_RULES, ResultContext
from submitter.check.load import AuditFiles
from submitter.check.rules.structure import file_set
from submitter.fileformats.accuracy_txt import metric_pattern
from submitter.rounds.models import AuditRules, Scenario
from submitter.rule_registry import Problem, Severity

rule = RESULT_RULES.rule


def _audits(ctx: ResultContext) -> Iterator[tuple[AuditFiles, AuditRules]]:
    """The LoadGen audits the check holds a result to (ResultContext.required_audits), with their rules."""
    for test in ctx.required_audits:
        yield ctx.files.audits[test], ctx.rules.compliance[test]


def _lines(text: str) -> set[str]:
    return {line.strip() for line in text.split("\n")}


def _passed(text: str | None, audit: AuditRules) -> bool:
    if text is None:
        return False
    return audit.pass_marker in _lines(text) if audit.pass_marker_is_line else audit.pass_marker in text


@rule("COMP-MISSING", Severity.ERROR, "every compliance test the round requires left its files")
def tests_present(ctx: ResultContext) -> Iterator[Problem]:
    for files, audit in _audits(ctx):
        if not files.exists:
            yield Problem(
                path=files.folder,
                message=f"{files.test} is missing",
                fix=f"run the {files.test} audit for this scenario and its verification script",
            )
        needed = [audit.verification_file, audit.performance_file]
        if audit.performance_run:
            needed.append(f"{audit.performance_run}/mlperf_log_detail.txt")
        for name in filter(None, needed):
            if files.exists and not ctx.index.has_file(f"{files.folder}/{name}"):
                yield Problem(
                    path=f"{files.folder}/{name}",
                    message="is missing",
                    fix=f"copy what the {files.test} audit and its verification script wrote",
                )


@rule("COMP-PASS", Severity.ERROR, "TEST07, TEST08 and TEST09 verifications say TEST PASS")
def verification_passed(ctx: ResultContext) -> Iterator[Problem]:
    for files, audit in _audits(ctx):
        if audit.required_lines or audit.accuracy_dir_files or audit.verification_file is None:
            continue  # TEST06 and TEST01 have rules of their own; TEST04 has no verification of accuracy
        if files.verification is not None and not _passed(files.verification, audit):
            yield Problem(
                path=f"{files.folder}/{audit.verification_file}",
                message=f"does not say '{audit.pass_marker}'",
                fix=f"fix what the {files.test} verification names and rerun the audit",
            )


@rule(
    "COMP-PERFORMANCE", Severity.ERROR, "TEST01/TEST04 performance verification passed with the audit's logs"
)
def performance_verified(ctx: ResultContext) -> Iterator[Problem]:
    for files, audit in _audits(ctx):
        if audit.performance_file is None:
            continue
        path = f"{files.folder}/{audit.performance_file}"
        text = files.performance_verification
        if text is not None and audit.pass_marker not in text:
            yield Problem(
                path=path,
                message=f"does not say '{audit.pass_marker}'",
                fix=f"the {files.test} run's performance differs from the result's; find out why and rerun",
            )
        if audit.performance_run:
            run, run_files = f"{files.folder}/{audit.performance_run}", ctx.rules.files
            yield from file_set(ctx, run, run_files.performance_required, run_files.performance_optional)


@rule("COMP-TEST01", Severity.ERROR, "TEST01 passed, or its accuracy is within the benchmark's delta")
def test01_passed(ctx: ResultContext) -> Iterator[Problem]:
    bench = ctx.bench
    for files, audit in _audits(ctx):
        if not audit.accuracy_dir_files or files.verification is None or _passed(files.verification, audit):
            continue
        folder = f"{files.folder}/accuracy"
        if not ctx.index.has_dir(folder):
            yield Problem(
                path=files.folder, message="did not pass and has no accuracy/ folder", fix="rerun TEST01"
            )
            continue
        present = set(ctx.index.files_in(folder)) - set(ctx.rules.files.always_optional)
        if present != set(audit.accuracy_dir_files):
            yield Problem(
                path=folder,
                message=f"holds {', '.join(sorted(present)) or 'nothing'}",
                fix=f"keep exactly {', '.join(audit.accuracy_dir_files)}",
            )
            continue
        if bench is not None:
            yield from _test01_accuracy(ctx, files, folder)


def _test01_accuracy(ctx: ResultContext, files: AuditFiles, folder: str) -> Iterator[Problem]:
    """The audit's accuracy against the baseline's, metric by metric (the last value each file prints)."""
    bench = ctx.bench
    assert bench is not None
    for bound in bench.accuracy.targets_for(ctx.scenario):
        pattern = metric_pattern(ctx.rules.accuracy_patterns[bound.metric])
        baseline, audited = (_last_value(pattern, text) for text in (files.baseline, files.compliance))
        if not baseline or not audited:
            yield Problem(
                path=folder,
                field=bound.metric,
                message="baseline_accuracy.txt or compliance_accuracy.txt does not report it",
                fix="rerun TEST01's verification, which writes both",
            )
            return
        delta = abs(1 - baseline / audited) * 100
        allowed = bench.accuracy.audit_delta(bound.metric)
        if delta > allowed:
            yield Problem(
                path=folder,
                field=bound.metric,
                message=f"differs by {delta:.3f} % between the baseline ({baseline}) and the audit "
                f"({audited}); {allowed} % is allowed",
                fix="the run is not deterministic enough in performance mode; find out why and rerun",
            )
            return


def _last_value(pattern: re.Pattern[str], text: str | None) -> float:
    value = 0.0
    for line in (text or "").split("\n"):
        if match := pattern.match(line):
            try:
                value = float(match.group(1))
            except ValueError:
                return 0.0
    return value


@rule("COMP-TEST06", Severity.ERROR, "the TEST06 verification passed every check")
def test06_passed(ctx: ResultContext) -> Iterator[Problem]:
    for files, audit in _audits(ctx):
        if not audit.required_lines or files.verification is None:
            continue
        path = f"{files.folder}/{audit.verification_file}"
        lines = _lines(files.verification)
        for required in audit.required_lines:
            if required not in lines:
                yield Problem(
                    path=path,
                    message=f"lacks '{required}'",
                    fix="fix the harness output (EOS handling, token counts) and rerun the TEST06 audit",
                )
        if audit.first_token_pass not in lines and audit.first_token_skipped not in lines:
            yield Problem(
                path=path,
                message=f"lacks '{audit.first_token_pass}'",
                fix="report the first token's real id to FirstTokenComplete and rerun the TEST06 audit",
            )


@rule("COMP-TEST06-SKIPPED", Severity.ERROR, "only Offline skips TEST06's first-token check (stricter)")
def test06_skipped(ctx: ResultContext) -> Iterator[Problem]:
    for files, audit in _audits(ctx):
        if not audit.required_lines or files.verification is None or ctx.scenario is Scenario.OFFLINE:
            continue
        lines = _lines(files.verification)
        if audit.first_token_skipped in lines and audit.first_token_pass not in lines:
            yield Problem(
                path=f"{files.folder}/{audit.verification_file}",
                message=f"says '{audit.first_token_skipped}' in a {ctx.files.entry.scenario} result; "
                "only Offline may skip it",
                fix=f"run the verification with -s {ctx.files.entry.scenario}",
            )


@rule("COMP-TEST06-LOG", Severity.WARNING, "the TEST06 accuracy log is kept beside its verification")
def test06_log_kept(ctx: ResultContext) -> Iterator[Problem]:
    for files, audit in _audits(ctx):
        path = f"{files.folder}/accuracy/mlperf_log_accuracy.json"
        if audit.required_lines and files.verification is not None and not ctx.index.has_file(path):
            yield Problem(
                path=path,
                message="is missing; reviewers cannot recheck the audit",
                fix="copy the audit run's mlperf_log_accuracy.json (run_verification.py does)",
            )


@rule("COMP-ENDPOINTS-AUDIT", Severity.ERROR, "an endpoints result's audit files name their test and passed")
def endpoints_audits(ctx: ResultContext) -> Iterator[Problem]:
    bench = ctx.bench
    if not ctx.endpoints or bench is None:
        return
    for test in bench.compliance_tests:
        audit = ctx.rules.compliance.get(test)
        if audit is None or audit.endpoints_name is None:
            continue
        path = f"{ctx.path}/audit/audit_{audit.endpoints_name}.json"
        found = ctx.files.endpoints_audits.get(audit.endpoints_name)
        if found is None:
            if audit.endpoints_required:
                yield Problem(path=path, message="is missing", fix=f"run the {test} audit")
            continue
        if found.problem:
            message = found.problem
        elif found.test != audit.endpoints_name:
            message = f"names test {found.test!r}, expected {audit.endpoints_name!r}"
        elif not found.passed:
            message = "did not pass"
        else:
            continue
        yield Problem(path=path, message=message, fix=f"rerun the {test} audit")


@rule("COMP-OUTPUT-LENGTH", Severity.ERROR, "TEST09: an endpoints run's mean output length is in range")
def endpoints_output_length(ctx: ResultContext) -> Iterator[Problem]:
    bench, log = ctx.bench, ctx.files.performance_log
    if not ctx.endpoints or bench is None or log is None:
        return
    for test in bench.compliance_tests:
        audit = ctx.rules.compliance.get(test)
        if audit is None or audit.mean_output_tokens_range is None:
            continue
        low, high = audit.mean_output_tokens_range
        mean = log.get("mean_output_tokens")
        if not isinstance(mean, int | float) or isinstance(mean, bool) or not low <= mean <= high:
            yield Problem(
                path=log.path,
                field="mean_output_tokens",
                message=f"is {mean!r}; {test} needs a mean output length in [{low}, {high}]",
                fix="the model's answers are too short or too long: check its generation settings",
            )


# --- audit evidence the official checker takes on faith (stricter) ------------------------------------------
# The official checker looks only for "TEST PASS" in TEST07's and TEST09's verifications and never reads the
# audits' performance logs; what those files print is judged here against the official audit.config.

# The keys of the official audit.config that the verification scripts judge by.
TEST07_THRESHOLD_KEY = "test07_accuracy_threshold"
TEST09_BOUND_KEYS = ("test09_min_output_tokens", "test09_max_output_tokens")
# What the official run_verification.py scripts print (the last line of each counts: TEST07 appends its
# summary after the accuracy script's own output); TEST07_SCORE_FALLBACK is its default --score-pattern.
TEST07_SCORE = re.compile(r"^\s*Accuracy score:\s*(\S+)\s*$", re.MULTILINE)
TEST07_THRESHOLD = re.compile(r"^\s*Accuracy threshold:\s*(\S+)\s*$", re.MULTILINE)
TEST07_SCORE_FALLBACK = re.compile(r"'exact_match':\s*([\d.]+)")
TEST09_MEAN = re.compile(r"^\s*Mean output tokens:\s*(\S+)\s*$", re.MULTILINE)
TEST09_MIN = re.compile(r"^\s*Min threshold:\s*(\S+)", re.MULTILINE)
TEST09_MAX = re.compile(r"^\s*Max threshold:\s*(\S+)", re.MULTILINE)
# What LoadGen requires of a VALID run, each logged as a boolean beside result_validity.
VALIDITY_CONDITIONS = (
    "result_min_duration_met",
    "result_min_queries_met",
    "result_perf_constraints_met",
    "early_stopping_met",
)
# The audit whose verification scores the answers it logged, so its accuracy log is the evidence.
SCORED_AUDIT = "TEST07"
ACCURACY_LOG = "accuracy/mlperf_log_accuracy.json"


def _printed(pattern: re.Pattern[str], text: str, first: bool = False) -> float | None:
    """The last (or first) number the pattern finds; None where there is none to read."""
    found = pattern.findall(text)
    if not found:
        return None
    try:
        value = float(found[0] if first else found[-1])
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _passed_verifications(
    ctx: ResultContext, key: str
) -> Iterator[tuple[AuditFiles, AuditRules, VerifierBounds]]:
    """Audits whose verification says it passed, with the official bounds that include `key`."""
    bench = ctx.bench
    if bench is None:
        return
    for files, audit in _audits(ctx):
        if files.verification is None or not _passed(files.verification, audit):
            continue  # COMP-MISSING or COMP-PASS report it
        bounds = verifier_bounds(files.test, bench.name)
        if bounds is not None and key in bounds.values:
            yield files, audit, bounds


@rule(
    "COMP-TEST09-LENGTH",
    Severity.ERROR,
    "a TEST09 verification that passed has a mean output length within the audit.config's bounds (stricter)",
)
def test09_length_in_bounds(ctx: ResultContext) -> Iterator[Problem]:
    low_key, high_key = TEST09_BOUND_KEYS
    for files, audit, bounds in _passed_verifications(ctx, low_key):
        text = files.verification or ""
        mean, low, high = _printed(TEST09_MEAN, text), bounds.values[low_key], bounds.values.get(high_key)
        if mean is None or high is None or low <= mean <= high:
            continue
        claimed = (_printed(TEST09_MIN, text), _printed(TEST09_MAX, text))
        other = None not in claimed and claimed != (low, high)
        checked = f"; it was checked against [{claimed[0]}, {claimed[1]}]" if other else ""
        yield Problem(
            path=f"{files.folder}/{audit.verification_file}",
            field="Mean output tokens",
            message=f"says '{audit.pass_marker}' with a mean output length of {mean} tokens, outside "
            f"[{low}, {high}] ({low_key}, {high_key} in {bounds.source}){checked}",
            fix="generate answers of the reference's length (max output tokens, stop and EOS handling), "
            f"rerun the audit and verify it with --audit-config {bounds.source}",
        )


@rule(
    "COMP-TEST07-SCORE",
    Severity.ERROR,
    "a TEST07 verification that passed reached the audit.config's threshold, checked against it (stricter)",
)
def test07_score_reaches_threshold(ctx: ResultContext) -> Iterator[Problem]:
    for files, audit, bounds in _passed_verifications(ctx, TEST07_THRESHOLD_KEY):
        text = files.verification or ""
        required = bounds.values[TEST07_THRESHOLD_KEY]
        score = _printed(TEST07_SCORE, text)
        if score is None:  # no summary line: the first score the official script's pattern finds
            score = _printed(TEST07_SCORE_FALLBACK, text, first=True)
        checked = _printed(TEST07_THRESHOLD, text)
        where = f"{TEST07_THRESHOLD_KEY} in {bounds.source}"
        path = f"{files.folder}/{audit.verification_file}"
        if score is not None and score < required:
            yield Problem(
                path=path,
                field="Accuracy score",
                message=f"says '{audit.pass_marker}' with an accuracy score of {score}, under the audit's "
                f"threshold {required} ({where})",
                fix="the answers logged in performance mode are less accurate than the accuracy run's: "
                "find out why (generation settings, dataset), rerun the audit and verify it",
            )
        if checked is not None and checked != required:
            yield Problem(
                path=path,
                field="Accuracy threshold",
                message=f"was checked against a threshold of {checked}, not the audit's {required} ({where})",
                fix=f"rerun run_verification.py with --audit-config {bounds.source} and no "
                "--accuracy-threshold",
            )


@rule("COMP-TEST07-LOG", Severity.ERROR, "TEST07 keeps the accuracy log its verification scored (stricter)")
def test07_log_kept(ctx: ResultContext) -> Iterator[Problem]:
    for files, audit in _audits(ctx):
        path = f"{files.folder}/{ACCURACY_LOG}"
        if files.test == SCORED_AUDIT and files.exists and not ctx.index.has_file(path):
            yield Problem(
                path=path,
                message=f"is missing: without it the score in {audit.verification_file} cannot be "
                "rechecked (TEST07's README lists it among the files that must be submitted)",
                fix="copy the audit run's mlperf_log_accuracy.json into TEST07/accuracy/ "
                "(run_verification.py does), truncated like the others",
            )


@rule(
    "COMP-AUDIT-VALIDITY",
    Severity.ERROR,
    "LoadGen judged the TEST01/TEST04 audits' performance runs VALID (stricter)",
)
def audit_runs_valid(ctx: ResultContext) -> Iterator[Problem]:
    """Both verify_performance.py scripts fail an INVALID audit run; the official checker never asks."""
    for files, audit in _audits(ctx):
        log = files.performance_log
        if log is None or log.problems or not audit.performance_run:
            continue  # PERF-LOG reports a missing or unreadable audit log
        validity = log.get("result_validity")
        if validity == "VALID":
            continue
        failed = [key for key in VALIDITY_CONDITIONS if log.get(key) is False]
        why = f" ({', '.join(f'{key} is false' for key in failed)})" if failed else ""
        judged = (
            f"is {validity!r}: LoadGen judged the {files.test} audit's performance run invalid{why}"
            if validity is not None
            else f"is missing: LoadGen logged no verdict on the {files.test} audit's performance run (it did "
            "not finish, or the log was cut)"
        )
        yield Problem(
            path=f"{files.folder}/{audit.performance_run}/mlperf_log_detail.txt",
            field="result_validity",
            line=log.line_of("result_validity"),
            message=judged,
            fix=f"rerun the {files.test} audit until its summary says 'Result is : VALID' (that section "
            "names what failed), then its verification",
        )
