"""Typed rules of one MLPerf Inference round, as loaded from its TOML pack.

Every number a check, the harness or staging needs comes from these objects; each section carries
the `source` it was taken from so that `submitter rounds show` can cite it.

The models are msgspec structs rather than pydantic models: every `submitter check` loads a round, and
pydantic's import alone takes longer than the official checker's whole run on a small tree.
"""

from __future__ import annotations

from enum import StrEnum

from msgspec import Struct

from submitter.errors import UsageProblem


class Scenario(StrEnum):
    OFFLINE = "Offline"
    SERVER = "Server"
    INTERACTIVE = "Interactive"
    SINGLE_STREAM = "SingleStream"
    MULTI_STREAM = "MultiStream"

    @classmethod
    def from_name(cls, name: object) -> Scenario | None:
        """The scenario a directory or log names; the official checker compares names case-insensitively."""
        if not isinstance(name, str):
            return None
        return _SCENARIOS_BY_LOWER_NAME.get(name.lower())


_SCENARIOS_BY_LOWER_NAME = {scenario.value.lower(): scenario for scenario in Scenario}


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


class _Strict(Struct, frozen=True, forbid_unknown_fields=True):
    """A pack table: read-only, and a misspelled key is an error. (Structs whose optional fields come
    before `source` say `kw_only=True`, which msgspec does not inherit.)"""


class Seeds(_Strict):
    # TOML integers are signed 64-bit and these are unsigned, so the packs quote them (registry converts).
    qsl_rng_seed: int
    sample_index_rng_seed: int
    schedule_rng_seed: int


class LoadGenRules(_Strict):
    version: str  # the mlcommons-loadgen release to pin for this round
    seed_releases: str  # releases whose embedded mlperf.conf has these seeds
    seeds: Seeds
    source: str


class Layout(_Strict, kw_only=True):
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
    # The nameplate power YAML beside the system description (v6.1 and later), if the round has one.
    nameplate_power: str | None = None
    source: str


class SubmissionLimits(_Strict):
    min_duration_ms: int
    max_accuracy_log_bytes: int
    source: str


class MeasurementsRules(_Strict):
    required_keys: tuple[str, ...]
    companions: tuple[str, ...]  # files that must sit beside the measurements JSON
    source: str


class SystemRules(_Strict):
    """What the official checker asks of a system description."""

    required_keys: tuple[str, ...]
    meaningful_keys: tuple[str, ...]  # must be truthy
    statuses: tuple[str, ...]  # compared lower-cased
    system_types: tuple[str, ...]  # compared exactly
    network_keys: tuple[str, ...]  # required once `is_network` is truthy
    power_keys: tuple[str, ...]  # describe a system measured for power
    network_sut_marker: str  # what a network-division SUT name must contain
    # Counts the summary.csv writer turns into integers: anything else crashes the official checker.
    integer_keys: tuple[str, ...]
    source: str


class TreeRules(_Strict):
    max_file_mb: int
    calibration_file: str
    calibration_dirs: tuple[str, ...]
    source: str


class AuditRules(_Strict, kw_only=True):
    """What one compliance test leaves in `<compliance dir>/<TEST>/` and what its verification must say."""

    # verify_accuracy.txt (TEST01, 06, 07, 08) or verify_output_len.txt (TEST09), when the test has one.
    verification_file: str | None = None
    # verify_performance.txt and the audit's own performance run (TEST01, TEST04).
    performance_file: str | None = None
    performance_run: str | None = None
    pass_marker: str = "TEST PASS"
    # True: a stripped line must equal the marker; False: the marker may appear anywhere in the file.
    pass_marker_is_line: bool = True
    # TEST06: the lines run_verification.py prints.
    required_lines: tuple[str, ...] = ()
    first_token_pass: str | None = None
    first_token_skipped: str | None = None  # only right for Offline, where the first-token check is skipped
    # TEST01: the accuracy files compared when the deterministic check did not pass.
    accuracy_dir_files: tuple[str, ...] = ()
    baseline_file: str | None = None
    compliance_file: str | None = None
    # TEST09 of endpoints-format results: the mean output length the performance run must reach.
    mean_output_tokens_range: tuple[float, float] | None = None
    # The name endpoints' audit files give the test (audit/audit_<name>.json), and whether an endpoints
    # result must have one (the official checker asks only TEST04's; the others are read when present).
    endpoints_name: str | None = None
    endpoints_required: bool = False
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
    # What summary.csv's design_power_watts column holds for a result without a power measurement.
    design_power_watts: str
    source: str


