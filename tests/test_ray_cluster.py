"""Multi-node runs on a real Ray cluster on this machine: several raylets, each declaring GPUs, one cluster
for the whole module (`ray.cluster_utils.Cluster`). The synthetic engine stands in for vLLM as Ray actors,
so placement, preflight, run.json's provenance, a lost node and the resume are the real code paths."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli, write_json
from harness_helpers import fake_nvidia_smi, fast_descriptor

ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402

from harness.engines.base import EngineSpec, Generation  # noqa: E402
from harness.engines.registry import create_engine  # noqa: E402
from harness.ray_cluster import ask_nodes, device_problems, joined  # noqa: E402
from submitter.systems.descriptor import ClusterSetup  # noqa: E402

GPUS_PER_NODE = 2
# Small raylets: 2 cores and little memory run the whole cluster.
NODE = {"num_cpus": 1, "num_gpus": GPUS_PER_NODE, "object_store_memory": 80 << 20}
# A lost node is noticed within about a second and a half, not Ray's default 15 s.
FAST_HEALTH_CHECKS = {"health_check_period_ms": 500, "health_check_failure_threshold": 3}


class LocalCluster:
    """A head and extra raylets; `with_nodes(n)` adds or removes raylets (never the head) to have n."""

    def __init__(self) -> None:
        self.cluster = Cluster(
            initialize_head=True,
            head_node_args={**NODE, "include_dashboard": False, "_system_config": FAST_HEALTH_CHECKS},
        )
        self.extra: list[Any] = []

    @property
    def address(self) -> str:
        return self.cluster.address

    def with_nodes(self, count: int) -> LocalCluster:
        while len(self.extra) + 1 < count:
            self.extra.append(self.cluster.add_node(**NODE))
        while len(self.extra) + 1 > count:
            self.cluster.remove_node(self.extra.pop())
        self.cluster.wait_for_nodes()
        return self

    def remove_one(self) -> None:
        self.cluster.remove_node(self.extra.pop(), allow_graceful=False)


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    local = LocalCluster()
    yield local
    ray.shutdown()
    local.cluster.shutdown()


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the demo's data and model (its tokenizer and answers score the accuracy runs)."""
    folder = tmp_path_factory.mktemp("ray-demo")
    made = run_cli(
        "data", "synth", "--out", "data.json", "--samples", "64", "--demo-model", "model", cwd=folder
    )
    assert made.returncode == 0, made.stderr
    return folder


def cluster_descriptor(folder: Path, address: str, nodes: int, **setup: Any) -> Path:
    """The demo's llama3.1-8b on `nodes` nodes of GPUS_PER_NODE GPUs, a replica per node by default."""
    setup = {
        "model_path": str(folder / "model"),
        "dataset_path": str(folder / "data.json"),
        "replicas": nodes,
        **setup,
    }
    descriptor = fast_descriptor(**setup)
    scenarios = descriptor["benchmarks"]["llama3.1-8b"]["scenarios"]
    del scenarios["Interactive"]  # the demo's: Offline and Server
    # Half fast_descriptor's rate (1,000 queries in the smoke's 10 s): the raylets, their agents and the
    # actors share CI's two cores with five other test processes, and a Server trial must still be VALID.
    scenarios["Server"]["user_conf"]["target_qps"] = 100
    descriptor["id"] = "demo_ray"
    descriptor["system"].update(number_of_nodes=str(nodes), accelerators_per_node=str(GPUS_PER_NODE))
    descriptor["cluster"] = {"nodes": nodes, "gpus_per_node": GPUS_PER_NODE, "address": address}
    return write_json(folder / "demo_ray.json", descriptor)


def _node_ids(address: str) -> list[str]:
    with joined(address):
        return sorted(node["NodeID"] for node in ray.nodes() if node["Alive"])


