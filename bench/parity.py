"""Verdict for verdict: `submitter check` beside the official checker on every tree of a results repository.

    python bench/parity.py --results /path/to/inference_results_v6.0 --version v6.0 \
        --official /path/to/mlcommons/inference/tools/submission \
        --official-python /path/to/venv/bin/python [--trees closed/RedHat ...] [--markdown bench/RESULTS.md]

For each `<division>/<submitter>` tree of the repository (closed and open) it hard-links the tree into a
scratch root, runs the official checker (`python -m submission_checker.main --input ROOT --version V`)
and `submitter check` (round detected, as a user runs it) on that same root, and compares per result
(system/benchmark/scenario): the verdict, and for results both accept, the summary.csv row in every
column (power rows included). It records each checker's wall time, our crashes, and every disagreement
with its cause: our error findings for results only we reject, the official checker's error lines for
results only it rejects.

Files the repository lists but does not hold (a partial clone, or blobs its snapshot lacks; found with
`git ls-files --deleted`, or given with --lacking) are named. Where the official checker reads such a
file, the benchmark folder holding it is left out of both runs, since the official checker would crash
on it; files it never reads are only listed.

With --mutations N, each tree is also checked N times more, each time a copy with one random breakage
from `bench/mutations.py` (a file removed or emptied, a LoadGen value changed, an accuracy value moved,
a verification flipped, a description field emptied, a scenario folder renamed, ...), seeded by --seed,
and the verdicts of both checkers compared on every result of the broken copy.

With --markdown FILE, the section between `<!-- parity:VERSION -->` markers in FILE is replaced by the
tables (appended when absent). --json writes every per-result comparison.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import mutations

DIVISIONS = ("closed", "open")
# Files beside a result that the official checker opens (loader.py, checks/*.py): it crashes without one.
OFFICIAL_READS = re.compile(
    r"(mlperf_log_detail\.txt|mlperf_log_summary\.txt|accuracy\.txt|mlperf_log_accuracy\.json|"
    r"verify_accuracy\.txt|verify_performance\.txt|verify_output_len\.txt|baseline_accuracy\.txt|"
    r"compliance_accuracy\.txt|measurements\.json|user\.conf|README\.md|spl\.txt|client\.json|client\.log|"
    r"ptd_logs\.txt|server\.json|server\.log|result_summary\.json|accuracy_results\.json|config\.yaml)$"
)
RESULT_LINE = re.compile(r"\] Results (\S+) (\S+)$")
NO_RESULT_LINE = re.compile(r"\] NoResults (\S+)$")
ERROR_LINE = re.compile(r" (?:ERROR|WARNING)\] (.*)$")
ResultKey = tuple[str, str, str]  # system, benchmark, scenario


@dataclass
class CheckerRun:
    seconds: float
    exit_code: int
    verdicts: dict[ResultKey, bool] = field(default_factory=dict)
    rows: dict[tuple[ResultKey, str], dict[str, str]] = field(default_factory=dict)
    crashed: str | None = None
    evidence: dict[ResultKey, list[str]] = field(default_factory=dict)
    detected: str | None = None


@dataclass
class TreeComparison:
    tree: str
    pruned: list[str]
    unread_lacking: list[str]
    official: CheckerRun
    ours: CheckerRun
    disagreements: list[dict[str, object]]
    row_differences: list[dict[str, object]]
    mutation: str | None = None  # the breakage applied to this copy, if any
    csv_identical: bool = False  # both checkers wrote the same summary.csv, byte for byte

    @property
    def agreements(self) -> int:
        keys = self.official.verdicts.keys() | self.ours.verdicts.keys()
        return sum(self.official.verdicts.get(k) == self.ours.verdicts.get(k) for k in keys)


def lacking_files(results: Path, listed: Path | None) -> set[str]:
    if listed is not None:
        return {line.strip() for line in listed.read_text().splitlines() if line.strip()}
    if not (results / ".git").exists():
        return set()
    output = subprocess.run(
        ["git", "-C", str(results), "ls-files", "--deleted", "-z"], capture_output=True, check=True
    ).stdout
    return {path for path in output.decode("utf-8", "surrogateescape").split("\0") if path}


def trees_of(results: Path, selected: list[str] | None) -> list[str]:
    if selected:
        return selected
    return [
        f"{division}/{child.name}"
        for division in DIVISIONS
        if (results / division).is_dir()
        for child in sorted((results / division).iterdir())
        if child.is_dir()
    ]


def benchmark_folder(tree: str, path: str) -> str | None:
    """The `results|compliance|measurements/<system>/<benchmark>` part of a lacking file's path."""
    parts = path[len(tree) + 1 :].split("/")
    if len(parts) >= 4 and parts[0] in ("results", "compliance", "measurements"):
        return "/".join(parts[1:3])
    return None


