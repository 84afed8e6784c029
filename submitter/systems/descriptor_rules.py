"""Rules for the tool's own part of a descriptor: round, benchmarks, scenarios and LoadGen overrides."""

from __future__ import annotations

from collections.abc import Iterator

from submitter.errors import SubmitterError
from submitter.rounds.models import BenchmarkRules, RoundRules, ScenarioSet, SystemTypeTable
from submitter.rounds.registry import available_rounds, load_round, rounds_with_benchmark
from submitter.rule_registry import Problem, RuleSet, Severity
from submitter.systems.backends import backend_info
from submitter.systems.cluster_layout import LayoutProblem, lay_out
from submitter.systems.descriptor import BenchmarkSetup, DescriptorFile

# user.conf keys a closed submission may set (shared/spec/harness.md §b) ...
SETTABLE_USER_CONF_KEYS = frozenset(
    {
        "target_qps",
        "min_duration",
        "max_duration",
        "min_query_count",
        "max_query_count",
        "performance_sample_count_override",
        "coalesce_queries",
        "max_async_queries",
    }
)
# ... and keys the checker requires at their mlperf.conf values, so a user.conf must not touch them.
FIXED_USER_CONF_KEYS = frozenset(
    {
        "use_token_latencies",
        "ttft_latency",
        "tpot_latency",
        "target_latency",
        "target_latency_percentile",
        "sample_concatenate_permutation",
        "qsl_rng_seed",
        "sample_index_rng_seed",
        "schedule_rng_seed",
        "accuracy_log_rng_seed",
        "accuracy_log_probability",
        "accuracy_log_sampling_target",
        "mode",
    }
)

DESCRIPTOR_RULES: RuleSet[DescriptorFile] = RuleSet("system descriptors")
rule = DESCRIPTOR_RULES.rule


def _round(entry: DescriptorFile) -> RoundRules | None:
    try:
        return load_round(entry.descriptor.round)
    except SubmitterError:
        return None


def _scenario_sets(entry: DescriptorFile) -> Iterator[tuple[str, SystemTypeTable, ScenarioSet | None]]:
    """Each benchmark of the round that the descriptor sets up, with its scenarios on this system type."""
    rules = _round(entry)
    table = SystemTypeTable.for_system_type(entry.descriptor.system.get("system_type"))
    if rules is None or table is None:
        return
    for name in entry.descriptor.benchmarks:
        if name in rules.benchmarks:
            yield name, table, rules.benchmarks[name].scenarios.get(table)


@rule("DESC-ID", Severity.ERROR, "the descriptor's id is its file name")
def id_matches_file(entry: DescriptorFile) -> Iterator[Problem]:
    if entry.descriptor.id != entry.file_stem:
        yield Problem(
            field="id",
            message=f"is {entry.descriptor.id!r} but the file is {entry.file_stem}.json",
            fix=f'rename the file to {entry.descriptor.id}.json or set "id": "{entry.file_stem}"',
        )


@rule("DESC-ROUND", Severity.ERROR, "the round is one submitter has rules for")
def known_round(entry: DescriptorFile) -> Iterator[Problem]:
    if entry.descriptor.round not in available_rounds():
        yield Problem(
            field="round",
            message=f"is {entry.descriptor.round!r}, which submitter has no rules for",
            fix=f"use one of {', '.join(available_rounds())}",
        )


@rule("DESC-BENCHMARK", Severity.ERROR, "every benchmark is one that submitter has rules for")
def known_benchmarks(entry: DescriptorFile) -> Iterator[Problem]:
    rules = _round(entry)
    if rules is None:
        return
    for name in entry.descriptor.benchmarks:
        if name not in rules.benchmarks and not rounds_with_benchmark(name):
            yield Problem(
                field=f"benchmarks.{name}",
                message=f"is not a benchmark of round {rules.name} or of any other round",
                fix=f"use one of {', '.join(rules.benchmarks)}",
            )


@rule("DESC-BENCHMARK-ROUND", Severity.WARNING, "every benchmark belongs to the descriptor's round")
def benchmarks_of_round(entry: DescriptorFile) -> Iterator[Problem]:
    rules = _round(entry)
    if rules is None:
        return
    for name, setup in entry.descriptor.benchmarks.items():
        having = rounds_with_benchmark(name)
        if setup.submit and name not in rules.benchmarks and having:
            yield Problem(
                field=f"benchmarks.{name}",
                message=f"is not a benchmark of round {rules.name} (it is one of {', '.join(having)}), "
                "so run-all and stage leave it out",
                fix=f"run and stage it with --round {having[-1]}, set the descriptor's round to one of "
                'those, or mark it "submit": false',
            )