@pytest.mark.parametrize(
    ("tensor", "pipeline", "replicas", "stage_nodes"),
    [
        (1, 1, 2, [[0], [1]]),  # replicas spread: one per node, not both on the emptiest
        (2, 1, 2, [[0], [1]]),  # a TP=2 group packed on one node (STRICT_PACK)
        (2, 2, 1, [[0, 1]]),  # pipeline stages across nodes, each stage's TP pair on one node
        (1, 2, 1, [[0, 0]]),  # both stages fit one node: no pipeline across the network
    ],
)
def test_replicas_and_stages_are_placed_as_the_descriptor_says(
    cluster: LocalCluster, tensor: int, pipeline: int, replicas: int, stage_nodes: list[list[int]]
) -> None:
    cluster.with_nodes(2)
    spec = EngineSpec(
        backend="synthetic",
        model="synthetic",
        generation=Generation(max_tokens=8, min_tokens=2, eos_token_id=0),
        tensor_parallel_size=tensor,
        pipeline_parallel_size=pipeline,
        replicas=replicas,
        cluster=ClusterSetup(nodes=2, gpus_per_node=GPUS_PER_NODE, address=cluster.address),
    )
    engine = create_engine(spec)
    engine.start()
    try:
        placed = engine.placement()  # type: ignore[attr-defined]
        # Ray's own account of the reservation, read independently of the harness.
        groups = ray.util.placement_group_table()
        reserved = [group for group in groups.values() if group["state"] == "CREATED"]
    finally:
        engine.stop()
    nodes = sorted({stage.node_id for stage in placed})
    found = [[nodes.index(s.node_id) for s in placed if s.replica == r] for r in range(replicas)]
    assert found == stage_nodes or found == [[1 - n for n in row] for row in stage_nodes]
    assert all(stage.gpus == tensor for stage in placed)
    assert len(reserved) == replicas
    for group in reserved:  # every stage's GPUs on one node
        bundle_nodes = list(group["bundles_to_node_id"].values())
        for stage in range(pipeline):
            assert len(set(bundle_nodes[stage * tensor : (stage + 1) * tensor])) == 1


