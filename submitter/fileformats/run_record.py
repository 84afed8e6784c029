"""`run.json`: what a run was asked to do, where it ran, and what LoadGen made of it.

Written last and atomically by the harness: a run directory without run.json is a run that never
finished (killed), and `status` says how one that did finish ended. Stage, report and `accuracy` read it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError

from submitter.errors import SubmitterError
from submitter.fileformats.run_mode import Mode
from submitter.fileio import write_text_atomic
from submitter.rounds.models import Scenario

RUN_RECORD = "run.json"
RECORD_FORMAT = "submitter-run/1"
# Staging recognises trials by this reason in `not_submittable` (and by their overrides).
SMOKE_NOT_SUBMITTABLE = "a --smoke run (shortened; LoadGen settings overridden)"
# An aborted run's reason in `not_submittable`; its first problem says in full why.
ABORTED_NOT_SUBMITTABLE = "stopped early by the harness: VALID was impossible (early abort)"


class GitState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    commit: str | None
    dirty: bool | None
    note: str | None = None


class Gpu(BaseModel):
    """One GPU as nvidia-smi lists it (records written before index and bus id were kept lack them)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    memory: str  # "81559 MiB"
    driver: str
    index: int | None = None  # nvidia-smi's number, the one CUDA_VISIBLE_DEVICES takes
    bus_id: str | None = None  # PCI bus id: which physical card, whatever the numbering
    # nvidia-smi's memory.reserved: the driver's and firmware's share of `memory`, which CUDA does not offer.
    reserved: str | None = None

    @property
    def memory_bytes(self) -> int | None:
        return _bytes(self.memory)

    @property
    def usable_bytes(self) -> int | None:
        """The memory CUDA offers (the total it reports, of which vLLM takes gpu_memory_utilization):
        nvidia-smi's total less the reserved share, where nvidia-smi reports it."""
        total, reserved = self.memory_bytes, _bytes(self.reserved) if self.reserved else None
        return total - reserved if total is not None and reserved is not None else total


def _bytes(amount_and_unit: str) -> int | None:
    """The bytes in nvidia-smi's "81559 MiB"; None where it prints no figure ("[N/A]")."""
    amount, _, unit = amount_and_unit.partition(" ")
    scale = {"MiB": 1 << 20, "GiB": 1 << 30, "GB": 10**9}.get(unit)
    try:
        return round(float(amount) * scale) if scale else None
    except ValueError:
        return None


class ReplicaRecord(BaseModel):
    """Which GPUs one engine copy ran on (nvidia-smi's numbers and the cards' PCI bus ids)."""

    model_config = ConfigDict(extra="forbid")

    replica: int
    gpus: list[int]
    bus_ids: list[str]
    cpus: str | None = None  # its own CPUs (harness.cpu_shares), `0-15,64-79`; None: it shared the host's


class MemoryEstimateRecord(BaseModel):
    """Preflight's estimate for one GPU of the run (harness.topology): what the engine arguments leave
    for the KV cache once the weights and the profiling pass are in memory."""

    model_config = ConfigDict(extra="forbid")

    gpu_gib: float
    gpu_memory_utilization: float
    weights_gib: float
    reserve_gib: float
    kv_cache_gib: float
    sequences: int = Field(description="max_model_len sequences whose KV cache fits")
    max_model_len: int
    mean_sequence_tokens: int | None = Field(
        None, description="the data set's mean prompt plus reference answer, where it records answer lengths"
    )
    mean_sequences: int | None = Field(
        None, description="sequences of mean_sequence_tokens whose KV cache fits"
    )
    precision: str
    kv_cache_dtype: str


class EngineMemoryRecord(BaseModel):
    """What the engine's own log says it found on a GPU once its profiling pass was done (vLLM's
    accounting, in GiB), beside preflight's estimate; a figure the log does not give is None."""

    model_config = ConfigDict(extra="forbid")

    weights_gib: float | None = None
    peak_activation_gib: float | None = None
    non_torch_gib: float | None = None
    cuda_graphs_gib: float | None = None
    kv_cache_gib: float | None = None
    kv_cache_tokens: int | None = None  # an engine's whole KV cache, in tokens


class TopologyRecord(BaseModel):
    """How the engine was spread: replicas of a tensor x pipeline parallel group, each on its GPUs."""

    model_config = ConfigDict(extra="forbid")

    tensor_parallel_size: int
    pipeline_parallel_size: int
    replicas: list[ReplicaRecord]
    memory_estimate: MemoryEstimateRecord | None = None
    engine_memory: EngineMemoryRecord | None = None  # from the engine's log (harness.engine_log)


