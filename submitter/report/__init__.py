"""`submitter report`: the review documents of a submission tree, review.md and review.html.

    written = write_review(Path("closed/RedHat"), Path("review"))

The pipeline is visible in the modules: `collect` reads the tree once (with the checker's own loader and
verdicts) into the types of `model`; `headroom` judges each number against the round in pure functions;
`plots` draws the charts as inline SVG; `render` fills `templates/review.{md,html}.j2`. Only this module
writes files, each atomically.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from submitter.errors import UsageProblem
from submitter.fileio import write_text_atomic
from submitter.report.collect import build_review
from submitter.report.model import Review
from submitter.report.render import render_html, render_markdown

MARKDOWN_NAME = "review.md"
HTML_NAME = "review.html"


@dataclass(frozen=True)
class WrittenReview:
    review: Review
    markdown: Path
    html: Path


def write_review(tree: Path, out: Path, round_name: str | None = None) -> WrittenReview:
    """Review the tree at `tree` and write review.md and review.html into the folder `out`."""
    if out.exists() and not out.is_dir():
        raise UsageProblem(f"{out} is a file; --out names the folder that receives review.md and review.html")
    review = build_review(tree, round_name)
    markdown, html = out / MARKDOWN_NAME, out / HTML_NAME
    # Render both before writing either, so a failure leaves the previous pair as it was.
    markdown_text, html_text = render_markdown(review), render_html(review)
    write_text_atomic(markdown, markdown_text)
    write_text_atomic(html, html_text)
    return WrittenReview(review, markdown, html)


__all__ = ["WrittenReview", "build_review", "render_html", "render_markdown", "write_review"]
