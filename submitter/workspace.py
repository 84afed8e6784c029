"""Where commands put their outputs when not told: one folder, `work/`, that git ignores.

Runs, the staged tree, the review and the archives of a checkout all land there, so a checkout stays
clean (runs record `git.dirty: false`) and one `rm -r work` starts afresh.
"""

from __future__ import annotations

from pathlib import Path

WORK = Path("work")
RUNS = WORK / "runs"  # run, run-all, tune-qps, stage read them
SUBMISSION = WORK / "submission"  # stage writes the tree
REVIEW = WORK / "review"  # report writes review.md and review.html
DIST = WORK / "dist"  # package writes NAME.tar.gz, its sha256 file and manifest
