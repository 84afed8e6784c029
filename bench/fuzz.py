"""Fuzz `submitter check`, `report` and `package` on broken copies of submission trees: crashes and hangs.

    nice -n 15 python bench/fuzz.py [--seed 1] [--cases 200] [--trees PATH|mini:NAME ...]
        [--commands check,report,package[,package-write]] [--timeout 30] [--jobs 2] [--json [FILE]]
        [--first N] [--case N] [--keep] [--workdir DIR] [--user UID]

Each case copies one tree (a submitter folder such as closed/RedHat, whose links leading out of it are
copied beside it; or a tree built by tests/minitree.py: `mini:v6.1-llm`, `mini:v5.1-edge-vision`,
`mini:v6.0-open-whisper`, `mini:v6.1-power` (a power result, with its nameplate YAML), these four when
--trees is not given), applies 1 to 3 random mutations from `bench/fuzz_mutations.py`, then runs each
command as a user would, in a fresh process with a time limit (report and package write outside the tree;
check writes its summary.csv there too). An outcome is ok (exit 0, 1 or 2 without "internal error" or a
traceback on stderr, and what it wrote parses: summary.csv as RFC 4180 CSV with its header's 31 fields in
every row, the review as UTF-8), a crash (an internal error, a traceback, another exit code or a signal),
malformed (ok but for what it wrote) or a hang (the time limit: the process gets SIGABRT, and
PYTHONFAULTHANDLER's dump on stderr says where it was).

The report counts outcomes (and exit codes) per command and lists each distinct failure once: the
command with the exception type and first line of its message, or the module of submitter a hang was
stopped in. Each comes with a recipe: the tree, the mutations, the command. Where a case had several
mutations, each is tried alone on a fresh copy and the first that fails the same way becomes the recipe
(else all are replayed together, to tell a flaky or meanwhile fixed failure); a crash is run once more
with SUBMITTER_DEBUG=1 to name the line that raised. Cases are seeded from --seed and their number alone,
so a run is the same whatever --jobs, `--first N` runs cases N, N+1, … (a long campaign in slices whose
counts add up), and `--case N` runs one case again (--keep leaves its copy in
--workdir). --json prints the summary as JSON instead of the text, --json FILE writes it beside the
text. Root passes every permission check, so a mode of 000 (chmod_000, chmod_000_folder) stops only another
user: `--user 65534` runs the commands as that user (through util-linux's setpriv; the fuzzer itself stays
root, which mutates and cleans up). Exit 1 when anything failed.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import importlib.util
import io
import json
import os
import random
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fuzz_mutations as mutations

TESTS = Path(__file__).resolve().parents[1] / "tests"
COMMANDS = ("check", "report", "package", "package-write")
DEFAULT_COMMANDS = ("check", "report", "package")
OK_CODES = (0, 1, 2)
# Trees built by tests/minitree.py: round, results (system, benchmark folder, scenario), build options.
MINITREES: dict[str, tuple[str, list[tuple[str, str, str]], dict[str, str]]] = {
    "v6.1-llm": ("v6.1", [("sys", "llama3.1-8b", "Offline"), ("sys", "llama3.1-8b", "Server")], {}),
    "v5.1-edge-vision": (
        "v5.1",
        [("edge", "resnet50", scenario) for scenario in ("Offline", "SingleStream", "MultiStream")],
        {"system_type": "edge"},
    ),
    "v6.0-open-whisper": (
        "v6.0",
        [("sys", "whisper", "Offline")],
        {"division": "open", "submitter": "OpenOrg"},
    ),
    "v6.1-power": (
        "v6.1",
        [("Sys", "resnet", scenario) for scenario in ("SingleStream", "MultiStream", "Offline")],
        {"system_type": "edge"},
    ),
}
# Minitrees whose result (benchmark folder, scenario) is made a power result: v6.1 reads the system's
# nameplate YAML for it.
POWER_RESULTS = {"v6.1-power": ("resnet", "Offline")}
SUMMARY_CSV = "summary.csv"  # what check writes into the case's scratch folder
REVIEW_FILES = ("review.md", "review.html")  # what report writes into the scratch folder's review/
INTERNAL_ERROR = re.compile(r"internal error: ([\w.]+): (.*?)(?:\. This is a bug in submitter|\Z)", re.S)
FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+),? in (\S+)', re.M)
GRACE = 5  # seconds a hung process has to write its stack after SIGABRT
KINDS = ("ok", "crash", "malformed", "hang")


def _package_folder() -> str:
    """The folder of the package under test (found, not imported), to tell its frames from the others."""
    spec = importlib.util.find_spec("submitter")
    if spec is None or spec.origin is None:
        raise SystemExit("fuzz: submitter is not installed in this Python (. .venv/bin/activate)")
    return str(Path(spec.origin).parent) + os.sep


PACKAGE = _package_folder()


@dataclass(frozen=True)
class Tree:
    name: str  # as given: a path, or mini:NAME
    root: Path  # the prepared copy's root, holding DIVISION/SUBMITTER
    submitter: str  # DIVISION/SUBMITTER


@dataclass(frozen=True)
class Settings:
    seed: int
    cases: int
    trees: tuple[Tree, ...]
    commands: tuple[str, ...]
    timeout: float
    jobs: int
    workdir: Path
    keep: bool = False
    only_case: int | None = None
    first: int = 0  # the number of the first case: slices of one seed add up to one campaign
    user: int | None = None  # run the commands as this user id (--user), not as the fuzzer's


@dataclass
class Outcome:
    command: str
    kind: str  # ok, crash, malformed (what it wrote does not parse) or hang
    code: int | None
    signature: str  # what groups failures: "" when ok
    seconds: float
    where: str = ""  # the innermost frame of submitter (a hang's dump, a crash's debug run)


@dataclass
class Case:
    index: int
    tree: Tree
    mutations: list[mutations.Applied]
    outcomes: list[Outcome]
    copy: Path | None = None  # where the mutated copy was left (--keep)
    error: str = ""  # a mutation that raised: a bug of the fuzzer, reported apart


@dataclass
class Failure:
    command: str
    kind: str
    signature: str
    cases: list[int]
    tree: str
    recipe: list[mutations.Applied]
    where: str
    minimal: bool = False  # the recipe is one mutation
    reproduced: bool = False  # the recipe failed the same way again on a fresh copy
    involved: dict[str, int] = field(default_factory=dict)  # mutation -> cases of the group it was in


@dataclass
class Summary:
    settings: Settings
    seconds: float
    counts: dict[str, Counter[str]]
    exit_codes: dict[str, Counter[str]]
    applied: Counter[str]
    failures: list[Failure] = field(default_factory=list)
    cases: list[Case] = field(default_factory=list)

    @property
    def crashes(self) -> int:
        return sum(counts["crash"] for counts in self.counts.values())

    @property
    def hangs(self) -> int:
        return sum(counts["hang"] for counts in self.counts.values())

    @property
    def malformed(self) -> int:
        return sum(counts["malformed"] for counts in self.counts.values())


# --- trees --------------------------------------------------------------------------------------------


def prepare_trees(specs: Sequence[str], workdir: Path) -> tuple[Tree, ...]:
    """Pristine, writable, self-contained copies of the trees named (paths or mini:NAME) under workdir."""
    trees = []
    for index, spec in enumerate(specs or [f"mini:{name}" for name in MINITREES]):
        root = workdir / "trees" / str(index)
        if spec.startswith("mini:"):
            trees.append(build_minitree(spec.removeprefix("mini:"), root))
        else:
            trees.append(copy_submitter(Path(spec), root))
    return tuple(trees)


def build_minitree(name: str, root: Path) -> Tree:
    if name not in MINITREES:
        raise SystemExit(f"fuzz: unknown minitree {name!r}; known: {', '.join(MINITREES)}")
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    import minitree

    round_name, results, options = MINITREES[name]
    built = minitree.build_tree(root, round_name, results, **options)
    if name in POWER_RESULTS:
        from test_check_rules import power_session  # a coherent PTD session around the result's run

        result = built.result(*POWER_RESULTS[name])
        minitree.add_power(built, result, power_session(result))
    return Tree(f"mini:{name}", root, f"{built.division}/{built.submitter}")


def copy_submitter(source: Path, root: Path) -> Tree:
    """Copy a submitter folder under root/DIVISION/; links leading out of it are copied beside, under
    root/linked/, and pointed at relatively, so that the copy of a copy still holds them."""
    source = source.resolve()
    if not source.is_dir():
        raise SystemExit(f"fuzz: {source} is not a folder (give submitter folders such as closed/RedHat)")
    submitter = f"{source.parent.name}/{source.name}"
    target = root / submitter
    shutil.copytree(source, target, symlinks=True, copy_function=shutil.copyfile)
    os.chmod(target, 0o755)
    for path, info in mutations.walk(target):
        if stat.S_ISDIR(info.st_mode):
            os.chmod(path, 0o755)
    for number, (path, _) in enumerate(entry for entry in mutations.walk(target) if entry[0].is_symlink()):
        _relink(path, source / path.relative_to(target), source, target, root / "linked" / str(number))
    return Tree(str(source), root, submitter)


def _relink(link: Path, original: Path, source: Path, target: Path, spare: Path) -> None:
    resolved = original.resolve()
    if resolved.is_relative_to(source):
        destination = target / resolved.relative_to(source)
    elif source.is_relative_to(resolved) or not (resolved.is_file() or resolved.is_dir()):
        return  # a link to an ancestor, a device or nothing: left as it is
    else:
        destination = spare / resolved.name
        spare.mkdir(parents=True)
        if resolved.is_dir():
            shutil.copytree(resolved, destination, symlinks=True, copy_function=shutil.copyfile)
        else:
            shutil.copyfile(resolved, destination)
    link.unlink()
    os.symlink(os.path.relpath(destination, link.parent), link)


def remove(path: Path) -> None:
    """rm -rf whatever a case left: modes 000, FIFOs, names that are not UTF-8, folders past PATH_MAX."""
    subprocess.run(["chmod", "-R", "u+rwX", "--", path], check=False, capture_output=True)
    subprocess.run(["rm", "-rf", "--", path], check=False, capture_output=True)


# --- running a command --------------------------------------------------------------------------------


def command_line(command: str, folder: Path, scratch: Path) -> list[str]:
    args = {
        "check": ["check", folder, "--csv", scratch / SUMMARY_CSV],
        "report": ["report", folder, "--out", scratch / "review"],
        "package": ["package", folder, "--dry-run", "--out", scratch / "dist"],
        "package-write": ["package", folder, "--force", "--out", scratch / "dist"],
    }[command]
    return [sys.executable, "-m", "submitter", *map(str, args)]


def shown(command: str, copy: str) -> str:
    """The command line of a recipe, with COPY for the mutated copy's root."""
    args = command_line(command, Path(copy), Path("SCRATCH"))[3:]
    return "submitter " + " ".join(args)


