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

# What submitter writes for its user's own work, never for MLCommons: found inside a tree, it does not belong
# in the upload (HYG-WORK-FILE).
REVIEW_DOCUMENTS = ("review.md", "review.html")  # `report` writes both into one folder
STAGING_SUFFIX = "-staging"  # `stage` keeps the full accuracy logs and manifest.json in <out>-staging/
STAGING_MANIFEST = "manifest.json"
ARCHIVE_COMPANIONS = (".tar.gz.sha256", ".manifest.json")  # `package` writes them beside NAME.tar.gz
