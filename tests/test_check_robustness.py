"""check never raises, whatever happens to the files of a real tree."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from conftest import REDHAT_TREE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from treecopy import copy_tree

from submitter.check.checker import check_tree

FILES = (
    sorted(p.relative_to(REDHAT_TREE).as_posix() for p in REDHAT_TREE.rglob("*") if p.is_file())
    if REDHAT_TREE.is_dir()
    else []
)

mutation = st.tuples(
    st.sampled_from(
        ["delete", "truncate", "garble_line", "change_number", "corrupt_json", "empty_dir", "binary"]
    ),
    st.sampled_from(FILES or ["none"]),
    st.integers(min_value=0, max_value=10_000),
)


def _mutate(root: Path, kind: str, relative: str, seed: int) -> None:
    path = root / "closed" / "RedHat" / relative
    if not path.exists():
        return
    text = path.read_text(errors="replace")
    lines = text.splitlines()
    if kind == "delete":
        path.unlink()
    elif kind == "truncate":
        path.write_text(text[: seed % (len(text) + 1)])
    elif kind == "garble_line" and lines:
        lines[seed % len(lines)] = lines[seed % len(lines)][::-1]
        path.write_text("\n".join(lines))
    elif kind == "change_number":
        digits = [i for i, ch in enumerate(text) if ch.isdigit()]
        if digits:
            i = digits[seed % len(digits)]
            path.write_text(text[:i] + str((int(text[i]) + 1 + seed) % 10) + text[i + 1 :])
    elif kind == "corrupt_json":
        path.write_text(text.replace("{", "[", 1).replace('"', "", 2))
    elif kind == "empty_dir":
        shutil.rmtree(path.parent)
        path.parent.mkdir()
    elif kind == "binary":
        path.write_bytes(bytes(range(256)) * (1 + seed % 3))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    mutations=st.lists(mutation, min_size=1, max_size=4), round_name=st.sampled_from([None, "v5.1", "v6.1"])
)
@pytest.mark.slow
def test_check_never_raises(redhat_tree, mutations, round_name):
    with tempfile.TemporaryDirectory() as folder:
        root = copy_tree(redhat_tree, Path(folder))
        for kind, relative, seed in mutations:
            _mutate(root, kind, relative, seed)
        report = check_tree(root, round_name)
        assert all(f.rule and f.message and f.fix for f in report.findings)
        assert len(report.results) <= 4
