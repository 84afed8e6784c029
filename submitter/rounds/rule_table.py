"""Round rules as rows of (item, value, source), for `submitter rounds show`."""

from __future__ import annotations

from collections.abc import Iterable

from submitter.rounds.models import AccuracyBound, BenchmarkRules, RoundRules

Row = tuple[str, str, str]


def _number(value: float) -> str:
    return f"{value:.6f}".rstrip("0").rstrip(".")


def _bound(bound: AccuracyBound, relation: str) -> str:
    derivation = f"{_number(bound.reference)} x {bound.factor}"
    return f"{bound.metric} {relation} {_number(bound.threshold)} (= {derivation})"


def _join(items: Iterable[object]) -> str:
    return ", ".join(str(item) for item in items) or "-"


def round_rows(rules: RoundRules) -> list[Row]:
    seeds = rules.loadgen.seeds
    layout = rules.layout
    return [
        ("official checker flag", f"--version {rules.checker_version_flag}", rules.source),
        (
            "LoadGen version",
            f"{rules.loadgen.version} (seeds in {rules.loadgen.seed_releases})",
            rules.loadgen.source,
        ),
        ("qsl_rng_seed", str(seeds.qsl_rng_seed), rules.loadgen.source),
        ("sample_index_rng_seed", str(seeds.sample_index_rng_seed), rules.loadgen.source),
        ("schedule_rng_seed", str(seeds.schedule_rng_seed), rules.loadgen.source),
        ("minimum duration", f"{rules.limits.min_duration_ms} ms", rules.limits.source),
        ("largest accuracy log", f"{rules.limits.max_accuracy_log_bytes} bytes", rules.limits.source),
        ("tree layout", f"{layout.name}: submitter dirs {_join(layout.submitter_dirs)}", layout.source),
        ("system description", layout.system_json, layout.source),
        ("performance logs", layout.performance_dir, layout.source),
        ("accuracy logs", layout.accuracy_dir, layout.source),
        ("measurements", f"{layout.measurements_dir}/{layout.measurements_file}", layout.source),
        ("compliance", layout.compliance_dir, layout.source),
        ("benchmarks", _join(rules.benchmarks), rules.source),
    ]


def benchmark_rows(rules: RoundRules, bench: BenchmarkRules) -> list[Row]:
    dataset = bench.dataset
    rows: list[Row] = [
        ("tree name", bench.name, bench.source),
        ("kind", bench.family + (" (LLM: token latencies)" if bench.llm else ""), bench.source),
        ("LoadGen models", _join(f"{s}: {m}" for s, m in bench.loadgen_models.items()), bench.source),
        ("dataset", dataset.name, dataset.source),
        ("dataset size", str(dataset.size), dataset.source),
        ("performance sample count", str(dataset.performance_sample_count), dataset.source),
        ("accuracy sample count", str(dataset.accuracy_sample_count), dataset.source),
        *(
            (f"{scenario} accuracy sample count", str(count), dataset.source)
            for scenario, count in dataset.accuracy_sample_count_by_scenario.items()
        ),
        ("Offline min samples per query", str(dataset.offline_min_samples_per_query), dataset.source),
    ]
    rows += [("accuracy target", _bound(b, ">="), bench.accuracy.source) for b in bench.accuracy.targets]
    rows += [
        (f"{scenario} accuracy target", _bound(b, ">="), bench.accuracy.source)
        for scenario, bounds in bench.accuracy.targets_by_scenario.items()
        for b in bounds
    ]
    rows += [
        ("accuracy upper limit", _bound(b, "<="), bench.accuracy.source) for b in bench.accuracy.upper_limits
    ]
    for table, scenarios in bench.scenarios.items():
        text = f"required {_join(scenarios.required)}; optional {_join(scenarios.optional)}"
        if scenarios.one_of_required:
            text += f"; at least one of {_join(scenarios.one_of_required)}"
        rows.append((f"scenarios ({table})", text, bench.source))
    rows.append(
        ("min query count", _join(f"{s}: {n}" for s, n in bench.min_query_count.items()), bench.source)
    )
    for scenario, bound_ns in bench.latency_constraint_ns.items():
        rows.append((f"{scenario} latency constraint", f"{bound_ns / 1e6:g} ms", bench.source))
    for scenario, limits in bench.token_latency_limits.items():
        rows.append(
            (
                f"{scenario} p99 TTFT / TPOT",
                f"< {limits.ttft_ms:g} ms / < {limits.tpot_ms:g} ms",
                bench.source,
            )
        )
    rows.append(("compliance tests", _join(bench.compliance_tests), bench.source))
    for scenario, version in bench.equal_issue_since.items():
        rows.append((f"{scenario} equal issue", f"on, from LoadGen {version}", bench.source))
    for folder, stems in bench.extra_accuracy_files.items():
        rows.append((f"accuracy/{folder}/", _join(stems), bench.source))
    if bench.endpoints:
        rows.append(("endpoints-format results", "accepted", bench.source))
    scenarios = dict.fromkeys(
        s for table in bench.scenarios.values() for s in (*table.required, *table.optional)
    )
    for scenario in scenarios or bench.min_query_count:
        key, units = rules.result_key(bench, scenario), rules.units(bench, scenario)
        rows.append((f"{scenario} result", f"{key} [{units}]", rules.results.source))
    if bench.generation:
        gen = bench.generation
        rows.append(
            (
                "generation",
                f"{gen.model}; input <= {gen.max_input_tokens} tokens, output "
                f"{gen.min_output_tokens}..{gen.max_output_tokens}, max_model_len {gen.max_model_len}, "
                f"BOS {gen.bos_token_id}, EOS {gen.eos_token_id}",
                gen.source,
            )
        )
    return rows
