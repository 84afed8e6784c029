"""Which node of a cluster runs each pipeline stage of each replica: the descriptor's topology over its nodes.

A stage is one tensor-parallel group, so it always lies on one node (tensor parallelism exchanges data
every layer; only NVLink-class links keep up). A replica's stages share a node where one has room for all
of them, and go to other nodes (pipeline parallelism across nodes, vLLM's multi-node path) where none has.
Replicas are spread: each takes the nodes with the most free GPUs, so two replicas on two nodes never
share one. Ray has no anti-affinity between placement groups, which is why the harness decides this and
then asks Ray for exactly these GPUs (harness.engines.ray_replicas); Ray reserves and holds them.
"""

from __future__ import annotations

from dataclasses import dataclass


class LayoutProblem(ValueError):
    """The topology does not fit the nodes; the message says why and what to change."""


@dataclass(frozen=True)
class StageSlot:
    replica: int
    stage: int
    node: int  # the node's position in the cluster's order (harness.ray_cluster sorts them)
    gpus: int  # tensor_parallel_size GPUs of that node


def lay_out(
    nodes: int, gpus_per_node: int, tensor_parallel: int, pipeline_parallel: int, replicas: int
) -> list[StageSlot]:
    """Every (replica, stage) and its node, replica after replica, stage after stage."""
    if tensor_parallel > gpus_per_node:
        raise LayoutProblem(
            f"a tensor-parallel group of {tensor_parallel} GPUs would span nodes of {gpus_per_node} GPUs; "
            f"use tensor_parallel_size <= {gpus_per_node} and pipeline_parallel_size for the rest"
        )
    groups_per_node = gpus_per_node // tensor_parallel
    free = [groups_per_node] * nodes
    slots: list[StageSlot] = []
    for replica in range(replicas):
        whole = [node for node in range(nodes) if free[node] >= pipeline_parallel]
        if whole:
            node = max(whole, key=lambda n: (free[n], -n))
            stage_nodes = [node] * pipeline_parallel
            free[node] -= pipeline_parallel
        else:
            stage_nodes = []
            for _ in range(pipeline_parallel):
                node = max(range(nodes), key=lambda n: (free[n], -n))
                if free[node] == 0:
                    raise LayoutProblem(
                        f"{replicas} replica(s) x {pipeline_parallel} stage(s) of {tensor_parallel} GPUs "
                        f"need {replicas * pipeline_parallel} tensor-parallel groups, but {nodes} node(s) of "
                        f"{gpus_per_node} GPUs hold {groups_per_node * nodes}; lower replicas or the "
                        "parallel sizes, or add nodes"
                    )
                stage_nodes.append(node)
                free[node] -= 1
        slots += [StageSlot(replica, stage, node, tensor_parallel) for stage, node in enumerate(stage_nodes)]
    return slots


def describe_layout(slots: list[StageSlot], node_names: list[str]) -> str:
    """`replica 0: stage 0 on node-a, stage 1 on node-b | replica 1: ...`, or `replica 0 on node-a` for one
    stage."""
    replicas: dict[int, list[StageSlot]] = {}
    for slot in slots:
        replicas.setdefault(slot.replica, []).append(slot)
    parts = []
    for replica, stages in replicas.items():
        if len(stages) == 1:
            parts.append(f"replica {replica} on {node_names[stages[0].node]}")
        else:
            where = ", ".join(f"stage {slot.stage} on {node_names[slot.node]}" for slot in stages)
            parts.append(f"replica {replica}: {where}")
    return " | ".join(parts)