def as_user(user: int | None) -> list[str]:
    """The prefix that runs a command as `user` (None: as the fuzzer runs)."""
    return [] if user is None else ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"]


def execute(
    argv: list[str], cwd: Path, timeout: float, debug: bool = False, user: int | None = None
) -> tuple[int | None, str, float]:
    """Run argv in its own session, as `user`: (exit code or None on timeout, stderr, seconds)."""
    argv = [*as_user(user), *argv]  # setpriv execs the command: the same process, the same group
    env = {**os.environ, "PYTHONFAULTHANDLER": "1", "NO_COLOR": "1"}
    env.pop("SUBMITTER_DEBUG", None)
    if debug:
        env["SUBMITTER_DEBUG"] = "1"
    start = time.monotonic()
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        _, stderr = process.communicate(timeout=timeout)
        return process.returncode, stderr.decode("utf-8", "replace"), time.monotonic() - start
    except subprocess.TimeoutExpired:
        stderr = _stop(process)
        return None, stderr.decode("utf-8", "replace"), time.monotonic() - start


def _stop(process: subprocess.Popen[bytes]) -> bytes:
    """SIGABRT (faulthandler dumps the stack), then SIGKILL to the process group; the stderr read."""
    _signal_group(process.pid, signal.SIGABRT)
    try:
        return process.communicate(timeout=GRACE)[1]
    except subprocess.TimeoutExpired:
        _signal_group(process.pid, signal.SIGKILL)
        return process.communicate()[1]


