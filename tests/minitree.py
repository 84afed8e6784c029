"""Minimal but complete, valid MLPerf Inference submission trees, written from a round pack alone.

`build_tree(root, "v6.0", [("Sys", "gpt-oss-120b", "Offline"), ...])` writes, where the round's layout
puts them (v5.1: measurements/ and compliance/ beside results/, code/; v6: all in the result folder, src/):

- the system description `systems/<system>.json`: the 35 official keys of a complete description, with
  the tree's division, submitter and system type;
- the code folder (a README), and `documentation/calibration.md`;
- per result, `performance/run_1/` with LoadGen's summary and detail log, whose `:::MLLOG` records carry
  every key the rules read (the scenario LoadGen ran, which is Server for an Interactive result; the
  round's seeds; sample counts, minimum duration, query count and samples per query from the pack;
  early stopping met; the target latency and p99 latencies within the benchmark's constraints; token
  latencies under the TTFT/TPOT limits of LLMs; result_validity VALID; the LoadGen release; equal issue
  on where the benchmark's mlperf.conf turns it on; the scenario's result keys; no error record);
- `accuracy/` with the accuracy run's logs, a truncated `mlperf_log_accuracy.json`, and an accuracy.txt
  holding a line per target metric (written from that metric's own pattern, so the checker reads it;
  its value between the target and any upper limit) and the `hash=` line truncation adds, plus the
  generated samples the round names (SDXL images, wan videos);
- the measurements JSON with the round's required fields, user.conf and README.md;
- every compliance test the benchmark needs (closed and network divisions): TEST01/TEST04 with a
  verify_performance.txt saying TEST PASS and a valid performance run of their own, TEST01's and
  TEST06's accuracy checks, TEST07/TEST08/TEST09's verification files (TEST07's and TEST09's with the
  accuracy log they judged).

Every number comes from the pack (`submitter.rounds`), so a benchmark added to a pack gets a valid tree
without a change here.

API: `build_tree(root, round_name, results, *, division="closed", submitter="Org",
system_type="datacenter", model_mapping=None) -> MiniTree`, where each result is `(system, benchmark
folder, scenario folder)`, or with a fourth item, the scenario LoadGen ran (an edge result inferred from
another run). `MiniTree` records what was written (`tree.result(folder, scenario)` -> `WrittenResult`: its
folders, performance records and printed accuracy values), so tests compute expected values from it.
`scenarios_for` and `system_type_for` pick what a benchmark's scenario table asks; `add_power` turns a
result into a power result (with a PTD session's files, e.g. from tests/test_check_power.py's `Session`);
`add_endpoints_result` adds a result in the endpoints format (v6.1) from tests/fixtures/endpoints.
`write_test07_verification` and `write_test09_verification` rewrite those verifications as the official
scripts print them, numbers included (by default passing the benchmark's official audit.config).
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import shutil
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from submitter.fileformats.mlperf_log import MLLOG_PREFIX
from submitter.rounds.models import (
    SYSTEM_TYPE_TABLES,
    AccuracyBound,
    BenchmarkRules,
    RoundRules,
    Scenario,
    SystemTypeTable,
)
from submitter.rounds.registry import load_round

ENDPOINTS_FIXTURES = Path(__file__).parent / "fixtures" / "endpoints"
STREAM = (Scenario.SINGLE_STREAM, Scenario.MULTI_STREAM)
# LoadGen's MultiStream issues 8 samples per query (a LoadGen fact, not a benchmark's).
MULTISTREAM_SAMPLES_PER_QUERY = 8
NS_PER_MS = 1_000_000
# How the extra accuracy files of a folder are named (utils.py check_extra_files: images .png, videos .mp4).
EXTRA_FILE_SUFFIXES = {"images": ".png", "videos": ".mp4"}

ResultSpec = tuple[str, str, str] | tuple[str, str, str, str]  # system, benchmark folder, scenario[, logged]


# --- what a tree holds ------------------------------------------------------------------------------------


@dataclass
class WrittenResult:
    """One result as written: where its files are and the values a test may compute expectations from."""

    system: str
    folder: str  # the benchmark folder's name as written
    scenario: str  # the scenario folder's name as written
    bench: BenchmarkRules
    logged: Scenario  # the scenario LoadGen ran
    result_dir: Path
    performance_dir: Path
    accuracy_dir: Path
    measurements_dir: Path
    compliance_dir: Path
    performance: dict[str, Any] = field(default_factory=dict)  # the performance log's records
    accuracy: dict[str, str] = field(default_factory=dict)  # target metric -> the value accuracy.txt prints
    audits: dict[str, Path] = field(default_factory=dict)  # TESTxx -> its folder

    @property
    def performance_log(self) -> Path:
        return self.performance_dir / "mlperf_log_detail.txt"

    @property
    def accuracy_log(self) -> Path:
        return self.accuracy_dir / "mlperf_log_detail.txt"

    @property
    def accuracy_txt(self) -> Path:
        return self.accuracy_dir / "accuracy.txt"


@dataclass
class MiniTree:
    root: Path
    rules: RoundRules
    division: str
    submitter: str
    system_type: str
    results: list[WrittenResult] = field(default_factory=list)

    @property
    def submitter_dir(self) -> Path:
        return self.root / self.division / self.submitter

    @property
    def code_dir(self) -> Path:
        return self.path(self.rules.layout.code_dir)

    def system_json(self, system: str) -> Path:
        return self.path(self.rules.layout.system_json, system=system)

    def result(self, folder: str | None = None, scenario: str | None = None) -> WrittenResult:
        """The (only) result of a benchmark folder and scenario; either may be left out when unique."""
        found = [
            result
            for result in self.results
            if folder in (None, result.folder) and scenario in (None, result.scenario)
        ]
        if len(found) != 1:
            raise LookupError(f"{len(found)} results match {folder}/{scenario}")
        return found[0]

    def path(self, template: str, **names: str) -> Path:
        """A path of the round's layout (a template such as `{division}/{submitter}/src`) in this tree."""
        return self.root / template.format(division=self.division, submitter=self.submitter, **names)


