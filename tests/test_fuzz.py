"""bench/fuzz.py: each mutation applies, cases replay, outcomes are classified, a seeded slice passes."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import random
import shutil
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import fuzz
from fuzz_mutations import CATALOGUE, MAX_READ, draw, pick, replay, walk

# The failures an earlier fuzzing round found, and the hostile files the tools handled: all in the catalogue.
REQUIRED = {
    "mllog_deep_list",
    "json_deep_nesting",
    "json_huge_int",
    "measurements_huge_int",
    "mllog_huge_int",
    "system_huge_int",
    "non_utf8_folder",
    "fifo_log",
    "symlink_dev_zero",
    "symlink_dev_urandom",
    "symlink_root",
    "symlink_loop",
    "chmod_000",
    "file_to_folder",
    "folder_to_file",
    "huge_line",
    "json_nan",
    "json_duplicate_key",
    "option_like_name",
    "truncate",
    "empty_file",
    "delete_file",
    "flip_bytes",
    "insert_bytes",
    "duplicate_line",
    "json_retype",
    "remove_folder",
    "stray_file",
    "rename_folder",
    "deep_nesting",
    "long_file_name",
    "invalid_utf8",
    "crlf",
    "bom",
    # The second round: numbers past a double, YAML aliases, an unreadable folder, text that breaks CSV.
    "mllog_past_double",
    "mllog_duplicate_past_double",
    "nameplate_self_reference",
    "nameplate_alias_bomb",
    "chmod_000_folder",
    "system_csv_text",
}
# The CI slice: a fixed seed, the four minitrees, check, report and package --dry-run.
# Seed 528: its 30 cases apply 36 kinds of mutation, among them all 14 of the known failures (both
# nameplate YAML mutations on the power minitree, which reads its nameplate).
SLICE_SEED = 528
SLICE_CASES = 30
SLICE_TIMEOUT = 20.0


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> fuzz.Tree:
    return fuzz.build_minitree("v6.1-llm", tmp_path_factory.mktemp("base"))


@pytest.fixture
def copies(base: fuzz.Tree, tmp_path: Path) -> Iterator[list[Path]]:
    """Two fresh copies of the minitree's submitter folder, removed however they were broken."""
    for name in ("a", "b"):
        shutil.copytree(base.root, tmp_path / name, symlinks=True)
    yield [tmp_path / name / base.submitter for name in ("a", "b")]
    for name in ("a", "b"):
        fuzz.remove(tmp_path / name)


def _settings(workdir: Path, trees: tuple[fuzz.Tree, ...], **changes: Any) -> fuzz.Settings:
    """The CI slice's settings, or these settings changed."""
    settings = fuzz.Settings(
        seed=SLICE_SEED,
        cases=SLICE_CASES,
        trees=trees,
        commands=fuzz.DEFAULT_COMMANDS,
        timeout=SLICE_TIMEOUT,
        jobs=2,
        workdir=workdir,
    )
    return dataclasses.replace(settings, **changes)


def snapshot(root: Path) -> dict[bytes, tuple[int, int, int, str | None]]:
    """Every entry's type, mode, size and content (or link target), by path; times left out."""
    state = {b".": (0, stat.S_IMODE(root.stat().st_mode), 0, None)}
    for path, info in walk(root):
        content = None
        if stat.S_ISLNK(info.st_mode):
            content = os.readlink(path)
        elif stat.S_ISREG(info.st_mode) and info.st_size <= MAX_READ:
            content = hashlib.sha256(path.read_bytes()).hexdigest()
        mode = info.st_mode
        state[os.fsencode(path.relative_to(root))] = (
            stat.S_IFMT(mode),
            stat.S_IMODE(mode),
            info.st_size,
            content,
        )
    return state


def test_the_catalogue_holds_every_known_failure_and_hostile_file():
    assert set(CATALOGUE) >= REQUIRED, sorted(REQUIRED - set(CATALOGUE))
    assert all(mutation.summary for mutation in CATALOGUE.values())


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_each_mutation_changes_a_minitree(name: str, copies: list[Path]):
    folder = copies[0]
    mutation = CATALOGUE[name]
    before = snapshot(folder)
    target = pick(folder, mutation.target, random.Random(0))
    assert target is not None, f"a minitree has no {mutation.target.value}"
    assert mutation.apply(target, random.Random(0))
    assert snapshot(folder) != before


@pytest.mark.parametrize("name", ["deep_nesting", "nesting_beyond_path_max"])
def test_nesting_twice_in_one_place_applies_both_times(name: str, tmp_path: Path):
    """Case 324 of the seed-2026 campaign drew deep_nesting twice for one folder; the second raised."""
    for seed in (1, 2):
        assert CATALOGUE[name].apply(tmp_path, random.Random(seed))
    assert len(list(tmp_path.iterdir())) == 2


