"""What a broken file is called: one finding that says what the file is (empty, binary, a loop), not a
cascade of findings about the values it lacks."""

from __future__ import annotations

import os

import pytest
from minitree import build_tree

from submitter.check.checker import check_tree

EDGE_SCENARIOS = ("SingleStream", "MultiStream", "Offline")


@pytest.fixture
def tree(tmp_path):
    return build_tree(tmp_path, "v6.0", [("Sys", "resnet", s) for s in EDGE_SCENARIOS], system_type="edge")


def _findings(tmp_path):
    return [(f.rule, f.path, f.message) for f in check_tree(tmp_path, "v6.0").findings]


@pytest.mark.parametrize("content", [b"", b"\n\n  \n"])
def test_an_empty_detail_log_is_one_finding_that_says_so(tree, tmp_path, content):
    log = tree.result("resnet", "Offline").performance_log
    log.write_bytes(content)
    [(rule, path, message)] = _findings(tmp_path)
    assert (rule, path) == ("PERF-LOG", log.relative_to(tmp_path).as_posix())
    assert message.startswith("is empty")


def test_a_binary_detail_log_is_one_finding_that_says_so(tree, tmp_path):
    log = tree.result("resnet", "Offline").performance_log
    log.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    [(rule, path, message)] = _findings(tmp_path)
    assert (rule, path) == ("STRUCT-UNREADABLE", log.relative_to(tmp_path).as_posix())
    assert message.startswith("is binary data, not text")


def test_a_garbled_record_is_named_by_its_line_alone(tree, tmp_path):
    log = tree.result("resnet", "Offline").performance_log
    lines = log.read_text().splitlines()
    lines[3] = lines[3][: len(lines[3]) // 2]  # cut in half: not JSON any more
    log.write_text("\n".join(lines) + "\n")
    [(rule, _, message)] = _findings(tmp_path)
    assert rule == "PERF-LOG" and message.startswith("line holds a :::MLLOG record that is not valid JSON")


def test_a_link_that_loops_is_called_a_loop_not_a_broken_link(tree, tmp_path):
    os.symlink("..", tree.code_dir / "parent")
    os.symlink("self", tree.code_dir / "self")
    os.symlink("missing.txt", tree.code_dir / "dangling")
    messages = {path.rsplit("/", 1)[-1]: message for rule, path, message in _findings(tmp_path)}
    assert messages == {
        "parent": "is a symbolic link that loops back on itself",
        "self": "is a symbolic link that loops back on itself",
        "dangling": "is a broken symbolic link",
    }
