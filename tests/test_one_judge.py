"""One judge: `submitter report` takes every verdict, figure and unit from `submitter check`. Asserted here on
seeded breakages of trees of every family and of the real published tree, and on endpoints results (valid
trees of every benchmark: tests/test_check_families.py)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
from minitree import ENDPOINTS_FIXTURES, add_endpoints_result, build_tree
from one_judge import assert_review_agrees
from treecopy import copy_tree

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import mutations

# A v6.1 datacenter tree with an LLM in three scenarios (TEST06), gpt-oss-120b (TEST07, TEST09), whisper
# (TEST01) and qwen3-vl-235b-a22b (no audit, latency-constrained Server).
FAMILIES = [
    *(("Sys", "llama3.1-8b", scenario) for scenario in ("Offline", "Server", "Interactive")),
    ("Sys", "gpt-oss-120b", "Offline"),
    ("Sys", "gpt-oss-120b", "Server"),
    ("Sys", "whisper", "Offline"),
    ("Sys", "qwen3-vl-235b-a22b", "Offline"),
    ("Sys", "qwen3-vl-235b-a22b", "Server"),
]


@pytest.mark.parametrize("seed", range(20))
def test_a_broken_tree_of_every_family_gets_the_check_s_verdicts_in_the_review(
    tmp_path: Path, seed: int
) -> None:
    build_tree(tmp_path, "v6.1", FAMILIES)
    mutations.apply(tmp_path, "closed/Org", random.Random(seed))
    assert assert_review_agrees(tmp_path) >= len(FAMILIES) - 1  # a renamed folder may merge two results


@pytest.mark.parametrize("seed", range(8))
def test_a_broken_copy_of_the_published_tree_gets_the_check_s_verdicts(
    redhat_tree: Path, tmp_path: Path, seed: int
) -> None:
    copy_tree(redhat_tree, tmp_path)
    mutations.apply(tmp_path, "closed/RedHat", random.Random(seed))
    assert assert_review_agrees(tmp_path) > 0


def test_endpoints_results_get_the_check_s_verdicts(tmp_path: Path) -> None:
    tree = build_tree(tmp_path, "v6.1", [("Sys", "llama3.1-8b", "Server")])
    add_endpoints_result(tree, "Sys", "llama3.1-8b", "Offline")
    add_endpoints_result(
        tree, "Sys", "qwen3-vl-235b-a22b", "Offline", ENDPOINTS_FIXTURES / "qwen3-vl-235b-a22b" / "Offline"
    )
    add_endpoints_result(
        tree, "Sys", "gpt-oss-120b", "Server", ENDPOINTS_FIXTURES / "gpt-oss-120b" / "online"
    )
    assert assert_review_agrees(tmp_path) == 4
