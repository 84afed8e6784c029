"""MBXP, mixtral-8x7b's code samples, scored as the reference scores them: its evaluate_mbxp.py with
amazon-science/mxeval's per-language checkers, each program run in `submitter.evaluation.sandbox`.

As the reference does:
- only cpp, python, php, javascript, ruby and typescript are scored; samples in other languages are left
  out of both the passed count and the total;
- the answer is cut at its first "```"; python's is then left-stripped; every "\\_" becomes "_" (Mixtral
  escapes underscores); the prompt is not prepended (Mixtral writes it again in its answer);
- the program is answer + test code (the dataset's gt_output), joined with nothing between them; python's
  is answer, "\\n", test code, "\\n", "check(<entry point>)", run with exec() in a fresh namespace;
- compilers get 100 s, programs 20 s; a problem passes when its program exits 0 (python: the exec ends
  without an exception); a program that cannot be built, times out or crashes fails;
- typescript: `tsc main.ts --target es5 --lib es2016`, and the program is run only when tsc exits 2.
  mxeval counts 2 ("errors, output emitted") and nothing else as compiled: without @types/node every MBXP
  test's `import * as assert from 'assert'` is an error, so a correct answer always gives 2;
- javascript tests `require("lodash")`, so lodash is part of javascript's toolchain;
- score = 100 * passed / scored, unrounded.

Where this differs, on purpose:
- a language whose compiler, interpreter (or lodash) is missing here is not scored and is named in
  `missing_toolchains` with its number of problems; the reference would fail every one of them;
- programs run in the sandbox: no network, a memory limit per process (4 GiB unless set; the reference has
  none), a fresh folder each;
- the sandbox's own failures raise instead of failing the problem.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from submitter.evaluation.sandbox import (
    SandboxLimits,
    SandboxResult,
    missing_commands,
    run_sandboxed,
    sandbox_directory,
)

SCORED_LANGUAGES = ("cpp", "python", "php", "javascript", "ruby", "typescript")
RUN_SECONDS = 20.0
COMPILE_SECONDS = 100.0
MEMORY_BYTES = 4 * 2**30
DEFAULT_WORKERS = os.cpu_count() or 1
_CODE_FENCE = "```"
# Where npm -g and Debian's node-* packages put node modules; NODE_PATH's folders come first.
_NODE_MODULE_FOLDERS = ("/usr/share/nodejs", "/usr/lib/node_modules", "/usr/local/lib/node_modules")

# A python problem the way mxeval's check_correctness runs it: exec() of the program in a fresh namespace
# (so __name__ is "builtins" and `if __name__ == "__main__":` blocks are skipped), output swallowed, stdin
# readable by nothing, and the calls mxeval's reliability_guard sets to None disabled the same way. Passed
# means the exec returned; any exception, SystemExit included, fails. Calls that end the process before
# the exec returns are disabled too: in mxeval the verdict then never reaches the parent, a failure.
_PYTHON_DRIVER = r"""
import builtins, contextlib, faulthandler, io, os, shutil, subprocess, sys

class WriteOnlyText(io.StringIO):
    def read(self, *args, **kwargs):
        raise OSError("stdin is not readable")

    readline = readlines = read

    def readable(self):
        return False

def disable_escape_hatches():
    faulthandler.disable()
    os.environ["OMP_NUM_THREADS"] = "1"
    for name in ("exit", "quit", "help"):
        setattr(builtins, name, None)
    for name in (
        "kill system putenv remove removedirs rmdir fchdir setuid fork forkpty killpg rename renames"
        " truncate replace unlink fchmod fchown chmod chown chroot lchflags lchmod lchown getcwd chdir"
        " _exit execv execve execvp execvpe execl execle execlp execlpe"
    ).split():
        setattr(os, name, None)
    for name in ("rmtree", "move", "chown"):
        setattr(shutil, name, None)
    subprocess.Popen = None
    for name in ("ipdb", "joblib", "resource", "psutil", "tkinter"):
        sys.modules[name] = None

with open(sys.argv[1], encoding="utf-8") as program_file:
    program = program_file.read()
finish, report = os._exit, sys.__stderr__
disable_escape_hatches()
sink = WriteOnlyText()
try:
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        sys.stdin = sink
        exec(program, {})
except BaseException as error:
    report.write(f"failed: {error!r}\n")
    report.flush()
    finish(1)
