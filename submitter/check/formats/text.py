"""The text report: one line per finding, a count, and the results table (with --quiet, the findings and
the count only, and nothing at all when nothing is reported)."""

from __future__ import annotations

import click

from submitter.check.formats.base import CheckOutput
from submitter.check.printable import printable
from submitter.cli.output import format_table
from submitter.rule_registry import Finding, Severity

RESULT_HEADERS = ("system", "benchmark", "scenario", "metric", "units", "verdict")


def format_text(output: CheckOutput) -> str:
    if output.quiet and not output.reported:
        return ""
    lines = [_finding_line(finding, output.color) for finding in output.reported]
    lines.append(count_line(output))
    if not output.quiet:
        lines.append(results_table(output))
    return printable("\n".join(lines))


def _finding_line(finding: Finding, color: bool) -> str:
    if not color:
        return finding.render()
    return click.style(finding.render(), fg="red" if finding.severity is Severity.ERROR else "yellow")


def count_line(output: CheckOutput) -> str:
    """The count ("2 error(s), 1 warning(s)") and what the selection left out: a narrowed report says so."""
    line = f"{output.errors} error(s), {output.warnings} warning(s)"
    if output.not_reported:
        line += f"; {len(output.not_reported)} finding(s) of ignored rules not shown"
    if output.hidden_invalid:
        line += f"; {len(output.hidden_invalid)} result(s) INVALID only by ignored rules"
    return line


def results_table(output: CheckOutput) -> str:
    rows = [
        (
            result.row.system,
            result.row.benchmark,
            result.row.scenario,
            "" if result.row.metric is None else f"{result.row.metric:g}",
            result.row.units or "",
            result.verdict_text,
        )
        for result in output.results
    ]
    return format_table(rows, headers=RESULT_HEADERS)
