"""Compare two demo workspaces made by different commits: is the behaviour the same?

    python bench/compare_workspaces.py BEFORE/work AFTER/work [--skip /src/]

Run the same commands in two checkouts (say `run-all --system demo_cpu --smoke`, `stage`, `check`,
`report`), then compare their `work/` folders: the same files (run-folder stamps normalised), and for
each file whether its bytes agree, differ only in what changes from run to run (numbers, times, stamps,
hashes, the checkout's own path, the order in which LoadGen logged completions), or differ otherwise,
with the first such line. Exit 1 when files are missing on one side or differ otherwise.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

STAMP = re.compile(r"\d{8}T\d{6}Z(-\d+)?")
VOLATILE = re.compile(
    r"\d{4}-\d\d-\d\dT[\d:.]+(Z|[+-]\d\d:\d\d)?|\d{8}T\d{6}Z(-\d+)?|\b[0-9a-f]{40,64}\b"
    r"|-?\d[\d,]*(\.\d+)?(e[+-]?\d+)?"
)


def files(root: Path, skip: tuple[str, ...]) -> dict[str, Path]:
    found = {}
    for path in sorted(root.rglob("*")):
        name = STAMP.sub("<stamp>", path.relative_to(root).as_posix())
        if path.is_file() and not any(part in name for part in skip):
            found[name] = path
    return found


def shape(text: str, checkout: Path) -> str:
    """The text with what legitimately changes between two runs replaced by '#'."""
    return VOLATILE.sub("#", text.replace(str(checkout), "<checkout>"))


def same_records(before: bytes, after: bytes) -> bool:
    """LoadGen writes accuracy-log records as samples complete: the same records, in any order."""
    try:
        logs = [json.loads(text) for text in (before, after)]
    except ValueError:
        return False

    def records(log: list[dict]) -> list[str]:
        return sorted(json.dumps({**record, "seq_id": None}, sort_keys=True) for record in log)

    return records(logs[0]) == records(logs[1])


def first_difference(before: str, after: str) -> str:
    lines = list(zip(before.splitlines(), after.splitlines(), strict=False))
    number = next((n for n, (b, a) in enumerate(lines) if b != a), len(lines))
    shown = [
        text.splitlines()[number][:150] if number < len(text.splitlines()) else "<end>"
        for text in (before, after)
    ]
    return f"line {number + 1}: {shown[0]!r} / {shown[1]!r}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--skip", action="append", default=[], help="leave out paths containing this")
    options = parser.parse_args()
    skip = tuple(options.skip)
    before, after = files(options.before, skip), files(options.after, skip)
    missing = sorted(set(before) ^ set(after))
    identical = volatile = 0
    different = []
    for name in sorted(set(before) & set(after)):
        old, new = before[name].read_bytes(), after[name].read_bytes()
        if old == new:
            identical += 1
            continue
        if name.endswith("mlperf_log_accuracy.json") and same_records(old, new):
            volatile += 1
            continue
        try:
            old_text = shape(old.decode(), options.before.resolve().parent)
            new_text = shape(new.decode(), options.after.resolve().parent)
        except UnicodeDecodeError:
            different.append(f"{name}: binary files differ")
            continue
        if old_text == new_text:
            volatile += 1
        else:
            different.append(f"{name}: {first_difference(old_text, new_text)}")
    print(f"files: {len(before)} before, {len(after)} after; on one side only: {len(missing)}")
    print(*(f"  only {'before' if name in before else 'after'}: {name}" for name in missing), sep="\n")
    print(f"identical: {identical}; differ only in numbers, times, stamps, hashes, paths, order: {volatile}")
    print(f"differ otherwise: {len(different)}")
    print(*(f"  {line}" for line in different), sep="\n")
    return 1 if missing or different else 0


if __name__ == "__main__":
    sys.exit(main())