# --- the tree ---------------------------------------------------------------------------------------------


def build_tree(
    root: Path,
    round_name: str,
    results: Iterable[ResultSpec],
    *,
    division: str = "closed",
    submitter: str = "Org",
    system_type: str = "datacenter",
    model_mapping: Mapping[str, str] | None = None,
) -> MiniTree:
    """Write a valid tree of `results` under `root` (the folder that will hold closed/ or open/)."""
    rules = load_round(round_name)
    tree = MiniTree(root, rules, division, submitter, system_type)
    _write(tree.code_dir / "README.md", "The harness that produced these results.\n")
    calibration = tree.path(rules.tree.calibration_dirs[-1]) / rules.tree.calibration_file
    _write(calibration, "Weights are used as published: no quantisation.\n")
    if model_mapping is not None:
        _write(tree.submitter_dir / rules.model_names.open_mapping_file, json.dumps(dict(model_mapping)))
    systems = set()
    for spec in results:
        system, folder, scenario = spec[:3]
        if system not in systems:
            _write_json(tree.system_json(system), system_description(division, submitter, system_type))
            systems.add(system)
        logged = Scenario.from_name(spec[3]) if len(spec) > 3 else None
        tree.results.append(write_result(tree, system, folder, scenario, logged, model_mapping))
    return tree