def _signal_group(group: int, number: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, number)


def classify(command: str, code: int | None, stderr: str, scratch: Path, seconds: float) -> Outcome:
    stderr = stderr.replace(str(scratch), "<copy>")
    if code is None:
        where = innermost(stderr, first=True)
        return Outcome(command, "hang", None, _hang_signature(where), seconds, where)
    if (match := INTERNAL_ERROR.search(stderr)) is not None:
        return Outcome(command, "crash", code, f"{match[1]}: {_first_line(match[2])}", seconds)
    if "Traceback" in stderr:
        return Outcome(
            command, "crash", code, _first_line(_last_exception(stderr)), seconds, innermost(stderr)
        )
    if code < 0:
        return Outcome(command, "crash", code, f"signal {_signal_name(-code)}", seconds, innermost(stderr))
    if code not in OK_CODES:
        return Outcome(command, "crash", code, f"exit {code}", seconds)
    return Outcome(command, "ok", code, "", seconds)


def _hang_signature(where: str) -> str:
    """Hangs group by the module of submitter they were stopped in (a long walk stops anywhere in it)."""
    match = re.match(r"(\S+):\d+ in ", where)
    return f"hang in {match[1]}" if match else "hang"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def _first_line(text: str) -> str:
    line = next((line for line in text.strip().splitlines() if line.strip()), "")
    return re.sub(r"\d{3,}", "N", line)[:160]


