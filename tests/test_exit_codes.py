"""One table of exit codes for every command, run as a user runs them (a fresh process each):

0 ok · 1 findings, or a run or check that failed · 2 usage or input error (an unknown round, system,
benchmark or file; a malformed descriptor, dataset or JSON file; a destination that cannot be
written) · 130 interrupted (Ctrl-C or SIGTERM alike), with nothing half-written left behind.
"""

from __future__ import annotations

import json
import shutil
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import minitree
import pytest
from conftest import readable_folder, remove_folder
from test_cli_writes import (
    STAGE_FLAGS,
    big_package_tree,
    cli,
    leftovers,
    padded_runs,
    start,
    wait_for,
)

from harness.ledger import read_events
from submitter.workspace import RUNS

DEMO_INPUTS = ("--dataset", "data.json", "--model", "model")
RUN = ("run", "--scenario", "Offline", "--mode", "performance", "--smoke")
STAGE = ("stage", "--system", "fast_cpu.json", "--runs-dir", "runs", *STAGE_FLAGS)


@pytest.fixture(scope="module")
def prepared(stage_inputs: tuple[Path, Path]) -> Path:
    """One folder with every input the table names: the demo's dataset and model, a staged tree of
    --smoke runs (its check fails), a valid tree, broken inputs, and copies of an accuracy and a
    performance run."""
    folder = readable_folder("submitter-exit-codes-")
    made = cli("data", "synth", "--out", "data.json", "--samples", "64", "--demo-model", "model", cwd=folder)
    assert made.returncode == 0, made.stderr
    descriptor, runs = stage_inputs
    shutil.copy(descriptor, folder / "fast_cpu.json")
    shutil.copytree(runs, folder / "runs")
    staged = cli(*STAGE, "--out", "staged", cwd=folder)
    assert staged.returncode == 1, staged.stderr
    minitree.build_tree(folder / "valid", "v6.1", [("sys", "llama3.1-8b", s) for s in ("Offline", "Server")])
    for mode, copy in (("accuracy", "acc_run"), ("performance", "perf_run")):
        shutil.copytree(next((folder / "runs").glob(f"*/*/Offline/{mode}/*")), folder / copy)
    (folder / "broken.json").write_text('{"id": "broken", "system": {\n')
    demo = json.loads((Path(__file__).resolve().parents[1] / "systems/demo_cpu.json").read_text())
    (folder / "unknown_round.json").write_text(json.dumps({**demo, "id": "unknown_round", "round": "v9.9"}))
    (folder / "bad_dataset.json").write_text('[{"tok_input": [1, 2')
    return folder


@dataclass(frozen=True)
class Case:
    args: tuple[str, ...]
    code: int
    says: str = ""  # a part of the output that explains the code (findings go to stdout)


