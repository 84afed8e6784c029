"""Typed rules of one MLPerf Inference round, as loaded from its TOML pack.

Every number a check, the harness or staging needs comes from these objects; each section carries
the `source` it was taken from so that `submitter rounds show` can cite it.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, field_validator

from submitter.errors import UsageProblem


class Scenario(StrEnum):
    OFFLINE = "Offline"
    SERVER = "Server"
    INTERACTIVE = "Interactive"
    SINGLE_STREAM = "SingleStream"
    MULTI_STREAM = "MultiStream"


class SystemTypeTable(StrEnum):
    """Which scenario table applies; `datacenter,edge` systems read `datacenter-edge`."""

    DATACENTER = "datacenter"
    EDGE = "edge"
    DATACENTER_EDGE = "datacenter-edge"

    @classmethod
    def for_system_type(cls, system_type: object) -> SystemTypeTable | None:
        """The table for a system description's `system_type`, None for values the rules do not know."""
        return SYSTEM_TYPE_TABLES.get(system_type) if isinstance(system_type, str) else None


# The exact `system_type` values a system description may hold (checker.md §7), and their tables.
SYSTEM_TYPE_TABLES = {
    "datacenter": SystemTypeTable.DATACENTER,
    "edge": SystemTypeTable.EDGE,
    "datacenter,edge": SystemTypeTable.DATACENTER_EDGE,
    "edge,datacenter": SystemTypeTable.DATACENTER_EDGE,
}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Seeds(_Strict):
    # TOML integers are signed 64-bit and these are unsigned, so the packs quote them.
    qsl_rng_seed: int
    sample_index_rng_seed: int
    schedule_rng_seed: int


class LoadGenRules(_Strict):
    version: str = Field(description="mlcommons-loadgen release to pin for this round")
    seed_releases: str = Field(description="releases whose embedded mlperf.conf has these seeds")
    seeds: Seeds
    source: str


class Layout(_Strict):
    """Where things live in a submission tree; paths are templates relative to the tree root."""

    name: str
    code_dir: str
    submitter_dirs: tuple[str, ...]
    system_json: str
    results_dir: str
    performance_dir: str
    accuracy_dir: str
    measurements_dir: str
    measurements_file: str
    compliance_dir: str
    source: str


class SubmissionLimits(_Strict):
    min_duration_ms: int
    max_accuracy_log_bytes: int
    source: str


class MeasurementsRules(_Strict):
    required_keys: tuple[str, ...]
    companions: tuple[str, ...] = Field(description="files that must sit beside the measurements JSON")
    source: str


class TreeRules(_Strict):
    max_file_mb: int
    calibration_file: str
    calibration_dirs: tuple[str, ...]
    source: str


class VerificationRules(_Strict):
    verification_file: str
    required_lines: tuple[str, ...]
    first_token_pass: str
    # Only right for Offline, where run_verification.py skips the first-token check.
    first_token_skipped: str
    source: str


class FileSets(_Strict):
    accuracy_required: tuple[str, ...]
    performance_required: tuple[str, ...]
    performance_optional: tuple[str, ...]
    power_run_required: tuple[str, ...]
    power_dir_required: tuple[str, ...]
    always_optional: tuple[str, ...]
    root_file_suffixes: tuple[str, ...]
    source: str


class CsvConstants(_Strict):
    design_power_watts: str
    source: str


class ScenarioSet(_Strict):
    required: tuple[Scenario, ...]
    optional: tuple[Scenario, ...] = ()
    # The checker demands one of these when a benchmark lists both Server and Interactive as optional.
    one_of_required: tuple[Scenario, ...] = ()


class AccuracyBound(_Strict):
    metric: str
    reference: float
    factor: float

    @property
    def threshold(self) -> float:
        # Same float arithmetic as the official checker, so borderline values agree.
        return self.reference * self.factor


class AccuracyRules(_Strict):
    targets: tuple[AccuracyBound, ...] = Field(description="value must be >= reference x factor")
    upper_limits: tuple[AccuracyBound, ...] = Field(default=(), description="value must be <= ...")
    source: str


class DatasetRules(_Strict):
    name: str
    size: int
    performance_sample_count: int
    accuracy_sample_count: int
    offline_min_samples_per_query: int
    source: str


class TokenLatencyLimits(_Strict):
    ttft_ms: float
    tpot_ms: float


class GenerationRules(_Strict):
    """What the reference implementation generates; the harness must match it."""

    model: str
    max_input_tokens: int
    max_output_tokens: int
    min_output_tokens: int
    max_model_len: int
    bos_token_id: int
    eos_token_id: int
    temperature: float
    top_k: int
    top_p: float
    seed: int
    mean_input_tokens: int
    source: str


class RunSizing(_Strict):
    """What LoadGen issues in a run, so a plan's wall time can be estimated before it starts."""

    loadgen_min_query_count: dict[Scenario, int]
    offline_sample_slack: float = Field(description="Offline issues min_duration x target_qps x this")
    whole_sample_sets: bool = Field(description="runs are rounded up to whole sets (equal-issue mode)")
    source: str


class BenchmarkRules(_Strict):
    name: str = Field(description="benchmark directory name in a submission tree")
    loadgen_models: dict[Scenario, str]
    dataset: DatasetRules
    accuracy: AccuracyRules
    scenarios: dict[SystemTypeTable, ScenarioSet]
    min_query_count: dict[Scenario, int]
    server_latency_constraint_ms: int | None = None
    token_latency_limits: dict[Scenario, TokenLatencyLimits] = Field(default_factory=dict)
    compliance_tests: tuple[str, ...]
    units: dict[Scenario, str]
    result_keys: dict[Scenario, str]
    generation: GenerationRules | None = None
    run_sizing: RunSizing | None = None
    source: str


class RoundRules(_Strict):
    name: str
    checker_version_flag: str = Field(description="what the official checker's --version takes")
    loadgen: LoadGenRules
    limits: SubmissionLimits
    measurements: MeasurementsRules
    tree: TreeRules
    compliance: dict[str, VerificationRules]
    files: FileSets
    csv: CsvConstants
    layout: Layout
    benchmarks: dict[str, BenchmarkRules]
    source: str

    @field_validator("benchmarks")
    @classmethod
    def _names_match_keys(cls, value: dict[str, BenchmarkRules]) -> dict[str, BenchmarkRules]:
        for key, bench in value.items():
            if key != bench.name:
                raise ValueError(f"benchmark table {key!r} names itself {bench.name!r}")
        return value

    def benchmark(self, name: str) -> BenchmarkRules:
        try:
            return self.benchmarks[name]
        except KeyError:
            known = ", ".join(self.benchmarks)
            raise UnknownBenchmarkError(
                f"benchmark {name!r} is not part of round {self.name}; it has: {known}"
            ) from None


class UnknownBenchmarkError(UsageProblem):
    pass