def write_result(
    tree: MiniTree,
    system: str,
    folder: str,
    scenario: str,
    logged: Scenario | None = None,
    model_mapping: Mapping[str, str] | None = None,
) -> WrittenResult:
    """One result's performance run, accuracy run, measurements and compliance tests."""
    rules = tree.rules
    bench = rules.benchmarks[rules.benchmark_name(folder, dict(model_mapping or {}))]
    directory = Scenario.from_name(scenario)
    assert directory is not None, scenario
    logged = logged or rules.results.logged_as.get(directory, directory)

    def where(template: str) -> Path:
        return tree.path(template, system=system, benchmark=folder, scenario=scenario)

    layout = rules.layout
    result = WrittenResult(
        system,
        folder,
        scenario,
        bench,
        logged,
        result_dir=where(layout.results_dir),
        performance_dir=where(layout.performance_dir),
        accuracy_dir=where(layout.accuracy_dir),
        measurements_dir=where(layout.measurements_dir),
        compliance_dir=where(layout.compliance_dir),
    )
    result.performance = performance_records(rules, bench, directory, logged)
    write_run(result.performance_dir, result.performance)
    result.accuracy = write_accuracy(result.accuracy_dir, rules, bench, directory, logged)
    write_measurements(result.measurements_dir, rules, system)
    if tree.division in ("closed", "network"):
        result.audits = write_audits(result, rules, directory)
    return result


# --- system description -----------------------------------------------------------------------------------


@cache
def _complete_description() -> dict[str, Any]:
    from conftest import valid_system

    return valid_system()


def system_description(division: str, submitter: str, system_type: str) -> dict[str, Any]:
    """A complete official description (35 keys) for this tree's division, submitter and system type."""
    description = copy.deepcopy(_complete_description())
    description.update(division=division, submitter=submitter, system_type=system_type)
    return description


def system_type_for(table: SystemTypeTable) -> str:
    """The `system_type` value of a system whose benchmarks read `table`."""
    return next(value for value, read in SYSTEM_TYPE_TABLES.items() if read is table)


def scenarios_for(bench: BenchmarkRules, table: SystemTypeTable, one_of: Scenario | None = None) -> list[str]:
    """The scenarios a system of `table` must submit, with one of Server/Interactive where one is asked."""
    scenarios = bench.scenarios[table]
    chosen = [*scenarios.required]
    if scenarios.one_of_required:
        chosen.append(one_of if one_of is not None else scenarios.one_of_required[0])
    return [scenario.value for scenario in chosen]


# --- LoadGen logs -----------------------------------------------------------------------------------------


def mllog(key: str, value: Any) -> str:
    record = {
        "key": key,
        "value": value,
        "time_ms": 0.001,
        "namespace": "mlperf::logging",
        "event_type": "POINT_IN_TIME",
        "metadata": {"is_error": False, "is_warning": False, "file": "loadgen.cc", "line_no": 1, "pid": 1},
    }
    return MLLOG_PREFIX + json.dumps(record)


def detail_log(records: Mapping[str, Any]) -> str:
    return "".join(f"{mllog(key, value)}\n" for key, value in records.items())


def metric_value(key: str) -> float | int:
    """A distinct, plausible value for a result key: ns for latencies, a rate for anything else."""
    spread = zlib.crc32(key.encode())
    if "latency" in key:
        return (spread % 90 + 10) * NS_PER_MS + spread % 1000
    return (spread % 9000 + 1000) + 0.25


def _identity(rules: RoundRules, logged: Scenario, mode: str) -> dict[str, Any]:
    seeds = rules.loadgen.seeds
    return {
        "loadgen_version": f"{rules.loadgen.version} @ 5f8e4d3c2b",
        "loadgen_git_commit_hash": "5f8e4d3c2b1a09876543210fedcba9876543210f",
        "test_datetime": "2025-07-13T00:00:00Z",
        "sut_name": "Org SUT",
        "effective_scenario": logged.value,
        "effective_test_mode": mode,
        "effective_qsl_rng_seed": seeds.qsl_rng_seed,
        "effective_sample_index_rng_seed": seeds.sample_index_rng_seed,
        "effective_schedule_rng_seed": seeds.schedule_rng_seed,
    }