def test_offline_smoke_on_two_nodes_is_valid_and_run_json_says_where_it_ran(
    cluster: LocalCluster, demo: Path
) -> None:
    cluster.with_nodes(2)
    cluster_descriptor(demo, cluster.address, nodes=2)
    result = run_cli(
        "run-all", "--system", "demo_ray.json", "--smoke", "--scenario", "Offline", "--runs-dir", "two",
        "--json", cwd=demo,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["valid"] and len(outcome["runs"]) == 3
    assert "2 replica(s) of TP=1: replica 0 on" in result.stderr
    record = json.loads((demo / outcome["runs"][2]["run_dir"] / "run.json").read_text())
    assert record["loadgen"]["outcome"]["validity"] == "VALID"
    assert record["engine"]["nodes"] == 2 and record["engine"]["replicas"] == 2
    assert not record["engine"]["split_threads"]  # the synthetic engine's threads are its own
    nodes = record["cluster"]["nodes"]
    assert sorted(node["node_id"] for node in nodes) == _node_ids(cluster.address)
    assert all(node["gpus"] == GPUS_PER_NODE and node["versions"]["submitter"] for node in nodes)
    stages = record["cluster"]["stages"]
    assert [(stage["replica"], stage["stage"]) for stage in stages] == [(0, 0), (1, 0)]
    assert len({stage["node_id"] for stage in stages}) == 2  # one replica on each node
    # Each actor's own log reaches the engine's log, as on a single host: both replicas' lines, uncoloured.
    started_by = demo / outcome["runs"][0]["run_dir"]
    engine_log = (started_by / "engine.log").read_text(encoding="utf-8")
    actor_lines = [line for line in engine_log.splitlines() if "synthetic engine:" in line]
    assert len(actor_lines) == 2 and all(line.startswith("(ReplicaActor pid=") for line in actor_lines)
    assert "\x1b[" not in engine_log


def test_preflight_refuses_a_cluster_unlike_the_descriptor_before_any_engine_starts(
    cluster: LocalCluster, demo: Path
) -> None:
    cluster.with_nodes(2)
    cluster_descriptor(demo, cluster.address, nodes=3)
    result = run_cli("run-all", "--system", "demo_ray.json", "--smoke", "--runs-dir", "refused", cwd=demo)
    assert result.returncode == 1, result.stderr
    assert "the Ray cluster has 2 node(s) with GPUs" in result.stderr and "declares 3" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (demo / "refused").exists()


def test_a_process_that_joined_keeps_its_own_sigterm(cluster: LocalCluster) -> None:
    """ray.init would make SIGTERM exit through Python with a C++ stack on stderr; a LoadGen worker that an
    aborted test stops (and the command line, whose SIGTERM is an interrupt) keeps its own meaning of it."""
    cluster.with_nodes(1)
    joined_then_waits = (
        "import sys, time\n"
        "from harness.ray_cluster import join\n"
        f"join({cluster.address!r})\n"
        "print('joined', flush=True)\n"
        "time.sleep(120)\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", joined_then_waits], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stdout.readline() == "joined\n"
    process.terminate()
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == -signal.SIGTERM, stderr  # the default action: ended by the signal
    assert "SIGTERM received" not in stderr and "Stack trace" not in stderr


def test_an_unreachable_cluster_is_named_without_waiting(demo: Path) -> None:
    cluster_descriptor(demo, "127.0.0.1:9", nodes=2)
    began = time.monotonic()
    result = run_cli("run-all", "--system", "demo_ray.json", "--smoke", "--dry-run", cwd=demo)
    assert result.returncode == 1 and time.monotonic() - began < 30
    assert "head at 127.0.0.1:9 does not answer" in result.stderr and "Traceback" not in result.stderr


def test_raylets_sharing_a_host_must_each_see_their_own_gpus(cluster: LocalCluster, tmp_path: Path) -> None:
    """Two GPUs of one host as two Ray nodes (the shape of the device run): each raylet started with its own
    CUDA_VISIBLE_DEVICES answers with its own GPU, as nvidia-smi on the host lists it. A third raylet that
    sees them all would put its engine on GPUs the others use, and is refused."""
    fake_nvidia_smi(tmp_path, [("NVIDIA H100 80GB HBM3", 81559)] * 2)
    on_path = f"{tmp_path}:{os.environ['PATH']}"
    cluster.with_nodes(1)  # the head: no nvidia-smi, so it answers with no devices and is not judged
    raylet = {**NODE, "num_gpus": 1}
    added = [
        cluster.cluster.add_node(**raylet, env_vars={"PATH": on_path, "CUDA_VISIBLE_DEVICES": visible})
        for visible in ("0", "1")
    ]
    try:
        cluster.cluster.wait_for_nodes()
        with joined(cluster.address) as joined_ray:
            nodes = ask_nodes(joined_ray)
        seen = sorted((gpu.index, gpu.bus_id) for node in nodes for gpu in node.devices)
        assert seen == [(0, "00000000:18:00.0"), (1, "00000000:28:00.0")]
        assert device_problems(nodes) == []
        # A raylet told of more GPUs than it may use (--num-gpus=2 with one visible).
        one_gpu = next(node for node in nodes if node.devices)
        (overcounted,) = device_problems([one_gpu.model_copy(update={"gpus": 2})])
        assert "offers Ray 2 GPU(s) but nvidia-smi there lists 1" in overcounted

        added.append(cluster.cluster.add_node(**{**NODE, "env_vars": {"PATH": on_path}}))
        cluster.cluster.wait_for_nodes()
        with joined(cluster.address) as joined_ray:
            problems = device_problems(ask_nodes(joined_ray))
        assert len(problems) == 2 and all("CUDA_VISIBLE_DEVICES=1 ray start" in p for p in problems)
        assert all("would both run engines on" in p for p in problems)
        for gpu in ("GPU 0 (00000000:18:00.0)", "GPU 1 (00000000:28:00.0)"):
            assert any(gpu in p for p in problems), problems
    finally:
        for node in added:
            cluster.cluster.remove_node(node)


@pytest.mark.slow
def test_run_all_smoke_on_three_nodes_is_valid(cluster: LocalCluster, demo: Path) -> None:
    cluster.with_nodes(3)
    cluster_descriptor(demo, cluster.address, nodes=3)
    result = run_cli(
        "run-all", "--system", "demo_ray.json", "--smoke", "--runs-dir", "three", "--json", cwd=demo
    )
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["valid"] and [run["valid"] for run in outcome["runs"]] == [True] * 6
    record = json.loads((demo / outcome["runs"][-1]["run_dir"] / "run.json").read_text())
    assert len({stage["node_id"] for stage in record["cluster"]["stages"]}) == 3

    # The staged tree says how many nodes ran it: the system description and each scenario's README.
    staged = run_cli(
        "stage", "--system", "demo_ray.json", "--allow-not-submittable", "--allow-trials",
        "--runs-dir", "three", "--out", "staged", cwd=demo,
    )  # fmt: skip
    assert "staged" in staged.stderr, staged.stderr  # its check fails on purpose: trials are too short
    [description] = (demo / "staged").glob("open/Demo/systems/*.json")
    assert json.loads(description.read_text())["number_of_nodes"] == "3"
    readmes = list((demo / "staged").glob("open/Demo/results/*/llama3.1-8b/*/README.md"))
    assert len(readmes) == 2 and all("ran on 3 nodes of a Ray cluster" in p.read_text() for p in readmes)


def _wait_for(path_glob: str, folder: Path, timeout_s: float = 90) -> Path:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = list(folder.glob(path_glob))
        if found:
            return found[0]
        time.sleep(0.1)
    raise AssertionError(f"{path_glob} never appeared")


@pytest.mark.slow
def test_a_lost_node_ends_the_run_naming_it_and_resume_finishes_the_plan(
    cluster: LocalCluster, demo: Path
) -> None:
    cluster.with_nodes(2)
    cluster_descriptor(demo, cluster.address, nodes=2)
    command = ("run-all", "--system", "demo_ray.json", "--smoke", "--runs-dir", "lost")
    process = subprocess.Popen(
        [sys.executable, "-m", "submitter", *command], cwd=demo, stderr=subprocess.PIPE, text=True
    )
    _wait_for("lost/demo_ray/llama3.1-8b/Server/performance/*/mlperf_log_detail.txt", demo)
    cluster.remove_one()
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 1, stderr
    assert "left the Ray cluster during the run" in stderr and "Ray node" in stderr
    assert "run-all stopped with 0 run(s) not done: node" in stderr
    assert "Traceback" not in stderr
    lost_run = _wait_for("lost/demo_ray/llama3.1-8b/Server/performance/*/run.json", demo)
    lost = json.loads(lost_run.read_text())
    assert not lost["valid"] and "left the Ray cluster" in lost["problems"][0]

    refused = run_cli(*command, "--dry-run", cwd=demo)  # the plan waits for the whole cluster
    assert refused.returncode == 1 and "has 1 node(s) with GPUs" in refused.stderr

    cluster.with_nodes(2)
    resumed = run_cli(*command, "--json", cwd=demo)
    assert resumed.returncode == 0, resumed.stderr
    runs = json.loads(resumed.stdout)["runs"]
    assert [run["reused"] for run in runs] == [True] * 5 + [False]  # only the run the lost node ended
    assert all(run["valid"] for run in runs)
    assert len(list((demo / "lost" / "demo_ray" / "llama3.1-8b" / "Offline").glob("*/*/run.json"))) == 3
