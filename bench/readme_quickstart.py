"""Run the README's Quickstart as written and hold each quoted output to what the commands really print.

    python bench/readme_quickstart.py [--workdir DIR] [--skip-full] [--json FILE]

The commands are the Quickstart's `sh` block, run in order in a fresh folder (`--workdir`, else a new
temporary one) with this interpreter's `submitter` (the install line runs only its `submitter systems
validate --all`). Each row of the table under the block quotes, in backticks, what a command prints; a
quote holds if its parts between `…` appear in order in the command's output (stdout and stderr). Numbers
of a timed run (a figure with decimals, a count of bytes, a figure in thousands) differ from run to run
on a busy machine: a quoted number holds within --tolerance (relative, default 0.02) of the printed one,
and a smaller integer (a count of files, an estimate) only exactly. The table's "takes" column is shown
beside the time each command took. `--skip-full` leaves out the full-length `run-all` (40 minutes) and
what needs it.

Exit 1 when a quote does not hold: the README has drifted from the code.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


@dataclass
class Quote:
    command: str
    text: str
    holds: bool = False
    printed: str = ""  # the output line nearest to the quote, when it does not hold


@dataclass
class Step:
    command: str
    seconds: float
    exit_code: int
    quoted_time: str


def quickstart() -> tuple[list[str], list[tuple[str, str, list[str]]]]:
    """The block's commands, and each table row: (the command cell, the time cell, the quotes)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    part = readme.split("\n## Quickstart", 1)[1].split("\n## ", 1)[0]
    block = part.split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line for line in block.splitlines() if line.strip()]
    rows = []
    for line in part.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        if len(cells) == 3 and cells[0].startswith("`") and cells[1] != "takes":
            rows.append((cells[0], cells[1], re.findall(r"`([^`]+)`", cells[2])))
    return commands, rows


def run(command: str, folder: Path) -> tuple[str, Step]:
    if command.startswith("python3 -m venv"):  # the install: this interpreter's submitter stands in
        command = command.rsplit("&&", 1)[1].strip()
    # This interpreter's `submitter` first on PATH, as activating its environment puts it.
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    started = time.monotonic()
    done = subprocess.run(
        command,
        shell=True,
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PATH": path},
    )
    seconds = time.monotonic() - started
    return done.stdout + done.stderr, Step(command, round(seconds, 1), done.returncode, "")


def names(cell: str, command: str) -> bool:
    """Whether a table row's command cell (its last code span, `…` standing for what is left out) is
    this command: its parts in order, and the last at the end unless `…` follows it."""
    shown = re.findall(r"`([^`]+)`", cell)[-1]
    parts = [part.strip() for part in shown.split("…") if part.strip()]
    position = 0
    for part in parts:
        found = command.find(part, position)
        if found < 0:
            return False
        position = found + len(part)
    return shown.rstrip().endswith("…") or command.rstrip().endswith(parts[-1])


def holds(quote: str, output: str, tolerance: float) -> bool:
    """The quote's parts between `…`, in order in the output, numbers within the tolerance. Runs of blanks
    count as one: the README shortens the columns of a printed table."""
    quote, output = re.sub(r"\s+", " ", quote), re.sub(r"[ \t]+", " ", output)
    position = 0
    for part in (piece.strip() for piece in quote.split("…")):
        if not part:
            continue
        numbers = list(NUMBER.finditer(part))
        pattern, last = "", 0
        for match in numbers:
            pattern += re.escape(part[last : match.start()]) + r"(\d[\d,]*(?:\.\d+)?)"
            last = match.end()
        pattern += re.escape(part[last:])
        for found in re.finditer(pattern, output[position:]):
            pairs = zip(numbers, found.groups(), strict=True)
            if all(_close(match, printed, part, tolerance) for match, printed in pairs):
                position += found.end()
                break
        else:
            return False
    return True


def _close(quoted: re.Match[str], printed: str, part: str, tolerance: float) -> bool:
    """Equal; or, for a measured figure (decimals, thousands, a size in bytes), within the tolerance."""
    expected, got = float(quoted[0].replace(",", "")), float(printed.replace(",", ""))
    if expected == got:
        return True
    measured = "." in quoted[0] or expected >= 1000 or part[quoted.end() :].startswith(" bytes")
    return measured and abs(got - expected) <= tolerance * abs(expected)


def nearest_line(quote: str, output: str) -> str:
    words = set(re.findall(r"[a-z]{4,}", quote.lower()))
    lines = output.splitlines() or [""]
    return max(lines, key=lambda line: len(words & set(re.findall(r"[a-z]{4,}", line.lower()))))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--skip-full", action="store_true")
    parser.add_argument("--tolerance", type=float, default=0.02)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    folder = args.workdir or Path(tempfile.mkdtemp(prefix="quickstart-"))
    folder.mkdir(parents=True, exist_ok=True)
    commands, rows = quickstart()
    full = "submitter run-all --system demo_cpu"
    outputs: dict[str, str] = {}
    steps: list[Step] = []
    for command in commands:
        if args.skip_full and command.strip() in (full, *commands[commands.index(full) + 1 :]):
            continue
        print(f"+ {command}", file=sys.stderr, flush=True)
        output, step = run(command, folder)
        outputs[command] = output
        steps.append(step)
    quotes: list[Quote] = []
    for cell, quoted_time, texts in rows:
        command = next((c for c in outputs if names(cell, c)), None)
        if command is None:
            continue  # a step --skip-full left out
        for step in steps:
            if step.command.endswith(command.rsplit("&&", 1)[-1].strip()):
                step.quoted_time = quoted_time
        for text in texts:
            if text.startswith("cd "):
                continue  # a command the reader is told to run, not what this one prints
            quote = Quote(command, text, holds(text, outputs[command], args.tolerance))
            if not quote.holds:
                quote.printed = nearest_line(text, outputs[command])
            quotes.append(quote)
    for step in steps:
        quoted = step.quoted_time or "-"
        print(f"{step.seconds:8.1f} s  exit {step.exit_code}  (README {quoted})  {step.command}")
    drifted = [quote for quote in quotes if not quote.holds]
    for quote in drifted:
        print(f"drifted: {quote.command}\n  README:  {quote.text}\n  printed: {quote.printed.strip()}")
    print(f"{len(quotes) - len(drifted)} of {len(quotes)} quotes hold; outputs in {shlex.quote(str(folder))}")
    if args.json:
        document = {"steps": [asdict(s) for s in steps], "quotes": [asdict(q) for q in quotes]}
        args.json.write_text(json.dumps(document, indent=2) + "\n")
    return 1 if drifted else 0


if __name__ == "__main__":
    sys.exit(main())