def performance_records(
    rules: RoundRules, bench: BenchmarkRules, directory: Scenario, logged: Scenario
) -> dict[str, Any]:
    """What LoadGen logs of a VALID run of `logged` for a result in the `directory` scenario folder."""
    dataset = bench.dataset
    records = _identity(rules, logged, "PerformanceOnly")
    records.update(
        {
            "effective_sample_concatenate_permutation": directory in bench.equal_issue_since,
            "effective_performance_sample_count": dataset.performance_sample_count,
            "effective_min_duration_ms": rules.limits.min_duration_ms,
            "effective_min_query_count": bench.min_query_count.get(logged, 1),
            "effective_samples_per_query": _samples_per_query(bench, logged),
            "requested_use_token_latencies": bench.llm,
            "qsl_reported_total_count": dataset.size,
            "qsl_reported_performance_count": dataset.performance_sample_count,
        }
    )
    if logged in bench.latency_constraint_ns:
        records["effective_target_latency_ns"] = bench.latency_constraint_ns[logged]
    records.update(_results(rules, bench, logged))
    records.update({"result_validity": "VALID", "early_stopping_met": True})
    records["early_stopping_result"] = " * Processed at least 64 queries (2048)."
    return records


def _samples_per_query(bench: BenchmarkRules, logged: Scenario) -> int:
    if logged is Scenario.OFFLINE:
        return bench.dataset.offline_min_samples_per_query or bench.dataset.performance_sample_count
    return MULTISTREAM_SAMPLES_PER_QUERY if logged is Scenario.MULTI_STREAM else 1


def _results(rules: RoundRules, bench: BenchmarkRules, logged: Scenario) -> dict[str, Any]:
    """The scenario's result keys, what inferring another scenario reads, and latencies within limits."""
    keys = [rules.results.keys[logged], bench.result_keys.get(logged)]
    if logged is Scenario.SINGLE_STREAM:  # Offline and MultiStream results may be inferred from it
        keys += ["result_qps_without_loadgen_overhead", "early_stopping_latency_ms"]
    values = {key: metric_value(key) for key in keys if key}
    constraints = [*bench.latency_constraint_ns.values()]
    p99 = min(constraints, default=200 * NS_PER_MS) // 2
    values.update(
        {
            "result_99.00_percentile_latency_ns": p99,
            "result_mean_latency_ns": p99 // 2,
            "result_mean_query_latency_ns": p99 // 2,
            "result_query_count": 4096,
        }
    )
    if bench.llm:
        limits = bench.token_latency_limits.values()
        values["result_first_token_99.00_percentile_latency_ns"] = _below([lim.ttft_ms for lim in limits])
        values["result_time_per_output_token_99.00_percentile_ns"] = _below([lim.tpot_ms for lim in limits])
    return values


def _below(limits_ms: Sequence[float]) -> int:
    """Half the tightest limit, in ns (a benchmark without limits gets 100 ms)."""
    return int(min(limits_ms, default=200) * NS_PER_MS / 2)


def summary_text(records: Mapping[str, Any]) -> str:
    return (
        "================================================\n"
        "MLPerf Results Summary\n"
        "================================================\n"
        f"SUT name : {records['sut_name']}\n"
        f"Scenario : {records['effective_scenario']}\n"
        f"Mode     : {records['effective_test_mode']}\n"
        f"Result is : {records.get('result_validity', 'VALID')}\n"
    )


def write_run(folder: Path, records: Mapping[str, Any]) -> None:
    """A LoadGen run folder: mlperf_log_detail.txt and mlperf_log_summary.txt."""
    _write(folder / "mlperf_log_detail.txt", detail_log(records))
    _write(folder / "mlperf_log_summary.txt", summary_text(records))


# --- accuracy ---------------------------------------------------------------------------------------------

ACCURACY_LOG = '[\n{ "seq_id" : 0, "qsl_idx" : 0, "data" : "3F800000" }\n]\n'


def accuracy_sample_count(bench: BenchmarkRules, scenario: str) -> int:
    by_scenario = bench.dataset.accuracy_sample_count_by_scenario
    return by_scenario.get(scenario, bench.dataset.accuracy_sample_count)


def accuracy_values(
    bench: BenchmarkRules, directory: Scenario, patterns: Mapping[str, str]
) -> dict[str, str]:
    """Metric -> the value printed: between the target and any upper limit of that metric."""
    uppers = {bound.metric: bound.threshold for bound in bench.accuracy.upper_limits}
    return {
        bound.metric: _value_between(bound, uppers.get(bound.metric))
        for bound in bench.accuracy.targets_for(directory)
    }


