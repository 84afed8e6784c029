"""`submitter report`: review.md and review.html for a submission tree (what internal reviewers read)."""

from __future__ import annotations

from pathlib import Path

import click

from submitter.cli.output import echo_json
from submitter.report import write_review
from submitter.rounds.registry import available_rounds
from submitter.workspace import REVIEW


@click.command("report")
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--out",
    default=REVIEW,
    show_default=True,
    type=click.Path(path_type=Path),
    help="Folder to write review.md and review.html into (created if missing; not inside the tree).",
)
@click.option(
    "--round",
    "round_name",
    type=click.Choice(available_rounds()),
    help="The round the tree is for; detected from the logs and layout when omitted.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the review's data as JSON on stdout.")
def report(path: Path, out: Path, round_name: str | None, as_json: bool) -> None:
    """Write the review of the submission tree at PATH (a root, a division or a submitter folder):
    results, headroom against every limit of the round, the system descriptions with their lint, and
    charts. Exit 0 once written: the review reports failures, it does not fail on them."""
    written = write_review(path, out, round_name)
    review = written.review
    if review.detected is not None:
        click.echo(f"round {review.round} detected: {review.detected}", err=True)
    if as_json:
        echo_json(review.model_dump(mode="json"))
    counts = review.counts
    click.echo(
        f"wrote {written.markdown} and {written.html}: {counts['valid']} of {counts['results']} result(s) "
        f"valid, {counts['errors']} error(s), {counts['warnings']} warning(s); results "
        f"{counts['pass']} pass, {counts['warn']} warn, {counts['fail']} fail",
        err=True,
    )