finish(0)
"""


@dataclass(frozen=True)
class MbxpProblem:
    """One MBXP sample to score: its language and entry point (from the dataset's `id`), the model's
    answer, and the dataset's test code (`gt_output`)."""

    language: str
    entry_point: str
    response: str
    test_code: str


@dataclass(frozen=True)
class MbxpSettings:
    """How to run the problems. `path` is the PATH the toolchains are found on and programs see (default:
    this process's); `python` runs python problems (default: this interpreter, as the reference runs them
    in its own); `node_module_folders` are searched for lodash (default: NODE_PATH, then npm's and Debian's
    folders)."""

    run_seconds: float = RUN_SECONDS
    compile_seconds: float = COMPILE_SECONDS
    memory_bytes: int = MEMORY_BYTES
    path: str | None = None
    python: str = sys.executable
    node_module_folders: tuple[str, ...] | None = None
    require_isolation: bool = False


@dataclass(frozen=True)
class ProblemOutcome:
    """One scored problem. `detail` is "passed", or which step failed and how, with the end of its stderr."""

    language: str
    entry_point: str
    passed: bool
    detail: str
    network_isolated: bool


@dataclass(frozen=True)
class LanguageCounts:
    problems: int
    passed: int


@dataclass(frozen=True)
class MissingToolchain:
    """A language left unscored: what is missing here, and how many of its problems were not scored."""

    missing: tuple[str, ...]
    problems: int


@dataclass(frozen=True)
class MbxpResult:
    """The MBXP score over the problems scored (`scored`), with what was left out and why.

    `not_scored_languages`: languages the reference does not score (not counted, as there).
    `network_isolated`: every program ran without network (see the sandbox).
    """

    passed: int
    scored: int
    score: float
    per_language: Mapping[str, LanguageCounts]
    missing_toolchains: Mapping[str, MissingToolchain]
    not_scored_languages: Mapping[str, int]
    network_isolated: bool
    outcomes: tuple[ProblemOutcome, ...] = field(repr=False)


@dataclass(frozen=True)
class _Language:
    """How mxeval builds and runs one language: file name, optional compile step, run command."""

    source: str
    commands: tuple[str, ...]  # what must be on PATH
    run: tuple[str, ...]
    compile: tuple[str, ...] | None = None
    compiled_exit_codes: frozenset[int] = frozenset({0})
    node_modules: tuple[str, ...] = ()


def split_mbxp_id(sample_id: str) -> tuple[str, str]:
    """The dataset's MBXP `id` "{language}_{entry point}" -> (language, entry point), split at the first
    underscore as the reference does (entry points have underscores of their own)."""
    language, entry_point = sample_id.split("_", 1)
    return language, entry_point


def problem_from_sample(sample_id: str, response: str, test_code: str) -> MbxpProblem:
    """A problem from a dataset row's `id` and `gt_output` and the model's decoded answer."""
    language, entry_point = split_mbxp_id(sample_id)
    return MbxpProblem(language=language, entry_point=entry_point, response=response, test_code=test_code)


def solution_text(problem: MbxpProblem) -> str:
    """The answer as the reference prepares it: cut at the first code fence, python's left-stripped,
    escaped underscores unescaped."""
    solution = problem.response
    if _CODE_FENCE in solution:
        solution = solution[: solution.index(_CODE_FENCE)]
    if problem.language == "python":
        solution = solution.lstrip()
    return solution.replace("\\_", "_")


def program_text(problem: MbxpProblem) -> str:
    """The whole program mxeval runs (the prompt is empty: Mixtral repeats it in its answer)."""
    solution = solution_text(problem)
    if problem.language == "python":
        return f"{solution}\n{problem.test_code}\ncheck({problem.entry_point})"
    return solution + problem.test_code


def missing_toolchains(settings: MbxpSettings | None = None) -> dict[str, tuple[str, ...]]:
    """Each scored language whose toolchain is incomplete here -> what is missing (commands, node modules)."""
    settings = settings or MbxpSettings()
    found = {}
    for language, spec in _languages(settings).items():
        missing = missing_commands(spec.commands, _search_path(settings))
        missing += tuple(
            f"{module} (node module)"
            for module in spec.node_modules
            if _node_module_folder(module, settings) is None
        )
        if missing:
            found[language] = missing
    return found


def check_problem(problem: MbxpProblem, settings: MbxpSettings | None = None) -> ProblemOutcome:
    """Build and run one problem's program in a fresh sandbox folder. Its toolchain must be present."""
    settings = settings or MbxpSettings()
    spec = _languages(settings)[problem.language]
    files = {spec.source: program_text(problem)}
    with sandbox_directory() as folder:
        if spec.compile is not None:
            compiled = _run(spec.compile, files, folder, settings.compile_seconds, spec, settings)
            if compiled.returncode not in spec.compiled_exit_codes:
                return _outcome(problem, compiled, passed=False, stage="compile")
            files = {}
        ran = _run(spec.run, files, folder, settings.run_seconds, spec, settings)
    return _outcome(problem, ran, passed=ran.succeeded, stage="run")


def score_mbxp(
    problems: Iterable[MbxpProblem], *, workers: int = DEFAULT_WORKERS, settings: MbxpSettings | None = None
) -> MbxpResult:
    """Score every problem of a scored language whose toolchain is here, `workers` at a time (threads:
    the work is in the sandboxed processes)."""
    settings = settings or MbxpSettings()
    problems = list(problems)
    absent = missing_toolchains(settings)
    to_score = [p for p in problems if p.language in SCORED_LANGUAGES and p.language not in absent]
    with ThreadPoolExecutor(max_workers=max(workers, 1)) as pool:
        outcomes = tuple(pool.map(lambda problem: check_problem(problem, settings), to_score))
    return _result(problems, outcomes, absent)


def _languages(settings: MbxpSettings) -> dict[str, _Language]:
    return {
        "cpp": _Language(
            source="main.cpp",
            commands=("g++",),
            compile=("g++", "main.cpp", "-o", "main_cpp"),
            run=("./main_cpp",),
        ),
        "python": _Language(
            source="main.py",
            commands=(settings.python,),
            run=(settings.python, "-I", "-c", _PYTHON_DRIVER, "main.py"),
        ),
        "php": _Language(source="main.php", commands=("php",), run=("php", "main.php")),
        "javascript": _Language(
            source="main.js", commands=("node",), run=("node", "main.js"), node_modules=("lodash",)
        ),
        "ruby": _Language(source="main.rb", commands=("ruby",), run=("ruby", "main.rb")),
        "typescript": _Language(
            source="main.ts",
            commands=("tsc", "node"),
            compile=("tsc", "main.ts", "--target", "es5", "--lib", "es2016"),
            compiled_exit_codes=frozenset({2}),  # mxeval's rule; see the module's docstring
            run=("node", "main.js"),
        ),
    }


def _run(
    command: Sequence[str],
    files: Mapping[str, str],
    folder: Path,
    seconds: float,
    spec: _Language,
    settings: MbxpSettings,
) -> SandboxResult:
    module_folders = [str(_node_module_folder(module, settings)) for module in spec.node_modules]
    return run_sandboxed(
        command,
        files=files,
        workdir=folder,
        limits=SandboxLimits(wall_seconds=seconds, memory_bytes=settings.memory_bytes),
        path=settings.path,
        extra_env={"NODE_PATH": os.pathsep.join(module_folders)} if module_folders else None,
        require_isolation=settings.require_isolation,
    )


def _outcome(problem: MbxpProblem, result: SandboxResult, *, passed: bool, stage: str) -> ProblemOutcome:
    if passed:
        detail = "passed"
    elif result.timed_out:
        detail = f"{stage} timed out"
    else:
        detail = f"{stage} exited {result.returncode}: {result.stderr[-500:]}"
    return ProblemOutcome(problem.language, problem.entry_point, passed, detail, result.network_isolated)


def _result(
    problems: list[MbxpProblem], outcomes: tuple[ProblemOutcome, ...], absent: dict[str, tuple[str, ...]]
) -> MbxpResult:
    languages = Counter(problem.language for problem in problems)
    passed_by_language = Counter(outcome.language for outcome in outcomes if outcome.passed)
    scored_by_language = Counter(outcome.language for outcome in outcomes)
    passed, scored = sum(passed_by_language.values()), len(outcomes)
    return MbxpResult(
        passed=passed,
        scored=scored,
        score=100.0 * passed / scored if scored else 0.0,
        per_language={
            language: LanguageCounts(problems=count, passed=passed_by_language[language])
            for language, count in sorted(scored_by_language.items())
        },
        missing_toolchains={
            language: MissingToolchain(missing=absent[language], problems=count)
            for language, count in sorted(languages.items())
            if language in absent
        },
        not_scored_languages={
            language: count
            for language, count in sorted(languages.items())
            if language not in SCORED_LANGUAGES
        },
        network_isolated=all(outcome.network_isolated for outcome in outcomes),
        outcomes=outcomes,
    )


def _search_path(settings: MbxpSettings) -> str:
    return settings.path if settings.path is not None else os.environ.get("PATH", os.defpath)


def _node_module_folder(module: str, settings: MbxpSettings) -> Path | None:
    """The first folder holding `module`, where node will find it through NODE_PATH."""
    folders = settings.node_module_folders
    if folders is None:
        node_path = os.environ.get("NODE_PATH", "")
        folders = (*[entry for entry in node_path.split(os.pathsep) if entry], *_NODE_MODULE_FOLDERS)
    return next(
        (Path(folder) for folder in folders if (Path(folder) / module / "package.json").is_file()), None
    )