def stage_tree(results: Path, tree: str, root: Path, lacking: set[str]) -> tuple[list[str], list[str]]:
    """Hard-link the tree under `root`; leave out benchmarks whose files the official checker needs."""
    target = root / tree
    target.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-al", str(results / tree), str(target)], check=True)
    mine = sorted(path for path in lacking if path.startswith(f"{tree}/"))
    pruned: set[str] = set()
    unread = []
    for path in mine:
        folder = benchmark_folder(tree, path)
        if folder is not None and OFFICIAL_READS.search(path):
            pruned.add(folder)
        else:
            unread.append(path)
    for folder in pruned:
        for top in ("results", "compliance", "measurements"):
            shutil.rmtree(target / top / folder, ignore_errors=True)
    return sorted(pruned), unread


def result_key(root: Path, path: str) -> ResultKey | None:
    try:
        parts = Path(path).resolve().relative_to(root.resolve()).parts
    except ValueError:
        return None
    # <division>/<submitter>/results/<system>/<benchmark>/<scenario>/...
    return (parts[3], parts[4], parts[5]) if len(parts) > 5 and parts[2] == "results" else None


def read_csv_rows(path: Path) -> dict[tuple[ResultKey, str], dict[str, str]]:
    if not path.exists():
        return {}
    rows = {}
    for row in csv.DictReader(io.StringIO(path.read_text(encoding="utf-8", errors="replace"))):
        key = (row["Platform"], row["Model"], row["Scenario"])
        rows[(key, row["Units"])] = row
    return rows


def run_official(args: argparse.Namespace, root: Path, scratch: Path) -> CheckerRun:
    summary = scratch / "official.csv"
    command = [
        args.official_python, "-m", "submission_checker.main",
        "--input", str(root), "--version", args.version, "--csv", str(summary),
    ]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(command, cwd=args.official, capture_output=True, text=True, errors="replace")
    run = CheckerRun(seconds=time.perf_counter() - start, exit_code=done.returncode)
    lines = done.stderr.splitlines()
    if "Traceback (most recent call last):" in done.stderr:
        run.crashed = lines[-1] if lines else "traceback"
        return run
    for line in lines:
        if match := RESULT_LINE.search(line):
            key = result_key(root, match.group(1))
            if key:
                run.verdicts[key] = True
        elif match := NO_RESULT_LINE.search(line):
            key = result_key(root, match.group(1))
            if key:
                run.verdicts[key] = False
    for line in lines:
        if match := ERROR_LINE.search(line):
            for key in run.verdicts:
                if "/".join(key) + "/" in line or f"/results/{key[0]}," in line:
                    run.evidence.setdefault(key, []).append(match.group(1)[:300])
    run.rows = read_csv_rows(summary)
    return run


def run_ours(args: argparse.Namespace, root: Path, tree: str, scratch: Path) -> CheckerRun:
    summary = scratch / "ours.csv"
    command = [args.submitter, "check", str(root / tree), "--json", "--csv", str(summary)]
    if args.force_round:
        command += ["--round", args.version]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, errors="replace")
    run = CheckerRun(seconds=time.perf_counter() - start, exit_code=done.returncode)
    if done.returncode not in (0, 1) or "internal error" in done.stderr:
        run.crashed = (
            done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"
        )
        return run
    report = json.loads(done.stdout)
    run.detected = report["round"]
    for result in report["results"]:
        run.verdicts[(result["system"], result["benchmark"], result["scenario"])] = (
            result["verdict"] == "valid"
        )
    for finding in report["findings"]:
        if finding["severity"] != "error":
            continue
        text = f"{finding['rule']} {finding['path']}: {finding['message']}"
        for key in _keys_of_finding(finding, run.verdicts, tree):
            run.evidence.setdefault(key, []).append(text[:300])
    run.rows = read_csv_rows(summary)
    return run


