"""What every format of `check` writes from: the report, what the selection reports, and each result's standing.

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
    SelectorLayer,
    concerns,
    ignored_causes,
    split_findings,
)
from submitter.check.summary import ResultRow
from submitter.rounds.models import RoundRules
from submitter.rules import Finding, Severity


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
            return f"INVALID (ignored rules: {', '.join(self.ignored_rules)})"
        return "INVALID"


@dataclass(frozen=True)
class CheckOutput:
    report: CheckReport
    reported: tuple[Finding, ...]
    not_reported: tuple[Finding, ...]
    results: tuple[ResultOutcome, ...]
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
    def tree_findings(self) -> tuple[Finding, ...]:
        """Reported findings that concern no result (layout, hygiene, systems without results, ...)."""
        return tuple(f for f in self.reported if not any(concerns(f, r.scope) for r in self.results))

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
) -> tuple[ResultOutcome, ...]:
    """Each result (report.results and report.entries are in the same order) with what concerns it."""
    outcomes = []
    for row, files in zip(report.results, report.entries, strict=True):
        scope = result_scope(files, report.rules)
        mine = [finding for finding in reported if concerns(finding, scope)]
        outcomes.append(
            ResultOutcome(
                row=row,
                scope=scope,
                errors=tuple(f for f in mine if f.severity is Severity.ERROR),
                warnings=tuple(f for f in mine if f.severity is Severity.WARNING),
                ignored_rules=ignored_causes(row.valid, scope, mine, hidden),
            )
        )
    return tuple(outcomes)


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
    return CheckOutput(
        report=report,
        reported=tuple(reported),
        not_reported=tuple(hidden),
        results=result_outcomes(report, reported, hidden),
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
