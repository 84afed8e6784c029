"""A benchmark system described once: the official description plus how to run the harness on it.

File shape (`systems/<id>.json`):

    {
      "id": "dell_xe8640_h100",              short name used on the command line
      "system_desc_id": "XE8640_1xH100_vLLM", the name of the system in the submission tree
      "round": "<round>",                  a round with a pack (`submitter rounds list`)
      "system": { ...the 35 official keys; null where a fact is not known yet... },
      "benchmarks": { "llama3.1-8b": { backend, model_path, engine_args, scenarios: {...} } },
      "cluster": { "nodes": 2, "gpus_per_node": 8, "address": "auto" }   only for a multi-node system
    }

Submitter and division are read from the official block, so they are written once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PrivateAttr

from submitter.errors import SubmitterError
from submitter.rounds.models import Scenario
from submitter.systems.backends import BACKENDS, backend_info
from submitter.systems.lint import SystemFile
from submitter.systems.official_description import SystemDescription


def _known_backend(name: str) -> str:
    backend_info(name)  # the ValueError names the known backends
    return name


Backend = Annotated[str, AfterValidator(_known_backend), Field(json_schema_extra={"enum": list(BACKENDS)})]
UserConfValue = int | float


class ScenarioSetup(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: Backend | None = Field(
        default=None,
        description="this scenario's engine, if not the benchmark's (e.g. vllm-async for Server)",
    )
    user_conf: dict[str, UserConfValue] = Field(
        default_factory=dict, description="LoadGen user.conf keys for this scenario, e.g. target_qps"
    )
    engine_args: dict[str, Any] = Field(
        default_factory=dict, description="engine arguments that override the benchmark's for this scenario"
    )
    tuned_from: str | None = Field(
        default=None,
        description="the evidence these engine_args and target_qps were chosen by: tune-engine's "
        "evidence.json, or the run.json of the full-length run that confirmed them",
    )


class BenchmarkSetup(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: Backend
    model_path: str = Field(min_length=1, description="checkpoint: a hub name or a local directory")
    dataset_path: str | None = Field(default=None, description="the benchmark's dataset file; --dataset wins")
    quantization: str | None = Field(default=None, description="e.g. fp8; null for the checkpoint's own")
    tensor_parallel_size: int = Field(default=1, ge=1)
    pipeline_parallel_size: int = Field(default=1, ge=1, description="pipeline stages of one engine copy")
    replicas: int = Field(
        default=1, ge=1, description="data-parallel engine copies, each on tensor x pipeline parallel devices"
    )
    gpu_groups: list[list[int]] | None = Field(
        default=None,
        description="the GPUs (nvidia-smi's numbers) of each replica, e.g. [[0, 1], [2, 3]] to keep each "
        "tensor-parallel group under one PCIe switch; default: consecutive GPUs",
    )
    engine_args: dict[str, Any] = Field(default_factory=dict, description="engine keyword arguments")
    environment: dict[str, str] = Field(default_factory=dict, description="variables set for the engine")
    measurements: dict[str, str] = Field(
        default_factory=dict,
        description="measurements.json values other than measurements/<benchmark>.json gives",
    )
    scenarios: dict[Scenario, ScenarioSetup]
    untuned: bool = Field(
        default=False,
        description="engine_args and target_qps are a sensible start, not yet measured on this system "
        "(submitter tune-qps finds the rate)",
    )
    submit: bool = Field(
        default=True,
        description="false: kept for runs that name it (--benchmark), left out of run-all's and stage's "
        "plan for the system's submission",
    )

    @property
    def gpus_per_replica(self) -> int:
        return self.tensor_parallel_size * self.pipeline_parallel_size

    @property
    def accelerators_needed(self) -> int:
        return self.replicas * self.gpus_per_replica

    def backend_for(self, scenario: Scenario) -> Backend:
        setup = self.scenarios.get(scenario)
        return setup.backend if setup and setup.backend else self.backend

    def engine_args_for(self, scenario: Scenario) -> dict[str, Any]:
        """The benchmark's engine arguments with the scenario's on top; a scenario's null removes one."""
        setup = self.scenarios.get(scenario)
        merged = {**self.engine_args, **(setup.engine_args if setup else {})}
        return {key: value for key, value in merged.items() if value is not None}


class ClusterSetup(BaseModel):
    """The Ray cluster a multi-node system runs on (harness.ray_cluster): its nodes and how to reach it.

    Each replica's tensor x pipeline parallel group is placed on these nodes (harness.cluster_layout):
    a tensor-parallel group always on one node, pipeline stages on other nodes where one has no room.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    nodes: int = Field(ge=1, description="the nodes that run engines (Ray nodes with GPUs)")
    gpus_per_node: int = Field(ge=1, description="GPUs each node offers Ray (its GPU resource)")
    address: str | None = Field(
        default=None,
        min_length=1,
        description="the Ray cluster to join: 'auto' (the one RAY_ADDRESS or `ray start` on this host "
        "names) or the head's host:port; null starts a local head for a single host",
    )


class SystemDescriptor(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_]*$", description="lower-case short name for the command line")
    system_desc_id: str = Field(min_length=1, description="system name in the submission tree")
    round: str = Field(description="MLPerf round: one with a pack (`submitter rounds list`)")
    system: dict[str, Any] = Field(description="the official system description; null marks unknown facts")
    benchmarks: dict[str, BenchmarkSetup] = Field(default_factory=dict)
    cluster: ClusterSetup | None = Field(
        default=None, description="a multi-node system's Ray cluster; absent: engines run on this host"
    )
    # The file it was read from, as messages show it (set by load_descriptor).
    _shown: str | None = PrivateAttr(default=None)

    @property
    def shown(self) -> str:
        """How messages name the descriptor: the file it was read from, or its catalog place."""
        return self._shown or f"systems/{self.id}.json"

    def read_from(self, shown: str) -> SystemDescriptor:
        self._shown = shown
        return self

    @property
    def submitter(self) -> str | None:
        return self.system.get("submitter")

    @property
    def division(self) -> str | None:
        return self.system.get("division")

    @property
    def unfilled(self) -> frozenset[str]:
        return frozenset(key for key, value in self.system.items() if value is None)

    def system_file(self, path: str) -> SystemFile:
        return SystemFile(path=path, system_id=self.system_desc_id, data=self.system, unfilled=self.unfilled)

    def official(self) -> dict[str, Any]:
        """The description as it goes into `systems/<system_desc_id>.json` of a tree.

        Unknown optional facts become "" (the official form of "not stated"); unknown meaningful
        facts stop it, because the official checker rejects them.
        """
        missing = sorted(self.unfilled & SystemDescription.meaningful_keys())
        if missing:
            raise SubmitterError(
                f"system {self.id} still has unknown facts that a submission requires: {', '.join(missing)}; "
                "fill them in its descriptor (submitter systems validate shows them all)"
            )
        return {key: "" if value is None else value for key, value in self.system.items()}


@dataclass(frozen=True)
class DescriptorFile:
    path: str
    file_stem: str
    descriptor: SystemDescriptor
