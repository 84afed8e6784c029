"""How fast `submitter package` reads and leak-scans a tree, beside the time to merely read its bytes.

    python bench/package_speed.py /tmp/trees/inference_results_v6.0/closed/Lambda_SIT [--runs 5] [--no-cold]
    python bench/package_speed.py --list /tmp/trees/inference_results_v5.1 /tmp/trees/inference_results_v6.0

For TREE (a submitter folder such as closed/Lambda_SIT) it measures, in alternating runs so that every
row sees the same machine: reading every file the package reads (cat-like, cold when the page cache
can be emptied for those files, then warm), the leak scan alone in this process (`scan_tree`), the
checker alone (`check_tree` in this process, where the round's tables are loaded already, and
`submitter check TREE --format json` as a command: the part of `package` that runs before the scan),
and `submitter package TREE --dry-run --json` as a command (the console script beside this Python). It
prints a Markdown table of the fastest and the median run with bytes, files and MB/s (of the fastest),
and the CPU time (user and system) of the run that took least of it: on a busy machine the wall time
is mostly waiting for a core, the CPU time much less so.
`--list` prints the submitter folders under each ROOT (ROOT/closed/*, ROOT/open/*), largest first.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from submitter.check.checker import check_tree
from submitter.check.tree import locate
from submitter.package.leaks import scan_tree
from submitter.package.packaging import AllowList, Sensitive

READ_BYTES = 1 << 20


@dataclass(frozen=True)
class Workload:
    root: Path  # what the paths are relative to (the tree's root, above closed/)
    files: dict[str, int]  # path -> size: what `package` scans (the checker's index, links followed)
    names: list[str]  # every path whose name is scanned
    total_bytes: int


def workload(tree: Path) -> Workload:
    """The files `package_tree` hands to the scan, found the same way (the checker's file index)."""
    index = check_tree(tree).index
    root = locate(tree).root
    files = {**index.files, **index.root_files}
    names = sorted({*files, *index.dirs, *index.symlinks})
    return Workload(root, files, names, sum(files.values()))


def evict(paths: Iterable[Path]) -> bool:
    """Ask the kernel to drop these files from the page cache; False where it cannot be asked."""
    if not hasattr(os, "posix_fadvise"):
        return False
    for path in paths:
        descriptor = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(descriptor)
    return True


def read_all(paths: list[Path]) -> int:
    total = 0
    for path in paths:
        with path.open("rb") as stream:
            while block := stream.read(READ_BYTES):
                total += len(block)
    return total


@dataclass(frozen=True)
class Timing:
    wall: float
    cpu: float  # user and system time of this process and of the commands it ran


def timed(action: Callable[[], object]) -> Timing:
    wall, cpu = time.perf_counter(), _cpu_seconds()
    action()
    return Timing(time.perf_counter() - wall, _cpu_seconds() - cpu)


def _cpu_seconds() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def command(*args: str) -> Callable[[], dict[str, object]]:
    argv = [str(Path(sys.executable).with_name("submitter")), *args]

    def run() -> dict[str, object]:
        # Exit 1 (findings) is expected on published trees; anything else is a failure of the benchmark.
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        if done.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip()}")
        return json.loads(done.stdout)

    return run


def list_submitters(roots: list[Path]) -> None:
    rows = []
    for root in roots:
        for folder in sorted((*root.glob("closed/*"), *root.glob("open/*"))):
            if folder.is_dir():
                files = [path for path in folder.rglob("*") if path.is_file() and not path.is_symlink()]
                rows.append((sum(path.stat().st_size for path in files), len(files), folder))
    print("| bytes | files | submitter folder |\n|---:|---:|---|")
    for size, count, folder in sorted(rows, reverse=True):
        print(f"| {size:,} | {count:,} | {folder} |")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("tree", type=Path, nargs="?", help="a submitter folder, e.g. closed/Lambda_SIT")
    parser.add_argument("--runs", type=int, default=5, help="alternating runs of each row (default 5)")
    parser.add_argument(
        "--no-cold", action="store_true", help="skip the cold read (it empties the page cache of the tree)"
    )
    parser.add_argument("--list", nargs="+", type=Path, metavar="ROOT", help="list submitter folders")
    args = parser.parse_args()
    if args.list:
        list_submitters(args.list)
        return
    if args.tree is None:
        parser.error("give a TREE, or --list ROOT")

    work = workload(args.tree)
    paths = [work.root / path for path in work.files]
    sensitive = Sensitive.of_this_machine()
    scan_rows = {
        "read every file, warm cache": lambda: read_all(paths),
        "leak scan in process (`scan_tree`)": lambda: scan_tree(
            work.root, work.files, work.names, sensitive, AllowList()
        ),
        "checker in process (`check_tree`)": lambda: check_tree(args.tree),
        f"`submitter check {args.tree.name} --format json`": command(
            "check", str(args.tree), "--format", "json"
        ),
        f"`submitter package {args.tree.name} --dry-run --json`": command(
            "package", str(args.tree), "--dry-run", "--json"
        ),
    }
    timings: dict[str, list[Timing]] = {}
    cold = not args.no_cold and evict(paths)
    for _ in range(args.runs):
        if cold:
            evict(paths)
            timings.setdefault("read every file, cold cache (posix_fadvise DONTNEED)", []).append(
                timed(lambda: read_all(paths))
            )
        for name, action in scan_rows.items():
            timings.setdefault(name, []).append(timed(action))

    report = command("package", str(args.tree), "--dry-run", "--json")()
    print(
        f"{args.tree}: {len(work.files):,} files read ({report['scanned_files']} scanned, "
        f"{len(report['binary_files'])} binary), {work.total_bytes:,} bytes, {len(report['findings'])} "
        f"findings; {args.runs} alternating runs, {os.cpu_count()} cores\n"
    )
    print(
        "| what | bytes | files | fastest | median | CPU (least) | MB/s (fastest) | MB/s (CPU) |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|"
    )
    for name, values in timings.items():
        fastest, cpu = min(t.wall for t in values), min(t.cpu for t in values)
        rates = (
            ("-", "-")
            if "check_tree" in name or "submitter check" in name
            else (_rate(work.total_bytes, fastest), _rate(work.total_bytes, cpu))
        )
        print(
            f"| {name} | {work.total_bytes:,} | {len(work.files):,} | {fastest:.2f} s "
            f"| {statistics.median(t.wall for t in values):.2f} s | {cpu:.2f} s | {rates[0]} | {rates[1]} |"
        )
    check, package = (
        min(
            t.cpu for name, values in timings.items() if name.startswith(f"`submitter {word}") for t in values
        )
        for word in ("check", "package")
    )
    print(
        f"\nThe check command's CPU time is {check / package:.0%} of the package command's (least of each; "
        "both start Python and load the round)."
    )


def _rate(size: int, seconds: float) -> str:
    return f"{size / seconds / 1e6:.0f}" if seconds > 0 else "-"


if __name__ == "__main__":
    main()