class ResultFields(_Strict, kw_only=True):
    """The LoadGen log key of each scenario's metric, the units, and the power units (summary.csv)."""

    keys: dict[Scenario, str]
    # The same for results in the endpoints format (v6.1), whose logs name other keys.
    endpoints_keys: dict[Scenario, str] = {}
    # The key of an endpoints result's tokens per second (its `tps`), for every scenario of a benchmark whose
    # LoadGen results are tokens per second; None: as the official checker, which reads it only under an
    # exact scenario name that endpoints runs ("offline") never write.
    endpoints_tokens_key: str | None = None
    units: dict[Scenario, str]
    power_units: dict[Scenario, str]
    # SingleStream and MultiStream results are latencies in ns, reported in ms.
    stream_latency_divisor: int
    # The LoadGen scenario that runs a directory's scenario where they differ (LoadGen has no Interactive).
    logged_as: dict[Scenario, Scenario] = {}
    source: str


class PowerRules(_Strict):
    """The Power WG's checks of a measured run (PTD and the mlcommons/power client and server)."""

    ptd_versions: tuple[str, ...]
    meter_models: dict[str, int]  # power analyser model -> PTD device type number
    multichannel_device_types: tuple[int, ...]
    time_tolerance_ms: int  # client and server clocks of one phase
    max_power_drop_percent: float  # testing below ranging
    max_duration_shortfall: float  # testing shorter than ranging (a warning)
    session_required_fields: tuple[str, ...]
    result_files: tuple[str, ...]  # relative to performance/, hashed in client.json and server.json
    ranging_tolerated_errors: tuple[str, ...]
    testing_tolerated_errors: tuple[str, ...]
    testing_uncertainty_error: str  # a regular expression
    sources: tuple[dict[str, str], ...]  # accepted sha1 sets of the mlcommons/power sources
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


class AccuracyRules(_Strict, kw_only=True):
    targets: tuple[AccuracyBound, ...]  # value must be >= reference x factor
    upper_limits: tuple[AccuracyBound, ...] = ()  # value must be <= ...
    # Scenarios with targets of their own (qwen3-vl's Interactive runs on a subset in v6.1).
    targets_by_scenario: dict[Scenario, tuple[AccuracyBound, ...]] = {}
    # TEST01's allowed difference between the audit's accuracy and the baseline, in percent.
    audit_delta_percent: float
    audit_delta_percent_by_metric: dict[str, float] = {}
    source: str

    def targets_for(self, scenario: Scenario | None) -> tuple[AccuracyBound, ...]:
        return self.targets_by_scenario.get(scenario, self.targets) if scenario else self.targets

    def audit_delta(self, metric: str) -> float:
        return self.audit_delta_percent_by_metric.get(metric, self.audit_delta_percent)


class DatasetRules(_Strict, kw_only=True):
    name: str
    size: int
    performance_sample_count: int
    accuracy_sample_count: int
    # Counts of scenarios that differ, keyed by the exact directory name the official checker looks up.
    accuracy_sample_count_by_scenario: dict[str, int] = {}
    # None where the official checker has no Offline minimum (benchmarks without an Offline scenario).
    offline_min_samples_per_query: int | None = None
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
    # The reference answers' mean length, for synthetic data with the real output profile; where the
    # round's accuracy rules have a tokens-per-sample target, it is that target's reference value.
    mean_output_tokens: float | None = None
    # Per run mode ("performance", "accuracy", "TEST07", ...): its own file in the dataset folder. Empty:
    # one dataset file serves every mode, generated to max_output_tokens.
    mode_datasets: dict[str, ModeDataset] = {}

    def dataset_for(self, mode: str) -> ModeDataset | None:
        """The mode's own dataset; audits without one of their own use the performance set."""
        if not self.mode_datasets:
            return None
        return self.mode_datasets.get(mode) or self.mode_datasets["performance"]

    def max_output_tokens_for(self, mode: str) -> int:
        own = self.dataset_for(mode)
        return own.max_output_tokens if own else self.max_output_tokens


class ModeDataset(_Strict):
    """One run mode's own dataset, where the reference keeps a file per purpose (gpt-oss-120b: the
    performance set, the smaller accuracy set and TEST07's GPQA set, each generated to its own length)."""

    file: str  # relative to the benchmark's dataset folder, as the reference's download lays it out
    samples: int
    max_output_tokens: int


class RunSizing(_Strict):
    """What LoadGen issues in a run, so a plan's wall time can be estimated before it starts."""

    loadgen_min_query_count: dict[Scenario, int]
    offline_sample_slack: float  # Offline issues min_duration x target_qps x this
    whole_sample_sets: bool  # runs are rounded up to whole sets (equal-issue mode)
    source: str