@pytest.mark.parametrize("seed", range(6))
def test_a_drawn_case_replays_on_a_fresh_copy(seed: int, copies: list[Path]):
    drawn, fresh = copies
    rng = random.Random(seed)
    applied = [draw(drawn, rng) for _ in range(3)]
    assert all(applied)
    assert all(replay(fresh, one) for one in applied if one is not None)
    assert snapshot(fresh) == snapshot(drawn)


def test_cases_are_the_same_whatever_the_jobs(base: fuzz.Tree, tmp_path: Path):
    def mutations(jobs: int) -> list[list[fuzz.mutations.Applied]]:
        summary = fuzz.fuzz(_settings(tmp_path, (base,), cases=6, commands=(), jobs=jobs))
        return [case.mutations for case in summary.cases]

    assert mutations(1) == mutations(3)


@pytest.mark.parametrize(
    ("code", "stderr", "kind", "signature"),
    [
        (1, "3 error(s), 0 warning(s)", "ok", ""),
        (2, "error: no tree at X", "ok", ""),
        (
            1,
            "internal error: ValueError: Exceeds the limit (4300 digits) for integer string conversion; "
            "use sys.set_int_max_str_digits() to increase the limit. This is a bug in submitter; rerun",
            "crash",
            "ValueError: Exceeds the limit (N digits) for integer string conversion; "
            "use sys.set_int_max_str_digits() to increase the limit",
        ),
        (
            1,
            'Traceback (most recent call last):\n  File "x.py", line 1, in f\nKeyError: 3',
            "crash",
            "KeyError: 3",
        ),
        (3, "", "crash", "exit 3"),
        (-11, "", "crash", "signal SIGSEGV"),
        (
            None,
            f'  File "{fuzz.PACKAGE}check/load.py", line 9 in read\n',
            "hang",
            "hang in submitter/check/load.py",
        ),
    ],
)
def test_outcomes_are_classified(code: int | None, stderr: str, kind: str, signature: str, tmp_path: Path):
    outcome = fuzz.classify("check", code, stderr, tmp_path, 0.1)
    assert (outcome.kind, outcome.signature) == (kind, signature)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('a,b\n"1","2"\n', None),
        ('a,b\n"1","two\nlines, ""quoted"""\n', None),
        ('a,b\n"1","a "quoted" word"\n', "summary.csv does not parse: Error"),
        ('a,b\n"1"\n', "summary.csv rows of [1, 2] fields, the header 2"),
    ],
)
def test_summary_csv_is_judged_by_what_a_csv_reader_makes_of_it(
    text: str, problem: str | None, tmp_path: Path
):
    (tmp_path / fuzz.SUMMARY_CSV).write_bytes(text.encode())
    found = fuzz.output_problem("check", 1, tmp_path)
    assert found == problem if problem is None else found is not None and found.startswith(problem)


def test_what_a_command_did_not_write_is_malformed_only_where_it_should_have(tmp_path: Path):
    assert fuzz.output_problem("check", 0, tmp_path) == "summary.csv not written"
    assert fuzz.output_problem("check", 2, tmp_path) is None  # a usage error writes nothing
    assert fuzz.output_problem("report", 0, tmp_path) == "review.md not written"


def test_the_power_minitree_gets_its_nameplate_and_an_alias_bomb_in_it_is_no_hang(tmp_path: Path):
    tree = fuzz.build_minitree("v6.1-power", tmp_path / "tree")
    systems = tree.root / tree.submitter / "systems"
    assert (systems / "Sys_power.yaml").is_file()
    CATALOGUE["nameplate_alias_bomb"].apply(systems / "Sys.json", random.Random(0))
    outcome = fuzz.run_command("check", tree.root / tree.submitter, tmp_path, SLICE_TIMEOUT)
    assert (outcome.kind, outcome.code) == ("ok", 1), outcome


@pytest.mark.slow
def test_fuzz_slice_finds_no_crash_and_no_hang(tmp_path: Path):
    """30 seeded cases on the minitrees, all three commands: any crash, malformed output or hang is listed
    with its recipe."""
    settings = _settings(tmp_path, fuzz.prepare_trees([], tmp_path))
    summary = fuzz.fuzz(settings)
    assert len(summary.cases) == SLICE_CASES
    assert not [case.error for case in summary.cases if case.error], "a mutation raised"
    assert all(len(case.outcomes) == len(settings.commands) for case in summary.cases)
    assert summary.crashes == summary.malformed == summary.hangs == 0, "\n" + fuzz.render_text(summary)
