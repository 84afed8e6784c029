"""`submitter check`: check a submission tree like the official checker, only stricter and clearer."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from submitter.check.checker import check_tree
from submitter.check.summary import csv_text
from submitter.cli.output import echo_findings, echo_json, echo_table
from submitter.fileio import write_text_atomic
from submitter.rounds.registry import available_rounds
from submitter.rules import findings_as_json

# 2: results name their division and submitter, and findings name their result with both.
JSON_SCHEMA_VERSION = 2


@click.command("check")
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--round",
    "round_name",
    type=click.Choice(available_rounds()),
    help="The round the tree is for; detected from the logs and layout when omitted.",
)
@click.option("--submitter", help="Check only this submitter's folder.")
@click.option(
    "--csv",
    "csv_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the official summary.csv of the valid results here.",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Hold warnings (wording, hygiene, extra files: form, not the runs) as errors, as package does.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
def check(
    path: Path,
    round_name: str | None,
    submitter: str | None,
    csv_path: Path | None,
    strict: bool,
    as_json: bool,
) -> None:
    """Check the submission tree at PATH: a root holding closed/ open/ network/, a division, or one
    submitter folder such as closed/RedHat. Exit 1 when any error is found (warnings too with --strict)."""
    report = check_tree(path, round_name, submitter, strict=strict)
    if report.detection is not None:
        click.echo(f"round {report.rules.name} detected: {report.detection.reason}", err=True)
    if csv_path is not None:
        write_text_atomic(csv_path, csv_text(report.results))
    if as_json:
        echo_json(
            {
                "schema_version": JSON_SCHEMA_VERSION,
                "round": report.rules.name,
                "strict": report.strict,
                "detected": None if report.detection is None else report.detection.reason,
                "findings": findings_as_json(report.findings),
                "results": [row.as_json() for row in report.results],
            }
        )
    else:
        echo_findings(report.findings, files_checked=None)
        echo_table(
            [
                (
                    r.system,
                    r.benchmark,
                    r.scenario,
                    "" if r.metric is None else f"{r.metric:g}",
                    r.units or "",
                    "valid" if r.valid else "INVALID",
                )
                for r in report.results
            ],
            headers=("system", "benchmark", "scenario", "metric", "units", "verdict"),
        )
    if report.errors:
        sys.exit(1)
