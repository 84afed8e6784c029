"""The one-judge invariant, asserted on any tree a test builds: `submitter report` gives every result the
verdict `submitter check` gives it, and shows no failed item on a result the check accepts."""

from __future__ import annotations

from pathlib import Path

from submitter.check.checker import check_tree
from submitter.report import build_review
from submitter.report.model import Status


def assert_review_agrees(path: Path, round_name: str | None = None) -> int:
    """Check and review the tree at `path`; returns how many results were compared."""
    report = check_tree(path, round_name)
    review = build_review(path, round_name)
    verdicts = {
        (r.division, r.submitter, f"{r.system}/{r.benchmark}/{r.scenario}"): r for r in report.results
    }
    reviewed = {(r.division, r.submitter, r.id): r for r in review.results}
    assert set(reviewed) == set(verdicts)
    for key, result in reviewed.items():
        row = verdicts[key]
        assert (result.valid, result.metric, result.units) == (row.valid, row.metric, row.units), key
        assert (result.status is Status.FAIL) == (not row.valid), (key, result.status)
        if row.valid:
            headroom = result.headroom
            items = (*headroom.accuracy, *headroom.windows, *headroom.latency, *headroom.test06)
            failed = [item for item in items if item.status is Status.FAIL]
            assert failed == [], (key, failed)
    return len(reviewed)