def _keys_of_finding(finding: dict[str, str], keys: dict[ResultKey, bool], tree: str) -> list[ResultKey]:
    if finding.get("result"):
        return [key for key in keys if f"{tree}/{'/'.join(key)}" == finding["result"]]
    path = finding["path"]
    return [
        key
        for key in keys
        if f"/results/{key[0]}/{key[1]}/" in f"/{path}/" or path.endswith(f"/systems/{key[0]}.json")
    ]


def compare(tree: str, official: CheckerRun, ours: CheckerRun) -> tuple[list[dict], list[dict]]:
    disagreements = []
    for key in sorted(official.verdicts.keys() | ours.verdicts.keys()):
        theirs, mine = official.verdicts.get(key), ours.verdicts.get(key)
        if theirs == mine:
            continue
        disagreements.append(
            {
                "tree": tree,
                "result": "/".join(key),
                "official": _verdict(theirs),
                "ours": _verdict(mine),
                "evidence": (ours.evidence if mine is False else official.evidence).get(key, [])[:6],
            }
        )
    differences = []
    for key in sorted(official.rows.keys() & ours.rows.keys()):
        theirs, mine = official.rows[key], ours.rows[key]
        columns = [column for column in theirs if theirs.get(column) != mine.get(column)]
        if columns:
            differences.append(
                {
                    "tree": tree,
                    "row": "/".join(key[0]) + f" [{key[1]}]",
                    "columns": {column: [theirs.get(column), mine.get(column)] for column in columns},
                }
            )
    for key in sorted(official.rows.keys() ^ ours.rows.keys()):
        owner = "official only" if key in official.rows else "ours only"
        differences.append({"tree": tree, "row": "/".join(key[0]) + f" [{key[1]}]", "columns": owner})
    return disagreements, differences


def _verdict(value: bool | None) -> str:
    return {True: "valid", False: "invalid", None: "absent"}[value]


def check_tree_pair(
    args: argparse.Namespace, tree: str, lacking: set[str], work: Path, mutation: int | None = None
) -> TreeComparison:
    scratch = Path(tempfile.mkdtemp(dir=work, prefix=tree.replace("/", "_") + "."))
    root = scratch / "root"
    pruned, unread = stage_tree(args.results, tree, root, lacking)
    recipe = None
    if mutation is not None:
        recipe = mutations.apply(root, tree, random.Random(f"{args.seed}/{tree}/{mutation}")).recipe()
    official = run_official(args, root, scratch)
    ours = run_ours(args, root, tree, scratch)
    # The fastest of alternating runs is the least disturbed by the machine; broken copies are not timed.
    for _ in range(args.repeat - 1 if mutation is None else 0):
        official.seconds = min(official.seconds, run_official(args, root, scratch).seconds)
        ours.seconds = min(ours.seconds, run_ours(args, root, tree, scratch).seconds)
    disagreements, rows = compare(tree, official, ours)
    csv_identical = _same_bytes(scratch / "official.csv", scratch / "ours.csv")
    shutil.rmtree(scratch, ignore_errors=True)
    for disagreement in disagreements:
        disagreement["mutation"] = recipe
    return TreeComparison(tree, pruned, unread, official, ours, disagreements, rows, recipe, csv_identical)


def _same_bytes(first: Path, second: Path) -> bool:
    try:
        return first.read_bytes() == second.read_bytes()
    except OSError:  # a checker that crashed wrote none
        return False