@rule("DESC-SCENARIO", Severity.ERROR, "scenarios are allowed for the benchmark on this system type")
def allowed_scenarios(entry: DescriptorFile) -> Iterator[Problem]:
    for name, table, scenarios in _scenario_sets(entry):
        if scenarios is None:
            yield Problem(
                field=f"benchmarks.{name}",
                message=f"cannot be submitted by a {table} system",
                fix=f"run {name} on a system of another type, or remove it from this descriptor",
            )
            continue
        allowed = (*scenarios.required, *scenarios.optional)
        for scenario in entry.descriptor.benchmarks[name].scenarios:
            if scenario not in allowed:
                yield Problem(
                    field=f"benchmarks.{name}.scenarios.{scenario}",
                    message=f"is not a scenario of {name} for {table} systems",
                    fix=f"use {', '.join(allowed)}",
                )


@rule("DESC-SCENARIO-COVERAGE", Severity.WARNING, "the setup covers every scenario a submission needs")
def covers_required_scenarios(entry: DescriptorFile) -> Iterator[Problem]:
    for name, table, scenarios in _scenario_sets(entry):
        if scenarios is None:
            continue  # DESC-SCENARIO reports it
        present = set(entry.descriptor.benchmarks[name].scenarios)
        missing = [scenario for scenario in scenarios.required if scenario not in present]
        if scenarios.one_of_required and not present & set(scenarios.one_of_required):
            missing.append(f"one of {' or '.join(scenarios.one_of_required)}")
        if missing:
            yield Problem(
                field=f"benchmarks.{name}.scenarios",
                message=f"has no setup for {', '.join(missing)}, which a {table} submission needs",
                fix="add those scenarios, or expect run-all to produce an incomplete submission",
            )


@rule("DESC-USER-CONF", Severity.ERROR, "user.conf overrides only what a closed submission may change")
def valid_user_conf(entry: DescriptorFile) -> Iterator[Problem]:
    rules = _round(entry)
    for name, setup in entry.descriptor.benchmarks.items():
        bench = rules.benchmarks.get(name) if rules else None
        for scenario, scenario_setup in setup.scenarios.items():
            where = f"benchmarks.{name}.scenarios.{scenario}.user_conf"
            for key, value in scenario_setup.user_conf.items():
                if key in FIXED_USER_CONF_KEYS:
                    yield Problem(
                        field=f"{where}.{key}",
                        message="is fixed by mlperf.conf; the checker rejects runs that change it",
                        fix=f"remove {key}",
                    )
                elif key not in SETTABLE_USER_CONF_KEYS:
                    yield Problem(
                        field=f"{where}.{key}",
                        message="is not a LoadGen setting submitter knows",
                        fix=f"use one of {', '.join(sorted(SETTABLE_USER_CONF_KEYS))}",
                    )
                elif bench and rules:
                    yield from _bounds(f"{where}.{key}", key, value, bench, rules)


def _bounds(
    field: str, key: str, value: float, bench: BenchmarkRules, rules: RoundRules
) -> Iterator[Problem]:
    if key == "min_duration" and value < rules.limits.min_duration_ms:
        yield Problem(
            field=field,
            message=f"is {value} ms, below the {rules.limits.min_duration_ms} ms round {rules.name} requires",
            fix=f"remove it or set at least {rules.limits.min_duration_ms}",
        )
    if key == "performance_sample_count_override" and value < bench.dataset.performance_sample_count:
        yield Problem(
            field=field,
            message=f"is {value}, below the {bench.dataset.performance_sample_count} "
            f"samples {bench.name} requires",
            fix="remove it; mlperf.conf sets the right value",
        )
    if key == "target_qps" and value <= 0:
        yield Problem(field=field, message=f"is {value}", fix="set the measured queries per second (> 0)")


@rule("DESC-PARALLELISM", Severity.ERROR, "replicas x tensor x pipeline parallelism fit the accelerators")
def parallelism_fits(entry: DescriptorFile) -> Iterator[Problem]:
    system = entry.descriptor.system_file(entry.path)
    per_node = system.count("accelerators_per_node")
    nodes = system.count("number_of_nodes") or 1
    if per_node is None:
        return
    for name, setup in entry.descriptor.benchmarks.items():
        needed = setup.accelerators_needed
        on_accelerators = any(
            backend_info(setup.backend_for(scenario)).uses_accelerators for scenario in setup.scenarios
        )
        if on_accelerators and needed > per_node * nodes:
            yield Problem(
                field=f"benchmarks.{name}",
                message=f"needs {setup.replicas} replica(s) x {setup.tensor_parallel_size} (tensor) x "
                f"{setup.pipeline_parallel_size} (pipeline) = {needed} accelerators but the system has "
                f"{per_node * nodes}",
                fix="lower replicas or the parallel sizes, or correct accelerators_per_node",
            )