CASES: dict[str, Case] = {
    # the command line itself
    "--version": Case(("--version",), 0),
    "unknown command": Case(("nope",), 2, "No such command"),
    "missing option": Case(("run", "--system", "demo_cpu"), 2, "Missing option"),
    # rounds, rules, systems
    "rounds list": Case(("rounds", "list"), 0),
    "rounds show": Case(("rounds", "show", "v6.1"), 0),
    "rounds show: unknown round": Case(("rounds", "show", "v9.9"), 2, "unknown round 'v9.9'"),
    "rules": Case(("rules",), 0),
    "systems list": Case(("systems", "list"), 0),
    "systems show": Case(("systems", "show", "demo_cpu"), 0),
    "systems show: unknown system": Case(("systems", "show", "nope"), 2, "'nope'"),
    "systems validate": Case(("systems", "validate", "demo_cpu"), 0),
    "systems validate: findings": Case(("systems", "validate", "broken.json"), 1, "is not valid JSON"),
    "systems schema": Case(("systems", "schema"), 0),
    "systems probe": Case(("systems", "probe"), 0),
    # check, report, package
    "check: findings": Case(("check", "staged"), 1),
    "check: unknown tree": Case(("check", "nowhere"), 2, "no such directory"),
    "check: unknown round": Case(("check", "staged", "--round", "v9.9"), 2),
    "report": Case(("report", "staged", "--out", "review"), 0),
    "report: unknown tree": Case(("report", "nowhere"), 2, "no such directory"),
    "report: --out inside the tree": Case(
        ("report", "staged", "--out", "staged/open/review"), 2, "inside the tree being reviewed"
    ),
    "package": Case(("package", "valid/closed/Org", "--round", "v6.1", "--dry-run"), 0),
    "package: findings": Case(("package", "staged/open/Demo", "--dry-run"), 1),
    "package: unknown tree": Case(("package", "nowhere"), 2, "no such directory"),
    # stage
    "stage: its check fails": Case((*STAGE, "--out", "restaged"), 1, "FAILS with"),
    "stage: no runs": Case((*STAGE[:3], "--runs-dir", "no_runs", "--out", "none"), 1, "nothing was staged"),
    "stage: unknown system": Case(("stage", "--system", "nope"), 2, "'nope'"),
    "stage: unknown round in the descriptor": Case(("stage", "--system", "unknown_round.json"), 2, "v9.9"),
    "stage: malformed descriptor": Case(("stage", "--system", "broken.json"), 2, "is not valid JSON"),
    "stage: another division": Case((*STAGE, "--division", "closed", "--out", "x"), 2, "--division is"),
    # run, run-all, tune-qps
    "run": Case((*RUN, "--system", "demo_cpu", *DEMO_INPUTS, "--runs-dir", "new_runs"), 0),
    "run: unknown round in the descriptor": Case((*RUN, "--system", "unknown_round.json"), 2, "v9.9"),
    "run: malformed descriptor": Case((*RUN, "--system", "broken.json"), 2, "is not valid JSON"),
    "run: unknown benchmark": Case((*RUN, "--system", "demo_cpu", "--benchmark", "nope"), 2, "'nope'"),
    "run: missing dataset": Case(
        (*RUN, "--system", "demo_cpu", "--dataset", "missing.json"), 2, "does not exist"
    ),
    "run: malformed dataset": Case(
        (*RUN, "--system", "demo_cpu", "--dataset", "bad_dataset.json"), 2, "is not valid JSON"
    ),
    "run-all --dry-run": Case(("run-all", "--system", "demo_cpu", "--smoke", "--dry-run", *DEMO_INPUTS), 0),
    "run-all: malformed dataset": Case(
        ("run-all", "--system", "demo_cpu", "--dry-run", "--dataset", "bad_dataset.json"), 2, "not valid JSON"
    ),
    "run-all: unknown benchmark": Case(
        ("run-all", "--system", "demo_cpu", "--dry-run", "--benchmark", "nope"), 2, "nope"
    ),
    "tune-qps: unknown system": Case(("tune-qps", "--system", "nope", "--scenario", "Server"), 2, "'nope'"),
    "tune-qps: Offline": Case(("tune-qps", "--system", "demo_cpu", "--scenario", "Offline"), 2),
    "tune-qps: malformed dataset": Case(
        ("tune-qps", "--system", "demo_cpu", "--scenario", "Server", "--dataset", "bad_dataset.json"),
        2,
        "not valid JSON",
    ),
    # accuracy
    "accuracy": Case(("accuracy", "acc_run", "--workers", "1"), 0, "accuracy passes"),
    "accuracy: malformed dataset": Case(("accuracy", "acc_run", "--dataset", "bad_dataset.json"), 2),
    "accuracy: a performance run": Case(("accuracy", "perf_run"), 2, "is a performance run"),
    "accuracy: unknown folder": Case(("accuracy", "nowhere"), 2),
    # data
    "data synth": Case(("data", "synth", "--samples", "4", "--out", "small.json"), 0),
    "data synth: unknown round": Case(("data", "synth", "--round", "v9.9", "--out", "x.json"), 2, "v9.9"),
    "data synth: unknown benchmark": Case(("data", "synth", "--benchmark", "nope", "--out", "x.json"), 2),
    "data dummy-model": Case(("data", "dummy-model", "--out", "dummy"), 0),
    "data dummy-model: unknown benchmark": Case(
        ("data", "dummy-model", "--benchmark", "nope", "--out", "d"), 2
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_exit_code(name: str, prepared: Path) -> None:
    case = CASES[name]
    result = cli(*case.args, cwd=prepared)
    assert result.returncode == case.code, f"{name}: {result.stderr}"
    assert case.says in result.stderr + result.stdout, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr


# -- interrupted in the middle: 130, and nothing half-written ----------------------------------------


@dataclass(frozen=True)
class Interruption:
    """A long command, what to wait for before the signal, and what must not be left after it."""

    # The command, given its folder (after preparing it) and the session's runs to stage.
    start: Callable[[Path, tuple[Path, Path]], tuple[str, ...]]
    working: str  # a glob, in the folder, that exists while the work is under way
    left: Callable[[Path], list[str]]  # what is left that must not be


def _synth(folder: Path, stage_inputs: tuple[Path, Path]) -> tuple[str, ...]:
    return ("data", "synth", "--out", "cnn.json")


def _package(folder: Path, stage_inputs: tuple[Path, Path]) -> tuple[str, ...]:
    return ("package", str(big_package_tree(folder / "tree")), "--out", "dist")


def _stage(folder: Path, stage_inputs: tuple[Path, Path]) -> tuple[str, ...]:
    descriptor, source = stage_inputs
    runs = padded_runs(source, folder / "runs")
    return ("stage", "--system", str(descriptor), "--runs-dir", str(runs), "--out", "tree", *STAGE_FLAGS)


def _run_all(folder: Path, stage_inputs: tuple[Path, Path]) -> tuple[str, ...]:
    made = cli("data", "synth", "--out", "data.json", "--samples", "64", "--demo-model", "model", cwd=folder)
    assert made.returncode == 0, made.stderr
    return ("run-all", "--system", "demo_cpu", "--scenario", "Offline", "--smoke", *DEMO_INPUTS)


def _files(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*") if path.is_file())


def _run_all_leftovers(folder: Path) -> list[str]:
    """The interrupted run keeps its logs and a run.json saying so (that is its record, not a leftover);
    temporaries and a plan that does not say it was interrupted would be."""
    runs = folder / RUNS
    assert read_events(runs)[-1].event == "plan-interrupted"
    records = [json.loads(path.read_text()) for path in runs.rglob("run.json")]
    assert records and records[-1]["status"] in ("interrupted", "completed")
    return [name for name in _files(runs) if name.endswith(".tmp")]


INTERRUPTIONS: dict[str, Interruption] = {
    "data synth": Interruption(_synth, ".cnn.json.*.tmp", lambda f: [*leftovers(f), *_files(f)]),
    "package": Interruption(_package, "dist/.Acme.tar.gz.*.tmp", lambda f: _files(f / "dist")),
    "stage": Interruption(
        _stage,
        ".tree.staging-*",
        lambda f: [*leftovers(f), *(n for n in ("tree", "tree-staging") if (f / n).exists())],
    ),
    "run-all": Interruption(
        _run_all, "work/runs/demo_cpu/llama3.1-8b/Offline/TEST06/*/mlperf_log_detail.txt", _run_all_leftovers
    ),
}


@pytest.mark.parametrize("name", list(INTERRUPTIONS))
@pytest.mark.slow
def test_sigterm_in_the_middle_exits_130_and_leaves_nothing_half_written(
    name: str, stage_inputs: tuple[Path, Path]
) -> None:
    interruption = INTERRUPTIONS[name]
    folder = readable_folder("submitter-sigterm-")
    try:
        process = start(*interruption.start(folder, stage_inputs), cwd=folder)
        wait_for(folder, interruption.working, process)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=120)
        assert process.returncode == 130, stderr
        assert "interrupted" in stderr and "Traceback" not in stderr, stderr
        assert interruption.left(folder) == []
    finally:
        remove_folder(folder)
