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

from submitter.check.tree import Scope, locate
from submitter.fileio import CannotWrite, ensure_writable, write_text_atomic
from submitter.report.collect import build_review
from submitter.report.model import Review
from submitter.report.render import render_html, render_markdown
from submitter.workspace import REVIEW_DOCUMENTS

MARKDOWN_NAME, HTML_NAME = REVIEW_DOCUMENTS


@dataclass(frozen=True)
class WrittenReview:
    review: Review
    markdown: Path
    html: Path


def write_review(tree: Path, out: Path, round_name: str | None = None) -> WrittenReview:
    """Review the tree at `tree` and write review.md and review.html into the folder `out`."""
    check_destination(locate(tree), out)
    review = build_review(tree, round_name)
    markdown, html = out / MARKDOWN_NAME, out / HTML_NAME
    # Render both before writing either, so a failure leaves the previous pair as it was.
    markdown_text, html_text = render_markdown(review), render_html(review)
    write_text_atomic(markdown, markdown_text)
    write_text_atomic(html, html_text)
    return WrittenReview(review, markdown, html)


def check_destination(scope: Scope, out: Path) -> None:
    """`out` can take the review (missing folders are made) and lies outside the reviewed tree, where
    the review would become part of what is packaged and uploaded. Raises CannotWrite (exit 2)."""
    resolved = out.resolve()
    for top in reviewed_folders(scope):
        if resolved == top or top in resolved.parents:
            raise CannotWrite(
                out,
                f"it lies inside the tree being reviewed ({top}), so the review would be packaged with it",
                "choose a folder outside the tree (the default is work/review)",
            )
    ensure_writable(out, folder=True, make_parents=True)
    for name in (MARKDOWN_NAME, HTML_NAME):
        ensure_writable(out / name, make_parents=True)


def reviewed_folders(scope: Scope) -> list[Path]:
    """The folders whose contents the review covers, as `package` names what it archives."""
    folders = [scope.root / division for division in scope.divisions]
    if scope.submitter is not None:
        return [folder / scope.submitter for folder in folders]
    if len(scope.divisions) > 1:
        folders.append(scope.root)  # the whole tree, with the documents beside its divisions
    return folders


__all__ = ["WrittenReview", "build_review", "render_html", "render_markdown", "write_review"]