def _last_exception(stderr: str) -> str:
    """The exception line of a traceback: the last line that is not indented."""
    tail = stderr.split("Traceback")[-1].splitlines()
    lines = [line for line in tail[1:] if line and not line.startswith(" ")]
    return lines[-1] if lines else "Traceback"


def innermost(stderr: str, first: bool = False) -> str:
    """The innermost frame of submitter in a traceback (last frame) or a faulthandler dump (first frame),
    and the innermost frame of all when it lies elsewhere (the json decoder, the standard library)."""
    frames = [(path, line, name) for path, line, name in FRAME.findall(stderr)]
    if not frames:
        return ""
    ordered = frames if first else frames[::-1]
    ours = next((frame for frame in ordered if frame[0].startswith(PACKAGE)), None)
    texts = [_frame(frame) for frame in (ours, ordered[0]) if frame is not None]
    return texts[0] if len(set(texts)) == 1 else f"{texts[0]} (innermost: {texts[-1]})"


def _frame(frame: tuple[str, str, str]) -> str:
    path, line, name = frame
    short = "submitter/" + path.removeprefix(PACKAGE) if path.startswith(PACKAGE) else path
    short = re.sub(r"^.*/lib/python[\d.]+/", "", short)
    return f"{short}:{line} in {name}"


def run_command(
    command: str, folder: Path, scratch: Path, timeout: float, user: int | None = None
) -> Outcome:
    argv = command_line(command, folder, scratch)
    code, stderr, seconds = execute(argv, scratch, timeout, user=user)
    return judged(command, code, stderr, scratch, seconds)


def judged(command: str, code: int | None, stderr: str, scratch: Path, seconds: float) -> Outcome:
    """The outcome of a run: how it ended (`classify`), then, where it ended well, what it wrote."""
    outcome = classify(command, code, stderr, scratch, seconds)
    if outcome.kind == "ok" and (problem := output_problem(command, code, scratch)) is not None:
        return Outcome(command, "malformed", code, problem, seconds)
    return outcome


def output_problem(command: str, code: int | None, scratch: Path) -> str | None:
    """Why what a command wrote does not parse (None when it does): check's summary.csv must be CSV of the
    official columns (checked whenever check ended 0 or 1), report's documents UTF-8 (once it ended 0)."""
    if command == "check" and code in (0, 1):
        return csv_problem(scratch / SUMMARY_CSV)
    if command == "report" and code == 0:
        return next(filter(None, (utf8_problem(scratch / "review" / name) for name in REVIEW_FILES)), None)
    return None