@rule(
    "DESC-GPU-GROUPS", Severity.ERROR, "gpu_groups give each replica its own tensor x pipeline parallel GPUs"
)
def gpu_groups_partition(entry: DescriptorFile) -> Iterator[Problem]:
    for name, setup in entry.descriptor.benchmarks.items():
        groups = setup.gpu_groups
        if groups is None:
            continue
        field = f"benchmarks.{name}.gpu_groups"
        if len(groups) != setup.replicas:
            yield Problem(
                field=field,
                message=f"has {len(groups)} group(s) for {setup.replicas} replica(s)",
                fix="give one group of GPUs per replica",
            )
        for number, group in enumerate(groups):
            if len(group) != setup.gpus_per_replica:
                yield Problem(
                    field=f"{field}[{number}]",
                    message=f"has {len(group)} GPU(s); a replica of {setup.tensor_parallel_size} (tensor) x "
                    f"{setup.pipeline_parallel_size} (pipeline) needs {setup.gpus_per_replica}",
                    fix="list exactly tensor x pipeline parallel GPUs in each group",
                )
        seen: dict[int, int] = {}
        for number, group in enumerate(groups):
            for gpu in group:
                if gpu < 0:
                    yield Problem(
                        field=f"{field}[{number}]", message=f"names GPU {gpu}", fix="use nvidia-smi's numbers"
                    )
                elif gpu in seen:
                    yield Problem(
                        field=f"{field}[{number}]",
                        message=f"GPU {gpu} is also in group {seen[gpu]}"
                        if seen[gpu] != number
                        else f"names GPU {gpu} twice",
                        fix="give every GPU to one replica only: groups must not overlap",
                    )
                else:
                    seen[gpu] = number


def _on_cluster(entry: DescriptorFile) -> Iterator[tuple[str, BenchmarkSetup]]:
    """The benchmarks of a multi-node descriptor, with their setups."""
    if entry.descriptor.cluster is not None:
        yield from entry.descriptor.benchmarks.items()


@rule("DESC-NODES", Severity.ERROR, "the cluster's nodes are the nodes the official description declares")
def nodes_match_description(entry: DescriptorFile) -> Iterator[Problem]:
    cluster = entry.descriptor.cluster
    if cluster is None:
        return
    system = entry.descriptor.system_file(entry.path)
    for key, declared, name in (
        ("number_of_nodes", cluster.nodes, "cluster.nodes"),
        ("accelerators_per_node", cluster.gpus_per_node, "cluster.gpus_per_node"),
    ):
        described = system.count(key)
        if described is not None and described != declared:
            yield Problem(
                field=f"system.{key}",
                message=f"is {described} but {name} is {declared}: the published description would not "
                "be the system that ran",
                fix=f"make system.{key} and {name} agree",
            )


@rule("DESC-TP-NODE", Severity.ERROR, "a tensor-parallel group never spans nodes")
def tensor_parallel_within_a_node(entry: DescriptorFile) -> Iterator[Problem]:
    cluster = entry.descriptor.cluster
    for name, setup in _on_cluster(entry):
        assert cluster is not None
        if setup.tensor_parallel_size > cluster.gpus_per_node:
            yield Problem(
                field=f"benchmarks.{name}.tensor_parallel_size",
                message=f"is {setup.tensor_parallel_size}, more than the {cluster.gpus_per_node} GPUs of a "
                "node: tensor parallelism across nodes is too slow to publish",
                fix=f"use tensor_parallel_size <= {cluster.gpus_per_node} and pipeline_parallel_size across "
                "nodes",
            )


@rule("DESC-CLUSTER-LAYOUT", Severity.ERROR, "every replica's pipeline stages find a node")
def stages_fit_the_nodes(entry: DescriptorFile) -> Iterator[Problem]:
    cluster = entry.descriptor.cluster
    for name, setup in _on_cluster(entry):
        assert cluster is not None
        if setup.tensor_parallel_size > cluster.gpus_per_node:
            continue  # DESC-TP-NODE says it
        try:
            lay_out(
                cluster.nodes,
                cluster.gpus_per_node,
                setup.tensor_parallel_size,
                setup.pipeline_parallel_size,
                setup.replicas,
            )
        except LayoutProblem as problem:
            yield Problem(field=f"benchmarks.{name}", message=str(problem), fix="see the message")


@rule("DESC-CLUSTER", Severity.ERROR, "a multi-node setup is one the harness can run on Ray")
def cluster_setup_is_runnable(entry: DescriptorFile) -> Iterator[Problem]:
    cluster = entry.descriptor.cluster
    if cluster is None:
        return
    if cluster.address is None and cluster.nodes > 1:
        yield Problem(
            field="cluster.address",
            message=f"is null (start a local head) but the cluster has {cluster.nodes} nodes",
            fix='give the head\'s "host:port", or "auto" to join the cluster `ray start` made on this host',
        )
    for name, setup in _on_cluster(entry):
        if setup.gpu_groups is not None:
            yield Problem(
                field=f"benchmarks.{name}.gpu_groups",
                message="numbers one host's GPUs; on a cluster Ray gives each stage its node's GPUs",
                fix="remove gpu_groups",
            )
        for scenario in setup.scenarios:
            backend = setup.backend_for(scenario)
            if not backend_info(backend).on_cluster:
                yield Problem(
                    field=f"benchmarks.{name}.scenarios.{scenario}",
                    message=f"runs backend {backend}, which reaches servers rather than placing engines",
                    fix="use a backend that runs engines (vllm, vllm-async, synthetic), or remove cluster",
                )
