"""How long `submitter check` takes on a tree, beside the official MLCommons checker.

    python bench/check_speed.py ../shared/fixtures/v5.1/closed/RedHat --round v5.1 \
        [--official "/path/to/venv/bin/python -m submission_checker.main" --official-cwd DIR]

Reports the median of N runs: `check_tree` in-process, the whole `submitter check` command (Python
start-up included), and, when given, the official checker's command on a copy of the same tree.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from submitter.check.checker import check_tree


def median_seconds(action, runs: int) -> float:  # type: ignore[no-untyped-def]
    timings = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        timings.append(time.perf_counter() - start)
    return statistics.median(timings)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("tree", type=Path, help="a submitter folder, e.g. closed/RedHat")
    parser.add_argument("--round", default="v5.1")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--official", help="command that runs the official checker's main module")
    parser.add_argument("--official-cwd", type=Path, help="folder to run the official command in")
    args = parser.parse_args()

    in_process = median_seconds(lambda: check_tree(args.tree, args.round), args.runs)
    command = [sys.executable, "-m", "submitter", "check", str(args.tree), "--round", args.round]
    whole = median_seconds(lambda: subprocess.run(command, capture_output=True, check=False), args.runs)
    print(f"submitter check_tree (in process): {in_process * 1000:.1f} ms (median of {args.runs})")
    print(f"submitter check (command):         {whole * 1000:.1f} ms (median of {args.runs})")
    if args.official:
        with tempfile.TemporaryDirectory() as root:
            # The official checker wants the root that holds closed/; give it a copy of just this submitter.
            shutil.copytree(args.tree, Path(root) / args.tree.parent.name / args.tree.name)
            official = [
                *shlex.split(args.official),
                "--input",
                root,
                "--version",
                args.round,
                "--csv",
                str(Path(root) / "summary.csv"),
            ]
            seconds = median_seconds(
                lambda: subprocess.run(official, capture_output=True, check=False, cwd=args.official_cwd),
                args.runs,
            )
        print(f"official checker (command):        {seconds * 1000:.1f} ms (median of {args.runs})")


if __name__ == "__main__":
    main()