def csv_problem(path: Path) -> str | None:
    """Why a summary.csv is not RFC 4180 CSV with as many fields in every row as its header names."""
    try:
        text = path.read_bytes().decode("utf-8")
        rows = list(csv.reader(io.StringIO(text, newline=""), strict=True))
    except FileNotFoundError:
        return "summary.csv not written"
    except (UnicodeDecodeError, csv.Error) as exc:
        return f"summary.csv does not parse: {type(exc).__name__}: {_first_line(str(exc))}"
    widths = sorted({len(row) for row in rows})
    if not rows or widths != [len(rows[0])]:
        return f"summary.csv rows of {widths} fields, the header {len(rows[0]) if rows else 0}"
    return None


def utf8_problem(path: Path) -> str | None:
    try:
        path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return f"{path.name} not written"
    except UnicodeDecodeError as exc:
        return f"{path.name} is not UTF-8: {_first_line(str(exc))}"
    return None


# --- cases --------------------------------------------------------------------------------------------


def case_rng(seed: int, index: int) -> random.Random:
    return random.Random(f"fuzz/{seed}/{index}")


def fresh_copy(tree: Tree, settings: Settings, label: str) -> tuple[Path, Path]:
    """A scratch folder with a copy of the tree: (scratch, the copy's submitter folder)."""
    scratch = Path(tempfile.mkdtemp(prefix=f"{label}-", dir=settings.workdir))
    shutil.copytree(tree.root, scratch / "tree", symlinks=True)
    if settings.user is not None:  # the commands read the copy and write their outputs beside it
        os.chown(scratch, settings.user, settings.user)
        os.chmod(scratch / "tree", 0o755)
    return scratch, scratch / "tree" / tree.submitter


def run_case(index: int, settings: Settings) -> Case:
    rng = case_rng(settings.seed, index)
    tree = rng.choice(settings.trees)
    count = rng.randint(1, 3)
    scratch, folder = fresh_copy(tree, settings, f"case{index:05d}")
    case = Case(index, tree, [], [], scratch if settings.keep else None)
    try:
        for _ in range(count):
            if (done := mutations.draw(folder, rng)) is not None:
                case.mutations.append(done)
        case.outcomes = [
            run_command(command, folder, scratch, settings.timeout, settings.user)
            for command in settings.commands
        ]
    except Exception as error:  # a mutation's own bug: named in the report, the other cases go on
        case.error = f"{type(error).__name__}: {error}"
    finally:
        if not settings.keep:
            remove(scratch)
    return case


def replay_case(
    tree: Tree, applied: Sequence[mutations.Applied], command: str, settings: Settings, debug: bool = False
) -> Outcome | None:
    """The outcome of one command on a fresh copy with these mutations; None when one cannot apply."""
    scratch, folder = fresh_copy(tree, settings, "replay")
    try:
        if not all(mutations.replay(folder, one) for one in applied):
            return None
        code, stderr, seconds = execute(
            command_line(command, folder, scratch), scratch, settings.timeout, debug, settings.user
        )
        outcome = judged(command, code, stderr, scratch, seconds)
        if debug and not outcome.where:
            outcome.where = innermost(stderr.replace(str(scratch), "<copy>"))
        return outcome
    finally:
        remove(scratch)


def minimise(case: Case, outcome: Outcome, settings: Settings) -> Failure:
    """The failure's recipe: one mutation alone where one fails the same way (else all of them, replayed to
    tell a flaky or meanwhile fixed failure), and, for a crash, the line that raised."""
    recipe, minimal, reproduced = case.mutations, False, False
    for single in case.mutations:
        again = replay_case(case.tree, [single], outcome.command, settings)
        if _same(again, outcome):
            recipe, minimal, reproduced = [single], True, True
            break
    if not minimal and len(case.mutations) > 1:
        reproduced = _same(replay_case(case.tree, case.mutations, outcome.command, settings), outcome)
    where = outcome.where
    if outcome.kind == "crash" and not where:
        debug = replay_case(case.tree, recipe, outcome.command, settings, debug=True)
        where = debug.where if debug is not None else ""
    failure = Failure(outcome.command, outcome.kind, outcome.signature, [], case.tree.name, recipe, where)
    failure.minimal, failure.reproduced = minimal or len(case.mutations) == 1, reproduced
    return failure


