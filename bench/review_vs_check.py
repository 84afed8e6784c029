"""One judge on published trees: `submitter report` gives every result `submitter check`'s verdict, figure and
unit, and no failed item where the check accepts the result.

    python bench/review_vs_check.py /path/to/inference_results_v5.1 /path/to/inference_results_v6.0

Every `closed/` and `open/` submitter folder of each results repository is checked and reviewed in its
detected round; the assertion is tests/one_judge.py's, which the test suite applies to the trees it builds.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from one_judge import assert_review_agrees


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("repositories", nargs="+", type=Path, help="results repositories (checked out)")
    args = parser.parse_args()
    results = trees = 0
    failures = []
    began = time.perf_counter()
    for repository in args.repositories:
        for tree in sorted(p for division in ("closed", "open") for p in (repository / division).glob("*")):
            if not tree.is_dir():
                continue
            try:
                results += assert_review_agrees(tree)
                trees += 1
            except AssertionError as exc:
                failures.append(f"{tree}: {exc}")
    seconds = time.perf_counter() - began
    print(
        f"{trees} trees, {results} results: the review's verdict, figure and unit are the check's; "
        f"{len(failures)} tree(s) disagree; {seconds:.0f} s"
    )
    for failure in failures:
        print(failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
