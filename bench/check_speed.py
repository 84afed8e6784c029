"""How long `submitter` takes to start and to check a tree, beside the official MLCommons checker.

    python bench/check_speed.py ../shared/fixtures/v5.1/closed/RedHat --round v5.1 \
        [--official "/path/to/venv/bin/python -m submission_checker.main" --official-cwd DIR] [--runs 21]

Runs the commands as a user does (the `submitter` console script beside this Python), alternating
`submitter check` with the official checker so that both see the same machine, and prints a Markdown
table of the fastest and the median run of each: start-up (`--version`, `--help`), `check` as a command,
`check_tree` in process, and the official checker's command on a copy of the same tree.
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
from collections.abc import Callable
from pathlib import Path

from submitter.check.checker import check_tree


def seconds(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def command(argv: list[str], cwd: Path | None = None) -> Callable[[], object]:
    return lambda: subprocess.run(argv, capture_output=True, check=False, cwd=cwd)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("tree", type=Path, help="a submitter folder, e.g. closed/RedHat")
    parser.add_argument("--round", default="v5.1")
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--official", help="command that runs the official checker's main module")
    parser.add_argument("--official-cwd", type=Path, help="folder to run the official command in")
    args = parser.parse_args()

    submitter = str(Path(sys.executable).with_name("submitter"))
    measured: dict[str, Callable[[], object]] = {
        "`submitter --version`": command([submitter, "--version"]),
        "`submitter --help`": command([submitter, "--help"]),
        f"`submitter check {args.tree.name} --round {args.round}`": command(
            [submitter, "check", str(args.tree), "--round", args.round]
        ),
        "`check_tree` in process (the checking alone)": lambda: check_tree(args.tree, args.round),
    }
    with tempfile.TemporaryDirectory() as root:
        if args.official:
            # The official checker wants the root that holds closed/: a copy of just this submitter.
            shutil.copytree(args.tree, Path(root) / args.tree.parent.name / args.tree.name)
            official = [*shlex.split(args.official), "--input", root, "--version", args.round]
            official += ["--csv", str(Path(root) / "summary.csv")]
            measured["official checker as a command"] = command(official, args.official_cwd)
        timings: dict[str, list[float]] = {name: [] for name in measured}
        for _ in range(args.runs):
            for name, action in measured.items():
                timings[name].append(seconds(action))
    print(f"| what ({args.runs} alternating runs) | fastest | median |\n|---|---|---|")
    for name, values in timings.items():
        print(f"| {name} | {min(values) * 1000:.0f} ms | {statistics.median(values) * 1000:.0f} ms |")


if __name__ == "__main__":
    main()
