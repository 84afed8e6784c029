"""Compliance rules: the audits a round requires for each benchmark (checker.md §9)."""

from __future__ import annotations

from collections.abc import Iterator

from submitter.check.context import RESULT_RULES, ResultContext
from submitter.rounds.models import Scenario
from submitter.rules import Problem, Severity

rule = RESULT_RULES.rule


def _required_tests(ctx: ResultContext) -> tuple[str, ...]:
    # The open division is not audited (the official checker passes it).
    return ctx.bench.compliance_tests if ctx.bench is not None and ctx.closed else ()


@rule("COMP-MISSING", Severity.ERROR, "every compliance test the round requires is present")
def tests_present(ctx: ResultContext) -> Iterator[Problem]:
    for test in _required_tests(ctx):
        verification = ctx.rules.compliance.get(test)
        folder = f"{ctx.files.compliance_dir}/{test}"
        name = verification.verification_file if verification else "verify_*.txt"
        if not ctx.index.has_file(f"{folder}/{name}"):
            yield Problem(
                path=folder,
                message=f"{test}/{name} is missing",
                fix=f"run the {test} audit for this scenario and its verification script",
            )


@rule("COMP-TEST06", Severity.ERROR, "the TEST06 verification passed every check")
def test06_passed(ctx: ResultContext) -> Iterator[Problem]:
    text = ctx.files.test06_verification
    verification = ctx.rules.compliance.get("TEST06")
    if "TEST06" not in _required_tests(ctx) or text is None or verification is None:
        return
    path = f"{ctx.files.compliance_dir}/TEST06/{verification.verification_file}"
    lines = {line.strip() for line in text.splitlines()}
    for required in verification.required_lines:
        if required not in lines:
            yield Problem(
                path=path,
                message=f"lacks '{required}'",
                fix="fix the harness output (EOS handling, token counts) and rerun the TEST06 audit",
            )
    if verification.first_token_pass in lines:
        return
    if verification.first_token_skipped in lines:
        if ctx.scenario is not Scenario.OFFLINE:
            yield Problem(
                path=path,
                message=f"says '{verification.first_token_skipped}' in a "
                f"{ctx.files.entry.scenario} result; only Offline may skip it",
                fix=f"run the verification with -s {ctx.files.entry.scenario}",
            )
        return
    yield Problem(
        path=path,
        message=f"lacks '{verification.first_token_pass}'",
        fix="report the first token's real id to FirstTokenComplete and rerun the TEST06 audit",
    )


@rule("COMP-TEST06-LOG", Severity.WARNING, "the TEST06 accuracy log is kept beside its verification")
def test06_log_kept(ctx: ResultContext) -> Iterator[Problem]:
    if "TEST06" not in _required_tests(ctx):
        return
    path = f"{ctx.files.compliance_dir}/TEST06/accuracy/mlperf_log_accuracy.json"
    if ctx.index.has_file(
        f"{ctx.files.compliance_dir}/TEST06/verify_accuracy.txt"
    ) and not ctx.index.has_file(path):
        yield Problem(
            path=path,
            message="is missing; reviewers cannot recheck the audit",
            fix="copy the audit run's mlperf_log_accuracy.json (run_verification.py does)",
        )
