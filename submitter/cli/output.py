"""How commands print: tables and findings for people on stdout, JSON on stdout with --json; and what the
commands that run a system share: the descriptor they run and its `--round` option."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

from submitter.rule_registry import Finding, Severity, count_by_severity

if TYPE_CHECKING:  # the descriptor's pydantic models cost start-up time that `check` never needs
    from submitter.systems.descriptor import SystemDescriptor


def echo_json(payload: Any) -> None:
    click.echo(json.dumps(payload, indent=2, ensure_ascii=False))


def echo_table(rows: Sequence[Sequence[object]], headers: Sequence[str]) -> None:
    click.echo(format_table(rows, headers))


def format_table(rows: Sequence[Sequence[object]], headers: Sequence[str]) -> str:
    """Columns as wide as their widest cell (a header and two more), two spaces apart, left-aligned."""
    cells = [[str(cell) for cell in row] for row in rows]
    widths = [
        max([len(header) + 2, *(len(row[index]) for row in cells if index < len(row))])
        for index, header in enumerate(headers)
    ]
    lines = [headers, ["-" * width for width in widths], *cells]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=False)).rstrip()
        for line in lines
    )


def echo_sourced_table(rows: Sequence[tuple[str, str, str]]) -> None:
    """(item, value, source) rows, with each distinct source printed once below as a numbered note."""
    notes: dict[str, int] = {}
    for _, _, source in rows:
        notes.setdefault(source, len(notes) + 1)
    echo_table(
        [(item, value, f"[{notes[source]}]") for item, value, source in rows],
        headers=("item", "value", "source"),
    )
    click.echo("\nsources:")
    for source, number in notes.items():
        click.echo(f"  [{number}] {source}")


def echo_findings(findings: Sequence[Finding], files_checked: int | None) -> None:
    for finding in findings:
        color = "red" if finding.severity is Severity.ERROR else "yellow"
        # click.echo drops the colour where stdout is no terminal (a pipe, a file, a test's runner).
        click.echo(click.style(finding.render(), fg=color))
    counts = count_by_severity(findings)
    scope = f"{files_checked} file(s) checked: " if files_checked is not None else ""
    click.echo(f"{scope}{counts[Severity.ERROR]} error(s), {counts[Severity.WARNING]} warning(s)")


Command = TypeVar("Command", bound=Callable[..., Any])


def run_round_option(command: Command) -> Command:
    """`--round` (as `round_name`) for the commands that run a system: the same for all of them."""
    from submitter.rounds.registry import available_rounds

    return click.option(
        "--round",
        "round_name",
        type=click.Choice(available_rounds()),
        help="Run in this round instead of the descriptor's (its seeds and rules; for benchmarks it has).",
    )(command)


def runnable_descriptor(system_id: str, round_name: str | None = None) -> SystemDescriptor:
    """The descriptor a command runs on (refused with exit 2 while it has errors), in `round_name` if
    given; its warnings on stderr."""
    from submitter.systems.runnable import load_runnable_descriptor

    runnable = load_runnable_descriptor(system_id, round_name)
    for finding in runnable.warnings:
        click.echo(finding.render(), err=True)
    return runnable.descriptor