def markdown(args: argparse.Namespace, comparisons: list[TreeComparison], command: str) -> str:
    out = [
        f"<!-- parity:{args.version} -->",
        f"### {args.version}: {args.results.name} ({len(comparisons)} trees)",
        "",
        "```sh",
        command,
        "```",
        "",
        f"Times are the fastest of {args.repeat} alternating run(s) of each checker, start-up included.",
        "",
        "| tree | results | official valid | ours valid | agree | csv rows equal | official s | ours s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    totals: Counter[str] = Counter()
    for c in comparisons:
        keys = c.official.verdicts.keys() | c.ours.verdicts.keys()
        official_valid = sum(c.official.verdicts.values())
        ours_valid = sum(c.ours.verdicts.values())
        rows_equal = len(c.official.rows.keys() & c.ours.rows.keys()) - sum(
            1 for d in c.row_differences if isinstance(d["columns"], dict)
        )
        status = ""
        if c.official.crashed:
            status += " (official crashed)"
        if c.ours.crashed:
            status += " (**ours crashed**)"
        out.append(
            f"| {c.tree}{status} | {len(keys)} | {official_valid} | {ours_valid} | {c.agreements} "
            f"| {rows_equal}/{len(c.official.rows)} | {c.official.seconds:.2f} | {c.ours.seconds:.2f} |"
        )
        totals.update(
            results=len(keys),
            official=official_valid,
            ours=ours_valid,
            agree=c.agreements,
            rows_equal=rows_equal,
            rows=len(c.official.rows),
            slower=c.ours.seconds > c.official.seconds,
            csv_identical=c.csv_identical,
        )
    out.append(
        f"| **all** | {totals['results']} | {totals['official']} | {totals['ours']} | {totals['agree']} "
        f"| {totals['rows_equal']}/{totals['rows']} | | |"
    )
    out += [
        "",
        f"Trees whose summary.csv is the official one byte for byte: {totals['csv_identical']} of "
        f"{len(comparisons)}.",
        f"Trees where ours took longer than the official checker: {totals['slower']}.",
        "",
    ]
    disagreements = [d for c in comparisons for d in c.disagreements]
    out.append(f"Disagreements ({len(disagreements)}):")
    out.append("")
    for d in disagreements:
        evidence = "; ".join(str(e) for e in d["evidence"]) or "no finding recorded"
        out.append(f"- {d['tree']} {d['result']}: official {d['official']}, ours {d['ours']}: {evidence}")
    rows = [d for c in comparisons for d in c.row_differences]
    out += ["", f"summary.csv rows that differ ({len(rows)}):", ""]
    for d in rows:
        out.append(f"- {d['tree']} {d['row']}: {json.dumps(d['columns'], ensure_ascii=False)[:400]}")
    pruned = [(c.tree, p) for c in comparisons for p in c.pruned]
    unread = [(c.tree, p) for c in comparisons for p in c.unread_lacking]
    out += [
        "",
        f"Benchmarks left out: the repository lacks a file the official checker reads ({len(pruned)}):",
        "",
    ]
    out += [f"- {tree}/results/{folder}" for tree, folder in pruned]
    out += ["", f"Files the repository lacks that neither verdict reads ({len(unread)}): "]
    out += ["", ", ".join(path for _, path in unread) or "none"]
    return "\n".join(out) + "\n"


def write_markdown(path: Path, marker: str, section: str) -> None:
    """Replace the section between `<!-- marker -->` and `<!-- /marker -->`, or append it."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    pattern = re.compile(rf"<!-- {re.escape(marker)} -->.*?<!-- /{re.escape(marker)} -->\n", re.S)
    text = pattern.sub(lambda _: section, text) if pattern.search(text) else text + "\n" + section
    path.write_text(text, encoding="utf-8")


def _progress(label: str, comparison: TreeComparison) -> None:
    official, ours = comparison.official, comparison.ours
    print(
        f"{label}: official {sum(official.verdicts.values())}/{len(official.verdicts)}"
        f"{' CRASHED' if official.crashed else ''} {official.seconds:.2f}s, "
        f"ours {sum(ours.verdicts.values())}/{len(ours.verdicts)}{' CRASHED' if ours.crashed else ''} "
        f"{ours.seconds:.2f}s, {len(comparison.disagreements)} disagreement(s), "
        f"{len(comparison.row_differences)} row difference(s)",
        file=sys.stderr,
    )


def mutation_markdown(args: argparse.Namespace, mutated: list[TreeComparison], command: str) -> str:
    """The broken copies: how many, whose checker crashed, and every verdict the two disagree on."""
    judged = [c for c in mutated if not c.official.crashed and not c.ours.crashed]
    results = sum(len(c.official.verdicts.keys() | c.ours.verdicts.keys()) for c in judged)
    disagreements = [d for c in judged for d in c.disagreements]
    ours_crashed = [c for c in mutated if c.ours.crashed]
    out = [
        f"<!-- parity-mutations:{args.version} -->",
        f"#### {args.version}: {len(mutated)} broken copies "
        f"(seed {args.seed}, one breakage each from bench/mutations.py)",
        "",
        "```sh",
        command,
        "```",
        "",
        "| copies | official crashed | ours crashed | judged by both | results compared | same verdict |",
        "|---|---|---|---|---|---|",
        f"| {len(mutated)} | {sum(bool(c.official.crashed) for c in mutated)} | {len(ours_crashed)} "
        f"| {len(judged)} | {results} | {results - len(disagreements)} |",
        "",
    ]
    for copy in ours_crashed:
        out.append(f"- ours crashed on {copy.tree} [{copy.mutation}]: {copy.ours.crashed}")
    for d in disagreements:
        evidence = "; ".join(str(e) for e in d["evidence"]) or "no finding recorded"
        out.append(
            f"- {d['tree']} {d['result']} [{d['mutation']}]: official {d['official']}, ours {d['ours']}: "
            f"{evidence}"
        )
    return "\n".join(out) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--results", type=Path, required=True, help="a checkout of a published results repository"
    )
    parser.add_argument("--version", required=True, help="the round, as the official checker's --version")
    parser.add_argument("--official", type=Path, required=True, help="mlcommons/inference tools/submission")
    parser.add_argument("--official-python", default=sys.executable)
    parser.add_argument("--submitter", default=shutil.which("submitter") or "submitter")
    parser.add_argument("--trees", nargs="*", help="only these <division>/<submitter> trees")
    parser.add_argument("--lacking", type=Path, help="a file listing repository paths that are absent")
    parser.add_argument("--force-round", action="store_true", help="give ours --round instead of detecting")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()), help="scratch folder")
    parser.add_argument("--markdown", type=Path, help="update this file's parity section for the version")
    parser.add_argument("--json", type=Path, help="write every comparison here")
    parser.add_argument("--repeat", type=int, default=1, help="time each checker N times, keep the fastest")
    parser.add_argument("--mutations", type=int, default=0, help="broken copies of each tree to compare")
    parser.add_argument("--seed", default="0", help="seed of the breakages")
    parser.add_argument("--max-results", type=int, help="mutate only trees with at most this many results")
    args = parser.parse_args()
    args.results = args.results.resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    lacking = lacking_files(args.results, args.lacking)
    comparisons, mutated = [], []
    for tree in trees_of(args.results, args.trees):
        comparison = check_tree_pair(args, tree, lacking, args.work)
        comparisons.append(comparison)
        _progress(tree, comparison)
        if args.max_results is not None and len(comparison.official.verdicts) > args.max_results:
            continue
        for number in range(args.mutations):
            copy = check_tree_pair(args, tree, lacking, args.work, mutation=number)
            mutated.append(copy)
            _progress(f"{tree} [{copy.mutation}]", copy)
    command = "python bench/parity.py " + " ".join(
        a if os.sep not in a else os.path.basename(a.rstrip(os.sep)) or a for a in sys.argv[1:]
    )
    sections = {f"parity:{args.version}": markdown(args, comparisons, command)}
    if mutated:
        sections[f"parity-mutations:{args.version}"] = mutation_markdown(args, mutated, command)
    for marker, section in sections.items():
        section += f"<!-- /{marker} -->\n"
        if args.markdown:
            write_markdown(args.markdown, marker, section)
        else:
            print(section)
    if args.json:
        args.json.write_text(
            json.dumps(
                [
                    {
                        "tree": c.tree,
                        "pruned": c.pruned,
                        "official": {"seconds": c.official.seconds, "crashed": c.official.crashed},
                        "ours": {
                            "seconds": c.ours.seconds,
                            "crashed": c.ours.crashed,
                            "round": c.ours.detected,
                        },
                        "disagreements": c.disagreements,
                        "row_differences": c.row_differences,
                        "csv_identical": c.csv_identical,
                    }
                    for c in comparisons
                ],
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
