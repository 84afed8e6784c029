"""Every fact of submitter's round packs beside the official checker's constants, round by round.

    python bench/packs_vs_official.py --official /path/to/mlcommons/inference/tools/submission

Imports the official `submission_checker.constants` (and its configuration's rules) from the given
folder at run time and compares, for every round submitter knows and every benchmark either side
lists: scenario tables, accuracy targets and upper limits (the computed thresholds, compared exactly),
TEST01 deltas, sample counts, latency constraints, query minimums, compliance tests, result keys,
units, token latency limits, LLM status, extra accuracy files, aliases, accuracy patterns, system keys
and the Power WG's constants (checks/power/power_checker.py and its sources_checksums.json).
Prints each difference and exits 1 when there is any.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path
from typing import Any

from submitter.rounds.models import RoundRules, Scenario, SystemTypeTable
from submitter.rounds.registry import available_rounds, load_round

TABLES = {
    SystemTypeTable.DATACENTER: "datacenter",
    SystemTypeTable.EDGE: "edge",
    SystemTypeTable.DATACENTER_EDGE: "datacenter-edge",
}
TESTS = ("TEST01", "TEST04", "TEST06", "TEST07", "TEST08", "TEST09")


def official_benchmarks(base: dict[str, Any]) -> set[str]:
    """Names the official round knows well enough to accept a result of (they have an accuracy target)."""
    return set(base["accuracy-target"]) & set(base["performance-sample-count"])


def pairs(flat: tuple[Any, ...] | None) -> list[tuple[str, float]]:
    return [] if not flat else [(flat[i], float(flat[i + 1])) for i in range(0, len(flat), 2)]


def compare_round(rules: RoundRules, constants: Any, config_module: Any) -> list[str]:
    base = constants.MODEL_CONFIG[rules.checker_version_flag]
    diffs: list[str] = []

    def expect(what: str, ours: Any, theirs: Any) -> None:
        if ours != theirs:
            diffs.append(f"{rules.name} {what}: ours {ours!r}, official {theirs!r}")

    expect("benchmarks", sorted(rules.benchmarks), sorted(official_benchmarks(base)))
    expect("seeds", {k: getattr(rules.loadgen.seeds, k) for k in base["seeds"]}, base["seeds"])
    expect("aliases", rules.model_names.aliases, base["model_mapping"])
    expect("accuracy patterns", rules.accuracy_patterns, constants.ACC_PATTERN)
    expect("system required keys", list(rules.system.required_keys), constants.SYSTEM_DESC_REQUIRED_FIELDS)
    expect(
        "system meaningful keys",
        list(rules.system.meaningful_keys),
        constants.SYSTEM_DESC_MEANINGFUL_RESPONSE_REQUIRED_FIELDS,
    )
    expect("statuses", list(rules.system.statuses), constants.VALID_AVAILABILITIES)
    expect(
        "network keys", list(rules.system.network_keys), constants.SYSTEM_DESC_REQUIRED_FIELDS_NETWORK_MODE
    )
    expect("power keys", list(rules.system.power_keys), constants.SYSTEM_DESC_REQUIRED_FIELDS_POWER)
    expect("measurement keys", list(rules.measurements.required_keys), constants.SYSTEM_IMP_REQUIRED_FILES)
    expect("min duration", rules.limits.min_duration_ms, constants.TEST_DURATION_MS)
    expect("accuracy log size", rules.limits.max_accuracy_log_bytes, constants.MAX_ACCURACY_LOG_SIZE)
    expect(
        "result keys",
        {s.value: k for s, k in rules.results.keys.items()},
        constants.RESULT_FIELD_NEW[rules.checker_version_flag],
    )
    expect(
        "units",
        {s.value: u for s, u in rules.results.units.items()},
        {k: v for k, v in constants.UNIT_DICT.items() if k[0].isupper()},
    )
    expect(
        "power units",
        {s.value: u for s, u in rules.results.power_units.items()},
        {k: v for k, v in constants.POWER_UNIT_DICT.items() if k[0].isupper()},
    )
    power = importlib.import_module("submission_checker.checks.power.power_checker")
    checksums = Path(power.__file__).with_name("sources_checksums.json")
    expect("PTD versions", list(rules.power.ptd_versions), power.SUPPORTED_VERSION)
    expect("power meters", rules.power.meter_models, power.SUPPORTED_MODEL)
    expect("power time tolerance", rules.power.time_tolerance_ms, power.TIME_DELTA_TOLERANCE)
    expect("power result files", list(rules.power.result_files), power.RESULT_PATHS)
    expect("ranging errors", list(rules.power.ranging_tolerated_errors), power.COMMON_ERROR_RANGING)
    expect("testing errors", list(rules.power.testing_tolerated_errors), power.COMMON_ERROR_TESTING)
    expect(
        "uncertainty error",
        [rules.power.testing_uncertainty_error],
        [pattern.pattern for pattern in power.WARNING_NEEDS_TO_BE_ERROR_TESTING_RE],
    )
    expect("power sources", list(rules.power.sources), json.loads(checksums.read_text()))
    config = config_module.Config(rules.checker_version_flag, None)
    for name in sorted(rules.benchmarks.keys() & official_benchmarks(base)):
        diffs += compare_benchmark(rules, name, base, constants, config)
    return diffs


def compare_benchmark(
    rules: RoundRules, name: str, base: dict[str, Any], constants: Any, config: Any
) -> list[str]:
    bench = rules.benchmarks[name]
    version = rules.checker_version_flag
    diffs: list[str] = []

    def expect(what: str, ours: Any, theirs: Any) -> None:
        if ours != theirs:
            diffs.append(f"{rules.name} {name} {what}: ours {ours!r}, official {theirs!r}")

    for table, key in TABLES.items():
        ours = bench.scenarios.get(table)
        required = base[f"required-scenarios-{key}"].get(name)
        optional = base[f"optional-scenarios-{key}"].get(name, [])
        expect(f"{key} required", None if ours is None else [s.value for s in ours.required], required)
        if ours is not None:
            expect(f"{key} optional", sorted(s.value for s in ours.optional), sorted(optional))
            one_of = {"Interactive", "Server"} <= set(optional)
            expect(f"{key} one of Interactive/Server", bool(ours.one_of_required), one_of)
    target = base["accuracy-target"][name]
    by_scenario = target if isinstance(target, dict) else {}
    default = by_scenario.get("Offline", target) if by_scenario else target
    expect("targets", [(b.metric, b.threshold) for b in bench.accuracy.targets], pairs(default))
    for scenario, flat in by_scenario.items():
        ours = bench.accuracy.targets_for(Scenario(scenario))
        expect(f"{scenario} targets", [(b.metric, b.threshold) for b in ours], pairs(flat))
    limits = base.get("accuracy-upper-limit", {}).get(name)
    expect("upper limits", [(b.metric, b.threshold) for b in bench.accuracy.upper_limits], pairs(limits))
    for bound in bench.accuracy.targets:
        expect(
            f"TEST01 delta {bound.metric}",
            bench.accuracy.audit_delta(bound.metric),
            config.get_delta_perc(name, bound.metric),
        )
    dataset = bench.dataset
    expect("dataset size", dataset.size, base["dataset-size"][name])
    expect(
        "performance sample count", dataset.performance_sample_count, base["performance-sample-count"][name]
    )
    count = base["accuracy-sample-count"].get(name, base["dataset-size"][name])
    if isinstance(count, dict):
        expect("accuracy sample counts", dataset.accuracy_sample_count_by_scenario, count)
    else:
        expect("accuracy sample count", dataset.accuracy_sample_count, count)
    expect(
        "Offline min samples/query",
        dataset.offline_min_samples_per_query,
        constants.OFFLINE_MIN_SPQ_SINCE_V4.get(name),
    )
    expect(
        "latency constraint",
        {s.value: ns for s, ns in bench.latency_constraint_ns.items()},
        base["latency-constraint"].get(name, {}),
    )
    expect(
        "min queries", {s.value: n for s, n in bench.min_query_count.items()}, base["min-queries"].get(name)
    )
    tests = [t for t in TESTS if name in base.get(f"models_{t}", [])]
    expect("compliance tests", sorted(bench.compliance_tests), sorted(tests))
    overwrite = constants.RESULT_FIELD_BENCHMARK_OVERWRITE.get(version, {}).get(name, {})
    expect("result keys", {s.value: k for s, k in bench.result_keys.items()}, overwrite)
    special = {k: v for k, v in constants.SPECIAL_UNIT_DICT.get(name, {}).items() if k[0].isupper()}
    expect("units", {s.value: u for s, u in bench.units.items()}, special)
    expect("LLM", bench.llm, name in config.get_llm_models())
    latency = constants.LLM_LATENCY_LIMITS.get(name, {})
    expect(
        "token latency limits",
        {s.value: (lim.ttft_ms * 1e6, lim.tpot_ms * 1e6) for s, lim in bench.token_latency_limits.items()},
        {s: (float(lim["ttft"]), float(lim["tpot"])) for s, lim in latency.items()},
    )
    extra = constants.REQUIRED_ACC_BENCHMARK.get(name, {}).get(version, {})
    expect("extra accuracy files", {k: list(v) for k, v in bench.extra_accuracy_files.items()}, extra)
    expect("endpoints", bench.endpoints, version == "v6.1" and name in constants.ENDPOINTS_ALLOWED_MODELS)
    return diffs


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--official", type=Path, required=True, help="mlcommons/inference tools/submission")
    args = parser.parse_args()
    sys.path.insert(0, str(args.official))
    constants = importlib.import_module("submission_checker.constants")
    configuration = importlib.import_module("submission_checker.configuration.configuration")
    diffs = []
    for name in available_rounds():
        diffs += compare_round(load_round(name), constants, configuration)
    for line in diffs:
        print(line)
    checked = {name: len(load_round(name).benchmarks) for name in available_rounds()}
    print(f"{len(diffs)} difference(s); rounds and benchmarks compared: {json.dumps(checked)}")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