def _value_between(bound: AccuracyBound, upper: float | None) -> str:
    value = max(bound.reference, bound.threshold) if upper is None else (bound.threshold + upper) / 2
    text = f"{value:.4f}"
    if float(text) < bound.threshold:
        text = f"{bound.threshold + 0.0001:.4f}"
    assert float(text) >= bound.threshold and (upper is None or float(text) <= upper), (bound, upper)
    return text


def accuracy_line(pattern: str, value: str) -> str:
    """A line that `pattern` matches with `value` as its group 1, built from the pattern itself."""
    from re import _parser  # the regular-expression parser, to turn the pattern into a matching line

    line = _example(_parser.parse(pattern), value)
    match = re.match(pattern, line)
    if match is None or match.group(1) != value:
        raise ValueError(f"cannot write a line for {pattern!r}: {line!r}")
    return line


def _example(items: Any, value: str) -> str:
    from re import _constants as c

    text = []
    for op, arg in items:
        if op is c.LITERAL:
            text.append(chr(arg))
        elif op is c.SUBPATTERN:
            text.append(value if arg[0] == 1 else _example(arg[-1], value))
        elif op is c.BRANCH:
            text.append(_example(min(arg[1], key=len), value))
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT):
            low, high, body = arg
            spaces = [item for item in body if item == (c.IN, [(c.CATEGORY, c.CATEGORY_SPACE)])]
            text.append(" " if spaces and high >= 1 else _example(body, value) * low)
        elif op is c.IN:
            text.append(_member(arg, c))
        elif op is c.ANY:
            text.append("x")
        elif op is not c.AT:
            raise ValueError(f"no example for {op}")
    return "".join(text)


def _member(items: Any, c: Any) -> str:
    """A character of a set: a literal, a range's first, or a category's."""
    op, arg = items[0]
    if op is c.LITERAL:
        return chr(arg)
    if op is c.RANGE:
        return chr(arg[0])
    return {c.CATEGORY_DIGIT: "0", c.CATEGORY_SPACE: " ", c.CATEGORY_WORD: "a"}[arg]


def accuracy_txt(values: Mapping[str, str], patterns: Mapping[str, str], digest: str) -> str:
    lines = [accuracy_line(patterns[metric], value) for metric, value in values.items()]
    return "\n".join([*lines, f"hash={digest}"]) + "\n"


def write_accuracy(
    folder: Path, rules: RoundRules, bench: BenchmarkRules, directory: Scenario, logged: Scenario
) -> dict[str, str]:
    """accuracy/: the accuracy run's logs, accuracy.txt and the extra files; returns the printed values."""
    records = _identity(rules, logged, "AccuracyOnly")
    records["qsl_reported_total_count"] = accuracy_sample_count(bench, directory.value)
    records["qsl_reported_performance_count"] = bench.dataset.performance_sample_count
    write_run(folder, records)
    _write(folder / "mlperf_log_accuracy.json", ACCURACY_LOG)
    values = accuracy_values(bench, directory, rules.accuracy_patterns)
    digest = hashlib.sha256(ACCURACY_LOG.encode()).hexdigest()
    _write(folder / "accuracy.txt", accuracy_txt(values, rules.accuracy_patterns, digest))
    for name, stems in bench.extra_accuracy_files.items():
        suffix = EXTRA_FILE_SUFFIXES.get(name, ".bin")
        for stem in stems:
            _write(folder / name / f"{stem}{suffix}", "generated sample\n")
        _write(folder / name / "captions.txt", "".join(f"{stem}: a prompt\n" for stem in stems))
    return values


# --- measurements -----------------------------------------------------------------------------------------


def write_measurements(folder: Path, rules: RoundRules, system: str, user_conf: bool = True) -> None:
    name = rules.layout.measurements_file.format(system=system)
    _write_json(folder / name, {key: f"{key} of the run" for key in rules.measurements.required_keys})
    for companion in rules.measurements.companions:
        if companion == "user.conf" and not user_conf:
            continue
        _write(folder / companion, f"# {companion} of the run\n*.Offline.target_qps = 1\n")