class BenchmarkRules(_Strict, kw_only=True):
    name: str  # the benchmark directory name in a closed submission tree
    family: str  # what kind of model, for people: llm, vision, speech, ...
    dataset: DatasetRules
    accuracy: AccuracyRules
    # Scenario tables per system type; a benchmark without one for a system's type is open-division only.
    scenarios: dict[SystemTypeTable, ScenarioSet] = {}
    min_query_count: dict[Scenario, int]
    latency_constraint_ns: dict[Scenario, int] = {}
    # An LLM: the log must measure token latencies, Server and Interactive runs are judged by TTFT/TPOT.
    llm: bool = False
    token_latency_limits: dict[Scenario, TokenLatencyLimits] = {}
    # Per scenario, the first LoadGen release whose mlperf.conf runs it in equal-issue mode (the official
    # checker no longer verifies it; runs made with that LoadGen or later must have it on).
    equal_issue_since: dict[Scenario, str] = {}
    min_duration_applies: bool = True
    compliance_tests: tuple[str, ...] = ()
    # Overrides of the round's result keys and units.
    result_keys: dict[Scenario, str] = {}
    units: dict[Scenario, str] = {}
    stream_latency_divisor: int | None = None
    # Files the accuracy folder must also hold: {folder: [file stems]} (SDXL images, wan videos).
    extra_accuracy_files: dict[str, tuple[str, ...]] = {}
    # May be submitted in the endpoints format (v6.1), and whether the official checker then compares the
    # reported score with the target (it does for qwen3-vl only).
    endpoints: bool = False
    endpoints_scored: bool = False
    # The harness's view: its plug-in (harness/benchmarks/<plugin>/; None: checked, never run), LoadGen
    # model names, the reference's generation and run sizing.
    plugin: str | None = None
    loadgen_models: dict[Scenario, str] = {}
    generation: GenerationRules | None = None
    run_sizing: RunSizing | None = None
    source: str


class ModelNames(_Strict):
    """How a benchmark folder's name becomes a benchmark: aliases, then the official checker's guesses."""

    aliases: dict[str, str]
    # (substring, benchmark): the first whose substring the folder name holds, then aliased again.
    guesses: tuple[tuple[str, str], ...]
    # The open division's own table, <division>/<submitter>/<file>.
    open_mapping_file: str
    source: str


class RoundRules(_Strict):
    name: str
    checker_version_flag: str  # what the official checker's --version takes
    loadgen: LoadGenRules
    limits: SubmissionLimits
    measurements: MeasurementsRules
    system: SystemRules
    tree: TreeRules
    compliance: dict[str, AuditRules]
    files: FileSets
    csv: CsvConstants
    layout: Layout
    results: ResultFields
    accuracy_patterns: dict[str, str]  # metric -> the regular expression that reads it from accuracy.txt
    power: PowerRules
    model_names: ModelNames
    benchmarks: dict[str, BenchmarkRules]
    source: str

    def __post_init__(self) -> None:
        for key, bench in self.benchmarks.items():
            if key != bench.name:
                raise ValueError(f"benchmark table {key!r} names itself {bench.name!r}")

    def benchmark(self, name: str) -> BenchmarkRules:
        try:
            return self.benchmarks[name]
        except KeyError:
            known = ", ".join(self.benchmarks)
            raise UnknownBenchmarkError(
                f"benchmark {name!r} is not part of round {self.name}; it has: {known}"
            ) from None

    def benchmark_name(self, folder: str, open_mapping: dict[str, str] | None = None) -> str:
        """The benchmark a results folder holds, resolved as the official checker resolves it."""
        if folder in self.benchmarks:
            return folder
        names = self.model_names
        for table in (names.aliases, open_mapping or {}):
            mapped = table.get(folder)
            if isinstance(mapped, str) and mapped:
                return mapped
        guess = next((model for part, model in names.guesses if part in folder), folder)
        return names.aliases.get(guess, guess)

    def result_key(self, bench: BenchmarkRules, scenario: Scenario) -> str | None:
        """The log key of a (directory) scenario's result, read from the LoadGen scenario that runs it."""
        logged = self.results.logged_as.get(scenario, scenario)
        return bench.result_keys.get(logged) or self.results.keys.get(logged)

    def units(self, bench: BenchmarkRules | None, scenario: Scenario) -> str | None:
        """The unit summary.csv names, as the official checker writes it."""
        return (bench.units.get(scenario) if bench else None) or self.results.units.get(scenario)

    def result_units(self, bench: BenchmarkRules | None, scenario: Scenario) -> str | None:
        """The unit of the number a result reports: the official label, except where that label says
        samples while the result's key counts tokens (whisper's result_tokens_per_second under
        "Samples/s"), which summary.csv keeps and every other output of ours corrects."""
        official = self.units(bench, scenario)
        key = self.result_key(bench, scenario) if bench else None
        if key and "tokens" in key and official and "Tokens" not in official:
            return "Tokens/s"
        return official


class UnknownBenchmarkError(UsageProblem):
    pass
