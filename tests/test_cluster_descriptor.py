"""A multi-node descriptor: its cluster section, the rules holding it to the official description, the layout
of replicas and stages over the nodes, and planning for the declared nodes (no Ray needed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli, write_json

from submitter.systems.catalog import descriptor_path
from submitter.systems.cluster_layout import LayoutProblem, lay_out

TWO_NODES = "azure_nd_h100_v5_2node"
DRY_RUN = (
    "run-all", "--system", TWO_NODES, "--scenario", "Offline", "--model", "model", "--dataset", "data.pkl",
    "--smoke", "--dry-run", "--described-gpus",
)  # fmt: skip


def _stages(slots: list[Any]) -> list[list[int]]:
    replicas: dict[int, list[int]] = {}
    for slot in slots:
        replicas.setdefault(slot.replica, []).append(slot.node)
    return list(replicas.values())


def test_tensor_groups_stay_on_a_node_stages_span_nodes_only_when_needed_and_replicas_spread() -> None:
    assert _stages(lay_out(2, 8, 8, 2, 1)) == [[0, 1]]  # deepseek-r1: TP=8 on each node, PP=2 across
    assert _stages(lay_out(2, 8, 4, 2, 1)) == [[0, 0]]  # TP=4 x PP=2 fits one node: no network between
    assert _stages(lay_out(3, 2, 1, 1, 3)) == [[0], [1], [2]]  # a replica per node
    assert _stages(lay_out(2, 8, 2, 1, 4)) == [[0], [1], [0], [1]]
    with pytest.raises(LayoutProblem, match="would span nodes of 8 GPUs"):
        lay_out(2, 8, 16, 1, 1)
    with pytest.raises(LayoutProblem, match="need 3 tensor-parallel groups, but 2 node"):
        lay_out(2, 8, 8, 1, 3)


def _two_node_copy(tmp_path: Path, **changes: Any) -> Path:
    data = json.loads(descriptor_path(TWO_NODES).read_text(encoding="utf-8"))
    for dotted, value in changes.items():
        *parents, key = dotted.split("__")
        target = data
        for parent in parents:
            target = target[parent]
        target[key] = value
    return write_json(tmp_path / f"{TWO_NODES}.json", data)


def _findings(tmp_path: Path, path: Path) -> tuple[int, list[dict[str, Any]]]:
    result = run_cli("systems", "validate", str(path), "--json", cwd=tmp_path)
    return result.returncode, [f for f in json.loads(result.stdout)["findings"] if f["severity"] == "error"]


def test_the_shipped_two_node_descriptor_validates(tmp_path: Path) -> None:
    code, errors = _findings(tmp_path, descriptor_path(TWO_NODES))
    assert code == 0 and errors == []


@pytest.mark.parametrize(
    ("changes", "rule", "field", "text"),
    [
        (
            {"system__number_of_nodes": 3},
            "DESC-NODES",
            "system.number_of_nodes",
            "is 3 but cluster.nodes is 2",
        ),
        ({"system__accelerators_per_node": 4}, "DESC-NODES", "system.accelerators_per_node", "is 4"),
        (
            {
                "benchmarks__deepseek-r1__tensor_parallel_size": 16,
                "benchmarks__deepseek-r1__pipeline_parallel_size": 1,
            },
            "DESC-TP-NODE",
            "benchmarks.deepseek-r1.tensor_parallel_size",
            "more than the 8 GPUs of a node",
        ),
        (
            {
                "benchmarks__deepseek-r1__tensor_parallel_size": 5,
                "benchmarks__deepseek-r1__pipeline_parallel_size": 3,
            },
            "DESC-CLUSTER-LAYOUT",
            "benchmarks.deepseek-r1",
            "need 3 tensor-parallel groups, but 2 node(s) of 8 GPUs hold 2",
        ),
        ({"cluster__address": None}, "DESC-CLUSTER", "cluster.address", "the cluster has 2 nodes"),
    ],
)
def test_systems_validate_holds_the_cluster_to_the_description(
    tmp_path: Path, changes: dict[str, Any], rule: str, field: str, text: str
) -> None:
    code, errors = _findings(tmp_path, _two_node_copy(tmp_path, **changes))
    assert code == 1
    [finding] = [e for e in errors if e["rule"] == rule]
    assert finding["field"] == field and text in finding["message"]


def test_the_two_node_system_plans_on_its_declared_nodes(tmp_path: Path) -> None:
    """`run-all --dry-run --described-gpus`: deepseek-r1's two stages on the two nodes, and the memory
    estimate of one stage's GPU, with a full-depth stand-in in the published precision."""
    for command in (
        ("data", "dummy-model", "--benchmark", "deepseek-r1", "--precision", "published", "--out", "model"),
        ("data", "synth", "--benchmark", "deepseek-r1", "--samples", "64", "--out", "data.pkl"),
    ):
        made = run_cli(*command, cwd=tmp_path)
        assert made.returncode == 0, made.stderr
    result = run_cli(*DRY_RUN, "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    topology = json.loads(result.stdout)["runs"][0]["topology"]
    assert topology["tensor_parallel_size"] == 8 and topology["pipeline_parallel_size"] == 2
    assert topology["memory_estimate"]["sequences"] >= 1
    plain = run_cli(*DRY_RUN, cwd=tmp_path)
    assert "1 replica(s) of TP=8 x PP=2: replica 0: stage 0 on node-0, stage 1 on node-1" in plain.stdout