# --- compliance -------------------------------------------------------------------------------------------

# The audits whose run_verification.py copies the accuracy log it judged into <TEST>/accuracy/.
AUDITS_KEEPING_THEIR_LOG = ("TEST07", "TEST09")


def write_audits(result: WrittenResult, rules: RoundRules, directory: Scenario) -> dict[str, Path]:
    """Every compliance test the benchmark requires, passed, where the layout puts them."""
    folders = {}
    for test in result.bench.compliance_tests:
        audit = rules.compliance[test]
        folder = result.compliance_dir / test
        folders[test] = folder
        if audit.performance_run:
            write_run(folder / audit.performance_run, result.performance)
            _write(folder / audit.performance_file, "reference score : 1.0\ntest score : 1.0\nTEST PASS\n")
        if audit.required_lines:  # TEST06
            first = audit.first_token_skipped if directory is Scenario.OFFLINE else audit.first_token_pass
            lines = [first, *audit.required_lines, "TEST06 verification complete"]
            _write(folder / audit.verification_file, "\n".join(lines) + "\n")
            _write(folder / "accuracy" / "mlperf_log_accuracy.json", ACCURACY_LOG)
        elif audit.verification_file:
            _write(folder / audit.verification_file, f"{test} verification\n{audit.pass_marker}\n")
            if test in AUDITS_KEEPING_THEIR_LOG:
                _write(folder / "accuracy" / "mlperf_log_accuracy.json", ACCURACY_LOG)
        if audit.accuracy_dir_files:  # TEST01's accuracy run, same as the result's
            write_test01_accuracy(folder / "accuracy", result)
    return folders


def write_test01_accuracy(folder: Path, result: WrittenResult) -> None:
    """TEST01's accuracy/ as its verification leaves it: the audit reads the accuracy of the result."""
    text = result.accuracy_txt.read_text()
    _write(folder / "mlperf_log_accuracy.json", ACCURACY_LOG)
    for name in ("accuracy.txt", "baseline_accuracy.txt", "compliance_accuracy.txt"):
        _write(folder / name, text)


# --- audit verifications as the official scripts print them ----------------------------------------------


def write_test07_verification(
    result: WrittenResult, score: float | None = None, threshold: float | None = None
) -> Path:
    """TEST07's verify_accuracy.txt as run_verification.py leaves it: the accuracy script's output, then the
    summary (written by our verifier); by default a score just over the audit.config's threshold, checked
    against that threshold."""
    from compliance.registry import verifier_bounds
    from compliance.TEST07.verify import THRESHOLD_KEY, VERIFY_FILE, Test07Verdict

    bounds = verifier_bounds("TEST07", result.bench.name)
    assert bounds is not None, result.bench.name
    required = bounds.values[THRESHOLD_KEY]
    score = round(required + 1, 3) if score is None else score
    verdict = Test07Verdict(required if threshold is None else threshold, score, samples=1)
    output = f"{{'exact_match': {score}, 'tokens_per_sample': 1024.0}}\n"
    return _write(result.audits["TEST07"] / VERIFY_FILE, output + verdict.summary())


def write_test09_verification(
    result: WrittenResult, mean: int | None = None, bounds: tuple[float, float] | None = None
) -> Path:
    """TEST09's verify_output_len.txt as run_verification.py writes it (through our verifier); by default a
    mean output length in the middle of the audit.config's bounds, checked against them."""
    from compliance.registry import verifier_bounds
    from compliance.TEST09.verify import VERIFY_FILE, Test09Verdict

    official = verifier_bounds("TEST09", result.bench.name)
    assert official is not None, result.bench.name
    low, high = bounds or (
        official.values["test09_min_output_tokens"],
        official.values["test09_max_output_tokens"],
    )
    mean = round((low + high) / 2) if mean is None else mean
    return _write(result.audits["TEST09"] / VERIFY_FILE, Test09Verdict([mean, mean], low, high).text())