class ClusterNodeRecord(BaseModel):
    """One node of the Ray cluster a multi-node run used, as it answered the preflight's question."""

    model_config = ConfigDict(extra="forbid")

    node_id: str  # Ray's node id
    host: str
    ip: str
    gpus: int = Field(description="the GPUs the node offers Ray (its GPU resource)")
    devices: list[Gpu] = Field(default_factory=list, description="nvidia-smi on the node (names, driver)")
    versions: dict[str, str] = Field(default_factory=dict, description="python, submitter, vllm, torch")
    git_commit: str | None = None  # the checkout the node's submitter runs from

    @property
    def name(self) -> str:
        """`gpu-node-2 (192.0.2.12, Ray node 3f2a9c81)`: how messages name a node."""
        return f"{self.host} ({self.ip}, Ray node {self.node_id[:8]})"


class StageRecord(BaseModel):
    """Where one pipeline stage (a tensor-parallel group) of one replica ran."""

    model_config = ConfigDict(extra="forbid")

    replica: int
    stage: int
    node_id: str
    host: str
    gpus: int


class ClusterRecord(BaseModel):
    """A multi-node run: the cluster's nodes and which replica and stage ran where."""

    model_config = ConfigDict(extra="forbid")

    address: str | None
    nodes: list[ClusterNodeRecord]
    stages: list[StageRecord] = Field(default_factory=list)


class LoadGenOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid")

    loadgen_version: str | None = None
    requested: dict[str, Any] = Field(default_factory=dict)
    effective: dict[str, Any] = Field(default_factory=dict)
    validity: str | None = None
    invalid_reason: str | None = None
    unmet: list[str] = Field(default_factory=list, description="LoadGen's validity criteria this run missed")
    metric: str | None = None
    metric_value: float | None = None
    metric_unit: str | None = None
    figures: dict[str, float] = Field(default_factory=dict)
    errors: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    audit_found: bool = False
    audit_mismatches: list[str] = Field(default_factory=list)
    accuracy_log_bytes: int | None = None


class SteadyRecord(BaseModel):
    """The answers' rate over the middle half of a test: from the ceil(n/4)-th answer to the floor(3n/4)-th to
    complete, by the harness's clock from the start of LoadGen's test. It leaves out the engine filling up
    and draining, so a shortened trial and a full-length run of one engine compare (replica scaling)."""

    model_config = ConfigDict(extra="forbid")

    samples_per_second: float
    tokens_per_second: float
    from_s: float
    to_s: float
    samples: int = Field(description="answers completed after from_s, up to to_s")


class EarlyAbortRecord(BaseModel):
    """What the harness watched to stop a Server or Interactive run once VALID was impossible
    (harness.early_abort), and, for a run it stopped, the time that saved."""

    model_config = ConfigDict(extra="forbid")

    ttft_ms: float | None = None
    tpot_ms: float | None = None
    latency_ms: float | None = None
    percentile: float
    max_queries: int = Field(description="an upper bound of the queries LoadGen's schedule issues")
    allowed_over: int = Field(description="queries over a limit max_queries may have, p99 still under it")
    schedule_s: float = Field(description="how long LoadGen's schedule runs (its queries at target_qps)")
    aborted_after_s: float | None = Field(default=None, description="LoadGen's seconds until the abort")
    # At least this much: a run that has fallen behind also takes longer than its schedule to drain.
    saved_s: float | None = Field(default=None, description="schedule_s - aborted_after_s")


class WorkerResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    started_loadgen: bool = False
    error: str | None = None
    # The error is the engine's: it failed to build or start, so every test that needs it would fail too.
    engine_did_not_start: bool = False
    engine_versions: dict[str, str] = Field(default_factory=dict)
    engine_start_s: float | None = None  # None when the engine was already serving: see engine_test_number
    engine_test_number: int = 1  # this was the engine's Nth LoadGen test
    # The run whose test started the engine this one used (its run directory's name within the runs
    # folder): every run of one scenario names the same one.
    engine_started_by: str | None = None
    loadgen_test_s: float | None = None
    samples_issued: int = 0
    samples_completed: int = 0
    tokens: int = 0
    short_outputs: int = 0
    steady: SteadyRecord | None = None  # None: fewer than 8 answers, or no time between them
    late_first_tokens: int = 0
    failed_samples: int = 0
    first_failure: str | None = None
    # Why the harness stopped the test early (early abort); None: LoadGen ran it to its end.
    aborted: str | None = None
    early_abort: EarlyAbortRecord | None = None  # None: not watched (another mode or scenario, or off)
    # A multi-node engine: where each replica's stages ran, and the node lost during the test, if one was.
    cluster_stages: list[StageRecord] = Field(default_factory=list)
    lost_node: str | None = None


class EngineRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: str
    model: str
    dummy_weights: bool
    nodes: int | None = None  # a multi-node system's nodes; None: one host
    tensor_parallel_size: int
    pipeline_parallel_size: int = 1
    replicas: int
    args: dict[str, Any]
    environment: dict[str, str]  # the variables the engine ran with, the harness's own included
    # vLLM's engine core ran with the one torch thread `environment` gives it, set by the harness
    # (harness.cpu_shares); False: the descriptor set the threads, or the engine was not vLLM on this host.
    split_threads: bool = False
    # Threads that made the inputs of samples with audio or images (vLLM's renderer on each); None: vLLM
    # made them one at a time.
    renderer_workers: int | None = None
    sampling: dict[str, Any]


class LoadGenRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str
    scenario: str
    user_conf: dict[str, int | float] = Field(description="the keys written to the run's user.conf")
    overrides: dict[str, int] = Field(description="TestSettings set after FromConfig (smoke runs only)")
    audit_config: str | None
    outcome: LoadGenOutcome | None = Field(description="read back from the detail log; null if none")


class RunRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: Literal["submitter-run/1"] = RECORD_FORMAT
    # "aborted": stopped by the harness once VALID was impossible (harness.early_abort); problems[0] says why.
    status: Literal["completed", "failed", "interrupted", "aborted"]
    # Where an interrupted run stopped: in its LoadGen test (engine start included), or after it, while
    # its accuracy log was scored or its audit verified (LoadGen's logs are then complete: run-all finishes
    # the evaluation instead of running it again).
    interrupted_during: Literal["test", "evaluation"] | None = None
    valid: bool = Field(description="finished, and did what its mode is for (VALID, logged, audited)")
    problems: list[str]
    submittable: bool
    not_submittable: list[str] = Field(description="why these results may not go into a submission")
    system: str
    system_desc_id: str
    round: str
    benchmark: str
    scenario: Scenario
    mode: Mode
    command_line: list[str]
    started_utc: str
    finished_utc: str
    wall_s: float
    exit_status: int | None
    error: str | None
    versions: dict[str, str]
    git: GitState
    gpus: list[Gpu]
    engine: EngineRecord
    topology: TopologyRecord | None = Field(default=None, description="GPU engines: which replica ran where")
    cluster: ClusterRecord | None = Field(
        default=None, description="multi-node runs: every node, and which replica and stage ran where"
    )
    dataset: dict[str, Any]
    loadgen: LoadGenRecord
    harness: WorkerResult | None
    # Records written before TEST07 and TEST09 named it test06.
    audit: dict[str, Any] | None = Field(
        default=None,
        validation_alias=AliasChoices("audit", "test06"),
        description="the audit test's verification of this run (TEST06, TEST07, TEST09)",
    )
    accuracy: dict[str, Any] | None = Field(default=None, description="accuracy.txt's numbers and verdicts")

    @property
    def scores(self) -> dict[str, Any] | None:
        """accuracy.txt's numbers (rouge1 ... gen_num), when this accuracy run was scored."""
        return self.accuracy["result"] if self.accuracy and self.accuracy.get("evaluated") else None

    @property
    def unscored(self) -> str | None:
        """Why this accuracy run has no scores (its log is kept; `submitter accuracy` scores it later);
        None for a scored run or another mode. Such a run logged what it should, yet is not "valid"."""
        if self.accuracy is None or self.accuracy.get("evaluated", True):
            return None
        return str(self.accuracy.get("note") or "not evaluated")


def aborted_note(record: RunRecord) -> str | None:
    """`stopped after 73 s of a schedule of about 600 s: about 527 s saved`, for a run early abort stopped."""
    watched = record.harness.early_abort if record.harness else None
    if record.status != "aborted" or watched is None or watched.aborted_after_s is None:
        return None
    return (
        f"stopped after {watched.aborted_after_s:,.0f} s of a schedule of about {watched.schedule_s:,.0f} s: "
        f"about {watched.saved_s or 0:,.0f} s saved"
    )


def scores_text(scores: dict[str, Any]) -> str:
    """`rouge1 91.4786, rouge2 81.4322, ...`: accuracy.txt's numbers on one line (breakdowns left out)."""
    return ", ".join(
        f"{key} {value}" for key, value in scores.items() if isinstance(value, int | float | str)
    )


def write_record(run_dir: Path, record: RunRecord) -> None:
    write_text_atomic(run_dir / RUN_RECORD, record.model_dump_json(indent=2) + "\n")


def read_record(run_dir: Path) -> RunRecord | None:
    """The run's record, or None for a run that never finished."""
    path = run_dir / RUN_RECORD
    if not path.is_file():
        return None
    try:
        return RunRecord.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise SubmitterError(f"{path} is not a run record this version can read ({exc})") from None
