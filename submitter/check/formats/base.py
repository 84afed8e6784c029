"""What every format of `check` writes from: the report, the findings reported, each result's standing.

Findings name files relative to the tree's root (the folder holding closed/ open/ network/); formats for
CI (github, sarif, junit) name them from the current directory instead, where the CI job runs, so that an
annotation lands on the file in the repository.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from submitter.check.checker import CheckReport
from submitter.check.context import system_json_path
from submitter.check.load import EntryFiles
from submitter.check.selection import (
    ResultScope,
    ScopeIndex,
    SelectorLayer,
    ignored_causes,
    split_findings,
)
from submitter.check.summary import ResultRow
from submitter.rounds.models import RoundRules
from submitter.rule_registry import Finding, Severity


class RuleInfo(NamedTuple):
    """A rule as `check` reports it (`submitter rules` lists the same)."""

    summary: str
    severity: Severity  # its severity in `check`, before --strict


@dataclass(frozen=True)
class ResultOutcome:
    row: ResultRow
    scope: ResultScope
    errors: tuple[Finding, ...]  # reported errors that concern it
    warnings: tuple[Finding, ...]  # reported warnings that concern it
    ignored_rules: tuple[str, ...]  # not reported, and the only cause of its INVALID verdict

    @property
    def invalid_only_by_ignored_rules(self) -> bool:
        return bool(self.ignored_rules)

    @property
    def verdict_text(self) -> str:
        if self.row.valid:
            return "valid"
        if self.ignored_rules:
            # Two ids and a count keep the table readable; the JSON report lists them all.
            shown = ", ".join(self.ignored_rules[:2])
            more = len(self.ignored_rules) - 2
            return f"INVALID (ignored rules: {shown}{f' +{more} more' if more > 0 else ''})"
        return "INVALID"


@dataclass(frozen=True)
class CheckOutput:
    report: CheckReport
    reported: tuple[Finding, ...]
    not_reported: tuple[Finding, ...]
    results: tuple[ResultOutcome, ...]
    tree_findings: tuple[Finding, ...]  # reported findings that concern no result (layout, hygiene, ...)
    layers: tuple[SelectorLayer, ...]
    rules: Mapping[str, RuleInfo]  # every rule of `check`
    root_from_cwd: str  # the tree's root relative to the current directory, POSIX ("." when it is)
    tree_argument: str  # PATH as the user wrote it
    quiet: bool = False
    color: bool = False
    seconds: float = 0.0  # how long the check took

    @property
    def errors(self) -> int:
        return sum(finding.severity is Severity.ERROR for finding in self.reported)

    @property
    def warnings(self) -> int:
        return sum(finding.severity is Severity.WARNING for finding in self.reported)

    @property
    def hidden_invalid(self) -> tuple[ResultOutcome, ...]:
        return tuple(result for result in self.results if result.invalid_only_by_ignored_rules)

    def location(self, tree_path: str) -> str:
        """A tree-relative path from the current directory (POSIX, normalised: "." for the root)."""
        return posixpath.normpath(posixpath.join(self.root_from_cwd, tree_path))


def root_from_cwd(scope_root: Path, cwd: Path | None = None) -> str:
    """The tree's root relative to the current directory. The root is resolved (links followed), and so is
    the current directory (getcwd), so the relative path reaches the very files the checker read."""
    here = os.path.realpath(cwd or Path.cwd())
    return Path(os.path.relpath(scope_root, here)).as_posix()


def result_scope(files: EntryFiles, rules: RoundRules) -> ResultScope:
    entry = files.entry
    return ResultScope(
        id=entry.id,
        results_dir=files.results_dir,
        other_dirs=(files.measurements_dir, files.compliance_dir),
        system_json=system_json_path(rules, *entry.system_key),
    )


def result_outcomes(
    report: CheckReport, reported: Sequence[Finding], hidden: Sequence[Finding]
) -> tuple[tuple[ResultOutcome, ...], tuple[Finding, ...]]:
    """Each result with the findings that concern it (report.results and report.entries are in the same
    order), and the reported findings that concern no result."""
    scopes = [result_scope(files, report.rules) for files in report.entries]
    index = ScopeIndex(scopes)
    mine: list[list[Finding]] = [[] for _ in scopes]
    hidden_mine: list[list[Finding]] = [[] for _ in scopes]
    unattached = []
    for finding in reported:
        concerned = index.concerned(finding)
        for position in concerned:
            mine[position].append(finding)
        if not concerned:
            unattached.append(finding)
    for finding in hidden:
        for position in index.concerned(finding):
            hidden_mine[position].append(finding)
    outcomes = tuple(
        ResultOutcome(
            row=row,
            scope=scope,
            errors=tuple(f for f in own if f.severity is Severity.ERROR),
            warnings=tuple(f for f in own if f.severity is Severity.WARNING),
            ignored_rules=ignored_causes(row.valid, own, own_hidden),
        )
        for row, scope, own, own_hidden in zip(report.results, scopes, mine, hidden_mine, strict=True)
    )
    return outcomes, tuple(unattached)


def build_output(
    report: CheckReport,
    layers: Sequence[SelectorLayer],
    rules: Mapping[str, RuleInfo],
    *,
    root: str,
    tree_argument: str,
    quiet: bool = False,
    color: bool = False,
    seconds: float = 0.0,
) -> CheckOutput:
    reported, hidden = split_findings(report.findings, layers)
    results, tree_findings = result_outcomes(report, reported, hidden)
    return CheckOutput(
        report=report,
        reported=tuple(reported),
        not_reported=tuple(hidden),
        results=results,
        tree_findings=tree_findings,
        layers=tuple(layers),
        rules=rules,
        root_from_cwd=root,
        tree_argument=tree_argument,
        quiet=quiet,
        color=color,
        seconds=seconds,
    )


def finding_text(finding: Finding) -> str:
    """A finding without its file and rule (which annotations carry apart): field, what, and the fix."""
    subject = f"{finding.field}: " if finding.field else ""
    return f"{subject}{finding.message}; fix: {finding.fix}"