# --- power ------------------------------------------------------------------------------------------------

NAMEPLATE_YAML = """\
Server:
  PSUs:
    - PowerCapacityWatts: 2000
    - PowerCapacityWatts: 2000
  Min PSUs Needed: 1
"""


def power_records(result: WrittenResult, begin: str, end: str) -> dict[str, Any]:
    """The result's performance records with the power window LoadGen logs when a power run is made."""
    return {**result.performance, "power_begin": begin, "power_end": end}


def add_power(tree: MiniTree, result: WrittenResult, files: Mapping[str, bytes]) -> None:
    """Make `result` a power result: `files` (relative to performance/: power/, ranging/, run_1/) are a PTD
    session's, whose run_1/mlperf_log_detail.txt is the result's (see `power_records`); v6.1 and later
    also get the system's nameplate power YAML."""
    performance = result.performance_dir.parent
    for relative, data in files.items():
        path = performance / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    template = tree.rules.layout.nameplate_power
    if template is not None:
        _write(tree.path(template, system=result.system), NAMEPLATE_YAML)


# --- endpoints (v6.1) -------------------------------------------------------------------------------------


def add_endpoints_result(
    tree: MiniTree,
    system: str,
    folder: str,
    scenario: str = "Offline",
    fixture: Path = ENDPOINTS_FIXTURES / "llama3.1-8b" / "Offline",
) -> Path:
    """An endpoints-format result copied from a fixture, with the pack's seeds, duration and counts."""
    import yaml

    rules = tree.rules
    bench = rules.benchmarks[rules.benchmark_name(folder)]
    results_dir = tree.path(rules.layout.results_dir, system=system, benchmark=folder, scenario=scenario)
    shutil.copytree(fixture, results_dir)
    config_path = next(
        results_dir / name for name in ("config.yaml", "config.yml") if (results_dir / name).exists()
    )
    config = yaml.safe_load(config_path.read_text())
    runtime = config["settings"]["runtime"]
    runtime["dataloader_random_seed"] = rules.loadgen.seeds.sample_index_rng_seed
    runtime["scheduler_random_seed"] = rules.loadgen.seeds.schedule_rng_seed
    runtime["min_duration_ms"] = rules.limits.min_duration_ms
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    _edit_json(results_dir / "accuracy" / "accuracy_results.json", _set_accuracy_count(bench, scenario))
    ranges = [rules.compliance[t].mean_output_tokens_range for t in bench.compliance_tests]
    low_high = next((pair for pair in ranges if pair), None)
    if low_high is not None:
        average = (low_high[0] + low_high[1]) / 2
        _edit_json(results_dir / "performance" / "result_summary.json", _set_mean_output(average))
    if not tree.system_json(system).exists():
        description = system_description(tree.division, tree.submitter, tree.system_type)
        _write_json(tree.system_json(system), description)
    write_measurements(results_dir, rules, system, user_conf=False)
    return results_dir


def _set_accuracy_count(bench: BenchmarkRules, scenario: str) -> Any:
    """Spread the accuracy run's sample count over the accuracy datasets (the checker sums them)."""

    def change(data: dict[str, Any]) -> None:
        entries = [e for e in data["accuracy_scores"] if e.get("dataset_type") in (None, "accuracy")]
        total = accuracy_sample_count(bench, scenario)
        for index, entry in enumerate(entries):
            share = total // len(entries) + (total % len(entries) if index == 0 else 0)
            entry["total_samples"] = share
            entry.pop("unit_samples", None)
            entry.pop("num_repeats", None)
            entry.get("response_counts", {}).pop("issued", None)

    return change


def _set_mean_output(average: float) -> Any:
    def change(data: dict[str, Any]) -> None:
        data["output_sequence_lengths"]["avg"] = average

    return change


# --- files ------------------------------------------------------------------------------------------------


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _write_json(path: Path, data: Any) -> Path:
    return _write(path, json.dumps(data, indent=2) + "\n")


def _edit_json(path: Path, change: Any) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2) + "\n")