def _same(again: Outcome | None, outcome: Outcome) -> bool:
    """The same failure again: the same crash, or a hang (wherever it was stopped this time)."""
    if again is None or again.kind != outcome.kind:
        return False
    return outcome.kind == "hang" or again.signature == outcome.signature


def failures(cases: Sequence[Case], settings: Settings) -> list[Failure]:
    """Distinct failures (command, signature), each with the cases showing it and the first one's recipe."""
    groups: dict[tuple[str, str], list[tuple[Case, Outcome]]] = {}
    for case in cases:
        for outcome in case.outcomes:
            if outcome.kind != "ok":
                groups.setdefault((outcome.command, outcome.signature), []).append((case, outcome))
    with ThreadPoolExecutor(max_workers=max(1, settings.jobs)) as pool:
        found = list(pool.map(lambda members: minimise(*members[0], settings), groups.values()))
    for failure, members in zip(found, groups.values(), strict=True):
        failure.cases = [case.index for case, _ in members]
        involved = Counter(name for case, _ in members for name in {one.name for one in case.mutations})
        failure.involved = dict(involved.most_common())
    return found


def fuzz(settings: Settings, progress: Callable[[str], None] | None = None) -> Summary:
    """Run the cases (all, or --case N) on settings.jobs workers, then group and minimise the failures."""
    start = time.monotonic()
    indices = (
        [settings.only_case]
        if settings.only_case is not None
        else list(range(settings.first, settings.first + settings.cases))
    )
    cases: list[Case] = []
    with ThreadPoolExecutor(max_workers=max(1, settings.jobs)) as pool:
        pending = [pool.submit(run_case, index, settings) for index in indices]
        for done, future in enumerate(as_completed(pending), 1):
            cases.append(future.result())
            if progress is not None and (done % max(len(indices) // 10, 10) == 0 or done == len(indices)):
                bad = sum(outcome.kind != "ok" for case in cases for outcome in case.outcomes)
                progress(f"fuzz: {done}/{len(indices)} cases, {bad} failed command(s)")
    cases.sort(key=lambda case: case.index)
    summary = Summary(settings, 0.0, *_tally(cases, settings.commands), cases=cases)
    summary.failures = failures(cases, settings)
    summary.seconds = time.monotonic() - start
    return summary


def _tally(
    cases: Sequence[Case], commands: Sequence[str]
) -> tuple[dict[str, Counter[str]], dict[str, Counter[str]], Counter[str]]:
    counts = {command: Counter(dict.fromkeys(KINDS, 0)) for command in commands}
    codes: dict[str, Counter[str]] = {command: Counter() for command in commands}
    applied = Counter(one.name for case in cases for one in case.mutations)
    for case in cases:
        for outcome in case.outcomes:
            counts[outcome.command][outcome.kind] += 1
            codes[outcome.command][str(outcome.code) if outcome.code is not None else "timeout"] += 1
    return counts, codes, applied


# --- reporting ----------------------------------------------------------------------------------------


def render_text(summary: Summary) -> str:
    settings = summary.settings
    lines = [
        f"fuzz: seed {settings.seed}, {len(summary.cases)} case(s){_numbered(summary)} "
        f"over {len(settings.trees)} tree(s), "
        f"commands {', '.join(settings.commands) or 'none'}{_as_user_text(settings)}, "
        f"time limit {settings.timeout:g} s, {settings.jobs} job(s), {summary.seconds:.1f} s",
        f"{'command':<14} {'runs':>5} {'ok':>5} {'crash':>6} {'malformed':>9} {'hang':>5}  exit codes",
    ]
    for command, counts in summary.counts.items():
        codes = ", ".join(f"{code}: {n}" for code, n in sorted(summary.exit_codes[command].items()))
        runs = sum(counts.values())
        lines.append(
            f"{command:<14} {runs:>5} {counts['ok']:>5} {counts['crash']:>6} {counts['malformed']:>9} "
            f"{counts['hang']:>5}  {codes}"
        )
    lines.extend(_slowest_line(summary))
    applied = ", ".join(f"{name} {n}" for name, n in sorted(summary.applied.items()))
    lines.append(f"mutations applied ({sum(summary.applied.values())}): {applied or 'none'}")
    errors = [case for case in summary.cases if case.error]
    if errors:
        lines.append(
            f"fuzzer errors (a mutation raised) in {len(errors)} case(s), first: case {errors[0].index}, "
            f"{errors[0].error}"
        )
    if settings.only_case is not None:
        lines.extend(_case_lines(case) for case in summary.cases)
    lines.append(f"distinct failures: {len(summary.failures)}")
    for number, failure in enumerate(summary.failures, 1):
        lines.extend(_failure_lines(number, failure, settings))
    return "\n".join(lines)


def _as_user_text(settings: Settings) -> str:
    return f" as user {settings.user}" if settings.user is not None else ""


def _numbered(summary: Summary) -> str:
    first = summary.settings.first
    return f" (numbers {first} to {first + len(summary.cases) - 1})" if first and summary.cases else ""


def _slowest(summary: Summary) -> tuple[float, str, int] | None:
    """The slowest run that ended by itself (seconds, command, case): how much room the limit leaves."""
    ended = [
        (outcome.seconds, outcome.command, case.index)
        for case in summary.cases
        for outcome in case.outcomes
        if outcome.kind == "ok"
    ]
    return max(ended) if ended else None


def _slowest_line(summary: Summary) -> list[str]:
    slowest = _slowest(summary)
    if slowest is None:
        return []
    seconds, command, index = slowest
    return [f"slowest ok run: {seconds:.1f} s ({command}, case {index})"]


def _case_lines(case: Case) -> str:
    applied = "".join(f"\n    mutation: {one.recipe()}" for one in case.mutations)
    outcomes = "".join(
        f"\n    {outcome.command}: {outcome.kind}, exit {outcome.code}, {outcome.seconds:.1f} s "
        f"{outcome.signature}"
        for outcome in case.outcomes
    )
    return f"case {case.index} on {case.tree.name}:{applied}{outcomes}"


def _failure_lines(number: int, failure: Failure, settings: Settings) -> list[str]:
    shown_cases = ", ".join(map(str, failure.cases[:12])) + (" ..." if len(failure.cases) > 12 else "")
    what = failure.signature if failure.kind == "hang" else f"{failure.kind} {failure.signature}"
    lines = [
        f"[{number}] {failure.command}: {what} ({len(failure.cases)} case(s): {shown_cases})",
        f"    tree: {failure.tree}",
        f"    mutation{'s' if len(failure.recipe) != 1 else ''}{_replayed(failure)}:",
        *(f"      {one.recipe()}" for one in failure.recipe),
        f"    command: {shown(failure.command, 'COPY/' + _submitter_of(failure, settings))}",
    ]
    if failure.where:
        lines.append(f"    where: {failure.where}")
    if len(failure.cases) > 1:
        common = ", ".join(f"{name} {n}" for name, n in list(failure.involved.items())[:6])
        lines.append(f"    mutations in its {len(failure.cases)} cases: {common}")
    trees = " ".join(tree.name for tree in settings.trees)
    lines.append(
        f"    again: python bench/fuzz.py --seed {settings.seed} --case {failure.cases[0]} --trees {trees} "
        f"--commands {failure.command} --keep{_user_option(settings)}"
    )
    return lines


def _user_option(settings: Settings) -> str:
    return f" --user {settings.user}" if settings.user is not None else ""


def _replayed(failure: Failure) -> str:
    if not failure.reproduced:
        return " (did not fail the same way again on a fresh copy: timing, or fixed meanwhile)"
    return "" if len(failure.recipe) == 1 else " (together; none fails alone)"


def _submitter_of(failure: Failure, settings: Settings) -> str:
    return next(tree.submitter for tree in settings.trees if tree.name == failure.tree)


def render_json(summary: Summary) -> dict[str, Any]:
    settings = summary.settings
    return {
        "seed": settings.seed,
        "cases": len(summary.cases),
        "first_case": settings.first,
        "trees": [tree.name for tree in settings.trees],
        "commands": list(settings.commands),
        "timeout_s": settings.timeout,
        "jobs": settings.jobs,
        "user": settings.user,
        "seconds": round(summary.seconds, 1),
        "counts": {command: dict(counts) for command, counts in summary.counts.items()},
        "exit_codes": {command: dict(codes) for command, codes in summary.exit_codes.items()},
        "mutations_applied": dict(sorted(summary.applied.items())),
        "crashes": summary.crashes,
        "malformed": summary.malformed,
        "hangs": summary.hangs,
        "slowest_ok_run": dict(zip(("seconds", "command", "case"), _slowest(summary) or (), strict=False)),
        "fuzzer_errors": {str(case.index): case.error for case in summary.cases if case.error},
        "failures": [
            {
                **asdict(failure),
                "command_line": shown(failure.command, "COPY/" + _submitter_of(failure, settings)),
            }
            for failure in summary.failures
        ],
    }


# --- command line -------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument(
        "--first", type=int, default=0, help="number of the first case (run a long campaign in slices)"
    )
    parser.add_argument("--trees", nargs="+", default=[], help="submitter folders, or mini:NAME")
    parser.add_argument("--commands", default=",".join(DEFAULT_COMMANDS), help=f"of {', '.join(COMMANDS)}")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds a command may run")
    parser.add_argument("--jobs", type=int, default=2, help="cases run at once")
    parser.add_argument(
        "--json",
        nargs="?",
        const="-",
        metavar="FILE",
        help="the summary as JSON: on stdout instead of the text, or into FILE beside the text",
    )
    parser.add_argument("--case", type=int, help="run only case N of this seed (see a failure's 'again')")
    parser.add_argument("--keep", action="store_true", help="keep the mutated copies and --workdir")
    parser.add_argument("--workdir", type=Path, help="scratch folder (default: a new temporary folder)")
    parser.add_argument(
        "--user", type=int, metavar="UID", help="run the commands as this user id (as root: 65534, nobody)"
    )
    args = parser.parse_args(argv)
    if args.user is not None and (os.geteuid() != 0 or shutil.which("setpriv") is None):
        parser.error("--user needs root (to change to that user, and back) and util-linux's setpriv")
    commands = tuple(name for name in args.commands.split(",") if name)
    unknown = sorted(set(commands) - set(COMMANDS))
    if unknown:
        parser.error(f"unknown command(s) {', '.join(unknown)}; known: {', '.join(COMMANDS)}")
    args.commands = commands
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="submitter-fuzz-"))
    workdir.mkdir(parents=True, exist_ok=True)
    if args.user is not None:
        os.chmod(workdir, 0o755)  # mkdtemp's folder is private: the user enters it to reach the copies
    try:
        settings = Settings(
            seed=args.seed,
            cases=args.cases,
            trees=prepare_trees(args.trees, workdir),
            commands=args.commands,
            timeout=args.timeout,
            jobs=args.jobs,
            workdir=workdir,
            keep=args.keep,
            only_case=args.case,
            first=args.first,
            user=args.user,
        )
        summary = fuzz(settings, progress=lambda line: print(line, file=sys.stderr, flush=True))
    finally:
        if not args.keep and args.workdir is None:
            remove(workdir)
    if args.keep:
        for case in summary.cases:
            print(f"case {case.index}: the mutated copy is in {case.copy}", file=sys.stderr)
    if args.json not in (None, "-"):
        Path(args.json).write_text(json.dumps(render_json(summary), indent=2) + "\n")
    print(json.dumps(render_json(summary), indent=2) if args.json == "-" else render_text(summary))
    return 1 if summary.failures or any(case.error for case in summary.cases) else 0


if __name__ == "__main__":
    sys.exit(main())
