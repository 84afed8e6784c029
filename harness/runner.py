"""`submitter run`: plan one run (every check before anything is written), then execute it in a worker.

    plan = plan_run(request)      # raises a SubmitterError for bad input; writes nothing
    record = execute(plan)        # runs/<system>/<benchmark>/<scenario>/<mode>/<UTC time>/

The run directory holds LoadGen's logs (trace off), the user.conf used and run.json, written last.
A run refused before LoadGen started leaves no directory behind.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Literal

import msgspec

from compliance.registry import AuditContext, audit_config_path, audit_test
from harness import environment, ledger, preflight
from harness.benchmarks.registry import (
    benchmark_plugin,
    load_plugin,
    mean_prompt_tokens,
    response_dtype,
    sample_media,
)
from harness.cpu_shares import TORCH_THREADS_VARIABLE, renderer_workers, with_engine_threads
from harness.early_abort import Limits
from harness.engine_log import engine_memory
from harness.engine_session import EngineSession, worker_environment
from harness.engines.base import EngineSpec, Generation
from harness.loadgen_release import LoadGenRelease, release_for
from harness.loadgen_settings import LoadGenTarget, Smoke, loadgen_target, user_conf_text
from harness.outcome import mode_problems, read_outcome
from harness.progress import progress_at_stop
from harness.ray_cluster import DRIVER_LOG_ENVIRONMENT
from harness.stand_in_models import dummy_description
from harness.topology import MemoryFit, Placement
from harness.worker import ABORTED, REFUSED_BEFORE_START, WorkerSpec
from submitter import hub
from submitter.errors import SubmitterError, UsageProblem
from submitter.evaluation.detokenize import TOKENIZER_FILE, find_tokenizer
from submitter.evaluation.verdicts import ScoredResult
from submitter.fileformats.run_mode import Mode
from submitter.fileformats.run_record import (
    ABORTED_NOT_SUBMITTABLE,
    SMOKE_NOT_SUBMITTABLE,
    ClusterNodeRecord,
    ClusterRecord,
    EngineRecord,
    LoadGenRecord,
    RunRecord,
    TopologyRecord,
    WorkerResult,
    read_record,
    scores_text,
    write_record,
)
from submitter.hub import HUB_NAME
from submitter.interrupts import signals_held
from submitter.rounds.models import BenchmarkRules, RoundRules, Scenario
from submitter.rounds.registry import load_round
from submitter.systems.backends import backend_info
from submitter.systems.descriptor import BenchmarkSetup, SystemDescriptor

USER_CONF = "user.conf"
# Scenarios whose queries arrive on LoadGen's Poisson schedule, whatever the engine does.
_ARRIVAL_SCENARIOS = (Scenario.SERVER, Scenario.INTERACTIVE)


class RunInterrupted(SubmitterError):
    """Ctrl-C or SIGTERM ended the run; its record says so."""

    exit_code = 130


class EngineDidNotStart(SubmitterError):
    """A run refused because its engine failed to build or start: every run needing that engine would be."""


@dataclass(frozen=True)
class FinishedRun:
    run_dir: Path
    record: RunRecord


@dataclass(frozen=True)
class RunRequest:
    system: SystemDescriptor
    benchmark: str
    scenario: Scenario
    mode: Mode
    dataset: Path | None = None
    model: str | None = None
    smoke: Smoke | None = None
    runs_root: Path = Path("runs")
    progress: bool = False
    command_line: tuple[str, ...] = ()
    target_qps: float | None = None  # replaces the descriptor's (tune-qps trials)
    early_abort: bool = True  # stop a Server or Interactive performance run once VALID is impossible
    # Plan for the GPUs the descriptor describes instead of this host's (run-all --dry-run only).
    described_host: bool = False


@dataclass(frozen=True)
class RunPlan:
    request: RunRequest
    rules: RoundRules
    benchmark: BenchmarkRules
    setup: BenchmarkSetup
    target: LoadGenTarget
    user_conf: dict[str, int | float]
    engine: EngineSpec
    dataset: Path
    dataset_size: int
    dataset_sha256: str
    dataset_limit: int | None
    overrides: dict[str, int]
    audit_config: Path | None
    loadgen: LoadGenRelease
    not_submittable: list[str] = field(default_factory=list)
    tokenizer: Path | None = None  # the folder with tokenizer.json that scores an accuracy run
    early_abort: Limits | None = None  # the limits that stop the run early; None: it runs to the end
    placement: Placement | None = None  # which GPUs each replica runs on; None: no model loaded here
    memory: MemoryFit | None = None  # preflight's estimate for one GPU; None: not estimated
    # The data set records its answers' lengths, which a dummy-weight run generates (else max_tokens each).
    answer_lengths: bool = False
    # A multi-node system's nodes as the preflight found them (or as declared, planning ahead).
    cluster_nodes: tuple[ClusterNodeRecord, ...] | None = None

    def topology_record(self) -> TopologyRecord | None:
        if self.placement is None:
            return None
        return TopologyRecord(
            tensor_parallel_size=self.placement.tensor_parallel,
            pipeline_parallel_size=self.placement.pipeline_parallel,
            replicas=self.placement.records(),
            memory_estimate=self.memory.record() if self.memory else None,
        )

    def cluster_record(self, result: WorkerResult | None) -> ClusterRecord | None:
        """Every node of the cluster, and where each replica's stages ran (as Ray placed them)."""
        if self.cluster_nodes is None or self.engine.cluster is None:
            return None
        return ClusterRecord(
            address=self.engine.cluster.address,
            nodes=list(self.cluster_nodes),
            stages=result.cluster_stages if result else [],
        )

    @property
    def engine_environment(self) -> dict[str, str]:
        """The variables the engine runs with: the descriptor's, one torch thread for its engine core where
        the harness sets the threads (harness.cpu_shares says why), exactly the GPUs preflight placed
        its replicas on, group after group, and on a cluster Ray's settings for the actors' logs."""
        environment = dict(self.setup.environment)
        if self.engine.split_threads:
            environment = with_engine_threads(environment)
        if self.placement is not None:
            environment["CUDA_VISIBLE_DEVICES"] = self.placement.visible_devices
        if self.engine.cluster is not None:
            environment = {**DRIVER_LOG_ENVIRONMENT, **environment}
        return environment

    def topology_text(self) -> str | None:
        """`2 replica(s) of TP=2 on GPUs 0,1 | 2,3 (4x NVIDIA H100 80GB HBM3); per GPU ...`: the placement
        and the memory estimate, as run and run-all print them before the engine starts."""
        if self.placement is None:
            return None
        memory = (
            self.memory.describe()
            if self.memory
            else "memory not estimated (GPU memory or architecture unknown)"
        )
        return f"{self.placement.describe()}; {memory}"

    @property
    def plugin(self) -> str:
        """The benchmark's plug-in (harness.benchmarks); plan_run refuses a benchmark without one."""
        assert self.benchmark.plugin is not None
        return self.benchmark.plugin

    def engine_record(self) -> EngineRecord:
        """The engine as run.json records it."""
        return EngineRecord(
            backend=self.engine.backend,
            model=self.engine.model,
            dummy_weights=self.engine.dummy_weights,
            tensor_parallel_size=self.engine.tensor_parallel_size,
            pipeline_parallel_size=self.engine.pipeline_parallel_size,
            replicas=self.engine.replicas,
            nodes=self.engine.cluster.nodes if self.engine.cluster else None,
            args=self.engine.args,
            environment=self.engine_environment,
            split_threads=self.engine.split_threads,
            renderer_workers=self.engine.renderer_workers,
            sampling=self.engine.generation.model_dump(),
        )

    @property
    def scorable(self) -> bool:
        """An accuracy run is scored on the spot, with the model's own tokenizer."""
        return self.tokenizer is not None


@dataclass(frozen=True)
class DatasetCheck:
    path: Path
    limit: int | None
    size: int
    sha256: str
    # Mean prompt (as the engine holds it) plus reference answer in tokens, where the data set records its
    # answers' lengths.
    mean_sequence_tokens: int | None = None
    answer_lengths: bool = False  # the data set records its answers' lengths (a dummy-weight run's lengths)


@cache
def _check_dataset(
    plugin: str,
    path: Path,
    stamp: tuple[int, int],
    limit: int | None,
    max_input_tokens: int,
    model: Path | None,
) -> DatasetCheck:
    """Validated once per file version: run-all plans many runs on the same 13368 prompts."""
    loaded = load_plugin(plugin)
    prompts = loaded.load_samples(path, limit=limit, max_input_tokens=max_input_tokens)
    mean = None
    if prompts.output_lengths:
        prompt_mean = mean_prompt_tokens(loaded, prompts, model)
        if prompt_mean is not None:
            mean = round(prompt_mean + sum(prompts.output_lengths) / len(prompts.output_lengths))
    answer_lengths = prompts.output_lengths is not None
    return DatasetCheck(path, limit, len(prompts), dataset_digest(path), mean, answer_lengths)


def _dataset_files(path: Path) -> list[Path]:
    """The file, or every file in the folder (qwen3-vl-235b-a22b's dataset is a folder of Parquet shards)."""
    return sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]


def dataset_digest(path: Path) -> str:
    """SHA-256 of a dataset file, or of a folder's files (each one's relative name and contents)."""
    if not path.is_dir():
        return hashlib.sha256(path.read_bytes()).hexdigest()
    digest = hashlib.sha256()
    for file in _dataset_files(path):
        digest.update(f"{file.relative_to(path).as_posix()}\n".encode())
        digest.update(hashlib.sha256(file.read_bytes()).digest())
    return digest.hexdigest()


def check_dataset(
    plugin: str, path: Path, limit: int | None, max_input_tokens: int, model: Path | None
) -> DatasetCheck:
    """The data set checked, with its mean sequence counted for `model`'s folder where its prompts are
    rendered by the engine."""
    try:
        statuses = [file.stat() for file in _dataset_files(path)]
    except OSError:
        stamp = (0, 0)  # load_prompts explains what is wrong with the path
    else:
        stamp = (max((s.st_mtime_ns for s in statuses), default=0), sum(s.st_size for s in statuses))
    return _check_dataset(plugin, path, stamp, limit, max_input_tokens, model)


def _dataset_for(
    request: RunRequest, setup: BenchmarkSetup, benchmark: BenchmarkRules, model: Path | None
) -> DatasetCheck:
    path = request.dataset or (Path(setup.dataset_path) if setup.dataset_path else None)
    if path is None:
        raise UsageProblem(
            f"no dataset: pass --dataset, or set dataset_path for {request.benchmark} in "
            f"{request.system.shown} (`submitter data synth` makes one with the real shape)"
        )
    assert benchmark.generation is not None and benchmark.plugin is not None
    expected_size, what = benchmark.dataset.size, benchmark.dataset.name
    own = benchmark.generation.dataset_for(request.mode)
    if own is not None:
        if not path.is_dir():
            raise UsageProblem(
                f"dataset {path} must be the folder of {request.benchmark}'s dataset files (its "
                f"{request.mode} runs read {own.file} in it), as the reference's download lays them out"
            )
        path, expected_size, what = path / own.file, own.samples, f"{request.mode} set"
    if not path.exists():  # one message for every benchmark, whatever its file format
        folder = path.parent if own is not None else path
        raise UsageProblem(
            f"dataset {path} does not exist; download {request.benchmark}'s dataset, or make one with the "
            f"real shape: submitter data synth --benchmark {request.benchmark} --out {folder}"
        )
    limit = request.smoke.samples if request.smoke else None
    dataset = check_dataset(benchmark.plugin, path, limit, benchmark.generation.max_input_tokens, model)
    if not request.smoke and dataset.size != expected_size:
        raise SubmitterError(
            f"dataset {path} has {dataset.size} records; {request.benchmark} runs on "
            f"{expected_size} ({what}); use --smoke for a trial on fewer"
        )
    return dataset


def plan_run(request: RunRequest) -> RunPlan:
    system = request.system
    rules = load_round(system.round)
    if request.benchmark not in system.benchmarks:
        raise UsageProblem(
            f"system {system.id} sets up no benchmark {request.benchmark!r}; it has: "
            f"{', '.join(system.benchmarks) or 'none'}"
        )
    if request.benchmark not in rules.benchmarks:
        raise UsageProblem(f"round {rules.name} has no benchmark {request.benchmark!r}")
    setup = system.benchmarks[request.benchmark]
    benchmark = rules.benchmark(request.benchmark)
    scenario_setup = setup.scenarios.get(request.scenario)
    if scenario_setup is None:
        raise UsageProblem(
            f"system {system.id} sets up no {request.scenario} scenario for {request.benchmark}; it has: "
            f"{', '.join(setup.scenarios)}"
        )
    if request.scenario not in benchmark.loadgen_models or benchmark.generation is None:
        raise UsageProblem(f"the harness does not run {request.benchmark} {request.scenario}")
    generation_rules = benchmark.generation
    media = sample_media(benchmark_plugin(benchmark))  # a benchmark no plug-in runs stops here

    where = f"{system.shown} {request.scenario}"
    backend = setup.backend_for(request.scenario)
    engine_facts = backend_info(backend)
    args = setup.engine_args_for(request.scenario)
    if engine_facts.needs_gpu:
        args = {"max_model_len": generation_rules.max_model_len, **args}
    found = preflight.Problems()
    found.check(preflight.check_user_conf, scenario_setup.user_conf, where)
    loadgen = found.check(release_for, rules)
    found.check(preflight.check_no_stray_audit_config, Path.cwd())
    cluster_nodes = None
    if system.cluster is not None:
        cluster_nodes = found.check(
            preflight.cluster_nodes, system.cluster, system.system, request.described_host
        )
        placement = None
        if cluster_nodes is not None:
            placement = found.check(
                preflight.place_engines_on_cluster,
                backend,
                setup,
                system.cluster,
                cluster_nodes,
                system.system,
                where,
            )
    else:
        placement = found.check(
            preflight.place_engines, backend, setup, system.system, where, request.described_host
        )
    # Planning for another host, or engines on a cluster's nodes (whose versions preflight compared):
    # the engine is installed there.
    if not request.described_host and system.cluster is None:
        found.check(preflight.check_engine_installed, backend)
    model_name = request.model or setup.model_path
    resolved = found.check(preflight.resolve_model, backend, model_name)
    audit_config = None
    if request.mode.audit_test:
        audit_config = found.check(_audit_config, request.mode.audit_test, benchmark.name)
    tokenizer = None
    if _scores_accuracy(request.mode) and resolved is not None:
        tokenizer = found.check(_scoring_tokenizer, model_name, resolved[1])
    found.check(preflight.check_engine_args, backend, args, where)
    found.check(preflight.check_backend_takes_media, backend, media, where)
    if engine_facts.checks_endpoints:
        found.check(preflight.check_endpoints, list(args.get("endpoints", [])))
    folder = hub.model_folder(resolved[0], "config.json") if resolved and engine_facts.needs_gpu else None
    dataset = found.check(_dataset_for, request, setup, benchmark, folder)
    memory = None
    if placement is not None and resolved is not None and engine_facts.needs_gpu:
        mean_tokens = dataset.mean_sequence_tokens if dataset is not None else None
        memory = found.check(
            preflight.check_memory, resolved[0], setup.quantization, args, placement, where, mean_tokens
        )
    found.raise_if_any()
    assert resolved is not None and dataset is not None and loadgen is not None
    model, dummy = resolved
    dataset_path, limit = dataset.path, dataset.limit

    # Random weights would stop at random EOS ids: they ignore EOS and run to each sample's recorded
    # answer length (Generation.tokens_for), or to the cap where the data set records none.
    generation = Generation.of(
        generation_rules, ignore_eos=dummy, max_tokens=generation_rules.max_output_tokens_for(request.mode)
    )
    target = loadgen_target(benchmark, request.scenario)
    # The harness sets the threads of vLLM loaded on this host unless the descriptor does (a cluster's actors
    # are started by Ray, with its settings).
    split_threads = (
        engine_facts.needs_gpu and system.cluster is None and TORCH_THREADS_VARIABLE not in setup.environment
    )
    shares = placement.cpu_shares if placement is not None else None
    feeding_cpus = len(shares[0]) if shares else len(os.sched_getaffinity(0))
    engine = EngineSpec(
        backend=backend,
        model=model,
        generation=generation,
        args=args,
        tensor_parallel_size=setup.tensor_parallel_size,
        pipeline_parallel_size=setup.pipeline_parallel_size,
        replicas=setup.replicas,
        streaming=target.streaming,
        dummy_weights=dummy,
        quantization=setup.quantization,
        media=media,
        cluster=system.cluster,
        cpu_shares=shares,
        split_threads=split_threads,
        renderer_workers=renderer_workers(media, split_threads, args, feeding_cpus),
    )
    user_conf = dict(scenario_setup.user_conf)
    if request.target_qps is not None:
        user_conf["target_qps"] = request.target_qps
    not_submittable = []
    if request.smoke:
        not_submittable.append(SMOKE_NOT_SUBMITTABLE)
    if dummy:
        not_submittable.append(dummy_description(Path(model)))
    if engine_facts.not_submittable is not None:
        not_submittable.append(engine_facts.not_submittable)
    return RunPlan(
        request=request,
        rules=rules,
        benchmark=benchmark,
        setup=setup,
        target=target,
        user_conf=user_conf,
        engine=engine,
        dataset=dataset_path.resolve(),
        dataset_size=dataset.size,
        dataset_sha256=dataset.sha256,
        dataset_limit=limit,
        overrides=request.smoke.overrides(request.scenario, dataset.size) if request.smoke else {},
        audit_config=audit_config,
        loadgen=loadgen,
        not_submittable=not_submittable,
        tokenizer=tokenizer,
        early_abort=early_abort_limits(request, benchmark) if request.early_abort else None,
        placement=placement,
        memory=memory,
        answer_lengths=dataset.answer_lengths,
        cluster_nodes=tuple(cluster_nodes) if cluster_nodes is not None else None,
    )


def early_abort_limits(request: RunRequest, benchmark: BenchmarkRules) -> Limits | None:
    """The round's limits a run is stopped by once it cannot meet them: Server and Interactive
    performance runs only (accuracy runs and audits must log every answer), TTFT and TPOT for LLMs,
    the whole answer's latency otherwise; None where the round sets none."""
    if request.mode is not Mode.PERFORMANCE or request.scenario not in _ARRIVAL_SCENARIOS:
        return None
    if benchmark.llm:
        tokens = benchmark.token_latency_limits.get(request.scenario)
        return None if tokens is None else Limits(ttft_ms=tokens.ttft_ms, tpot_ms=tokens.tpot_ms)
    latency_ns = benchmark.latency_constraint_ns.get(request.scenario)
    return None if latency_ns is None else Limits(latency_ms=latency_ns / 1e6)


def _audit_config(test: str, benchmark: str) -> Path:
    found = audit_config_path(test, benchmark)
    if found is None:
        raise UsageProblem(
            f"compliance/{test} has no audit.config for {benchmark}; the official one is needed"
        )
    return found


def _scores_accuracy(mode: Mode) -> bool:
    """Accuracy runs and audits whose verification scores accuracy (TEST07) need the model's tokenizer."""
    return mode is Mode.ACCURACY or (
        mode.audit_test is not None and audit_test(mode.audit_test).SCORES_ACCURACY
    )


def _scoring_tokenizer(model: str, dummy_weights: bool) -> Path | None:
    """The tokenizer that scores an accuracy run on the spot; None leaves it to `submitter accuracy`.

    A model named by a path that does not exist is a mistake worth stopping for: nothing could ever
    score the run against it."""
    found = find_tokenizer(model)
    if found is not None or dummy_weights:
        return found
    path = Path(model).expanduser()
    # "demo-data/nope-model" looks like a hub id, but its folder "demo-data" is here: a mistyped path.
    named_as_path = (
        path.is_absolute()
        or model.startswith((".", "~"))
        or not HUB_NAME.match(model)
        or (path.parent.is_dir() and not hub.snapshots(model))
    )
    if named_as_path and os.sep in model and not path.exists():
        raise UsageProblem(
            f"--model {model} does not exist; an accuracy run is scored with the model's {TOKENIZER_FILE}: "
            "pass the checkpoint's folder (the demo's: `submitter data synth --out "
            "demo-data/cnn_synthetic.json --demo-model demo-data/model`)"
        )
    return None


def runs_of(plan: RunPlan, mode: str) -> Path:
    """Where runs of `mode` for the plan's system, benchmark and scenario are kept."""
    request = plan.request
    return request.runs_root / request.system.id / request.benchmark / request.scenario / mode


def runs_newest_first(plan: RunPlan, mode: str) -> list[Path]:
    """The run directories of `mode` for the plan's system, benchmark and scenario, newest first."""
    folder = runs_of(plan, mode)
    if not folder.is_dir():
        return []
    return sorted(
        (path for path in folder.iterdir() if path.is_dir()), key=lambda path: path.name, reverse=True
    )


def run_directory(plan: RunPlan, now: datetime) -> Path:
    parent = runs_of(plan, plan.request.mode)
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    candidate, number = parent / stamp, 1
    while candidate.exists():
        number += 1
        candidate = parent / f"{stamp}-{number}"
    return candidate


def evaluate_run(plan: RunPlan, run_dir: Path) -> tuple[dict | None, dict | None, list[str]]:
    """The verification of an audit run; accuracy of an accuracy run when the model has a tokenizer."""
    mode = plan.request.mode
    if mode.audit_test:
        assert plan.audit_config is not None
        context = AuditContext(
            plan.target.streaming,
            plan.engine.generation.eos_token_id,
            plan.audit_config,
            _accuracy_report(plan) if plan.tokenizer else None,
            reference_run=lambda mode: newest_completed_run(plan, mode),
            response_dtype=response_dtype(load_plugin(plan.plugin)),
        )
        verdict = audit_test(mode.audit_test).verify_run(run_dir, context)
        summary = {"passed": verdict.passed, "samples": verdict.samples, "failures": verdict.failures()}
        failed = [f"{mode.audit_test} verification failed: {line}" for line in verdict.failures()]
        return summary, None, failed
    if mode is Mode.ACCURACY:
        if plan.tokenizer is None:
            note = (
                f"not evaluated: {plan.engine.model} has no {TOKENIZER_FILE}; "
                f"run `submitter accuracy {run_dir} --model DIR`"
            )
            return None, {"evaluated": False, "note": note}, []
        try:
            report = load_plugin(plan.plugin).write_accuracy(
                run_dir,
                plan.dataset,
                plan.tokenizer,
                plan.benchmark,
                plan.rules.accuracy_patterns,
                trial=plan.request.smoke is not None,
            )
        except SubmitterError as problem:  # e.g. a broken file beside the dataset: the run is kept, unscored
            note = f"not evaluated: {problem}; then run `submitter accuracy {run_dir}`"
            return None, {"evaluated": False, "note": note}, [f"accuracy {note}"]
        failed = [
            f"accuracy {v.metric} {v.value:g} is not {v.bound}" for v in report.verdicts if not v.passed
        ]
        return None, {"evaluated": True, **report.model_dump()}, failed
    return None, None, []


def newest_completed_run(plan: RunPlan, mode: str) -> Path | None:
    """The newest run of `mode` that LoadGen completed, for the plan's system, benchmark and scenario
    (TEST01's references: the answers an accuracy run logged count whatever they scored)."""
    for run_dir in runs_newest_first(plan, mode):
        try:
            record = read_record(run_dir)
        except SubmitterError:  # a record this version cannot read is no reference
            continue
        if record is not None and record.status == "completed":
            return run_dir
    return None


def _accuracy_report(plan: RunPlan) -> Callable[[Path], ScoredResult]:
    """The benchmark's evaluation of an audit's accuracy log (TEST07), with the run's dataset: accuracy.txt
    and accuracy.json are written beside the log, and the result is what the audit reads."""
    assert plan.tokenizer is not None
    tokenizer = plan.tokenizer

    def report(accuracy_log: Path) -> ScoredResult:
        scored = load_plugin(plan.plugin).write_accuracy(
            accuracy_log.parent, plan.dataset, tokenizer, plan.benchmark, plan.rules.accuracy_patterns
        )
        return scored.result

    return report


def _remove_run_directory(run_dir: Path, runs_root: Path) -> None:
    """Remove a run that never started, and the folders above it that only it filled."""
    shutil.rmtree(run_dir)
    for parent in run_dir.parents:
        if parent == runs_root.parent or any(parent.iterdir()):
            break
        parent.rmdir()


def _result_text(record: RunRecord) -> str | None:
    """The ledger's one-line result: the scores of an accuracy run, the LoadGen metric otherwise."""
    if record.scores:
        return scores_text(record.scores)
    outcome = record.loadgen.outcome
    if outcome is None or outcome.metric_value is None:
        return None
    return f"{outcome.metric_value:.2f} {outcome.metric_unit}"


def _with_engine_memory(topology: TopologyRecord | None, log: Path | None) -> TopologyRecord | None:
    """The run's topology with what its engine's log says it found in memory, beside the estimate."""
    if topology is None or log is None:
        return topology
    return topology.model_copy(update={"engine_memory": engine_memory(log)})


def _engine_text(result: WorkerResult | None) -> str | None:
    """The ledger's word on the run's engine: started by this run, or kept from an earlier one."""
    if result is None or result.engine_started_by is None:
        return None
    if result.engine_start_s is not None:
        return f"started ({result.engine_start_s:,.1f} s)"
    return f"kept from {result.engine_started_by}, test {result.engine_test_number}"


def execute(plan: RunPlan, session: EngineSession | None = None) -> FinishedRun:
    """Run the plan in `session`'s worker (which may keep its engine from an earlier run), or a new one."""
    request = plan.request
    started = datetime.now(UTC)
    run_dir = run_directory(plan, started)
    run_dir.mkdir(parents=True)
    step = f"{request.benchmark}/{request.scenario}/{request.mode}"
    ledger_dir = str(run_dir.relative_to(request.runs_root))
    ledger.append_event(request.runs_root, "run-started", request.system.id, step=step, run_dir=ledger_dir)
    (run_dir / USER_CONF).write_text(user_conf_text(plan.target, plan.user_conf), encoding="utf-8")
    label = f"{request.scenario} {request.mode}"
    spec = WorkerSpec(
        run_dir=run_dir.resolve(),
        run_name=ledger_dir,
        user_conf=(run_dir / USER_CONF).resolve(),
        user_conf_values=plan.user_conf,
        loadgen_model=plan.target.model,
        loadgen_scenario=plan.target.scenario,
        mode=request.mode,
        audit_config=plan.audit_config,
        overrides=plan.overrides,
        seeds=msgspec.structs.asdict(plan.rules.loadgen.seeds),
        round=plan.rules.name,
        dataset=plan.dataset,
        dataset_limit=plan.dataset_limit,
        plugin=plan.plugin,
        max_input_tokens=plan.benchmark.generation.max_input_tokens if plan.benchmark.generation else 0,
        engine=plan.engine,
        progress_label=label if request.progress else None,
        early_abort=plan.early_abort,
    )
    worker_env = worker_environment(plan.engine_environment, plan.loadgen.path)
    began = time.monotonic()
    if session is None:
        with EngineSession() as own_session:
            test = own_session.run(spec, worker_env)
    else:
        test = session.run(spec, worker_env)
    status = "interrupted" if test.interrupted else "completed"
    exit_status, result = test.status, test.result
    if status == "completed" and exit_status == REFUSED_BEFORE_START:
        _remove_run_directory(run_dir, request.runs_root)
        reason = result.error if result and result.error else "the run stopped before LoadGen started"
        ledger.append_event(
            request.runs_root,
            "run-finished",
            request.system.id,
            step=step,
            status="refused",
            valid=False,
            detail=reason,
        )
        raise (EngineDidNotStart if result and result.engine_did_not_start else SubmitterError)(reason)
    if status == "completed" and exit_status == ABORTED and result and result.aborted:
        status = "aborted"
    elif status == "completed" and exit_status != 0:
        status = "failed"

    scenario = request.scenario
    outcome = read_outcome(
        run_dir,
        plan.rules.result_key(plan.benchmark, scenario),
        plan.rules.result_units(plan.benchmark, scenario),
        plan.audit_config,
    )
    problems = [] if status == "completed" else [f"the run {status} (worker exit status {exit_status})"]
    # Without the worker's report, its last progress.json says how far a run that did not finish got.
    so_far = ""
    if problems and result is None and (stopped_at := progress_at_stop(run_dir)):
        so_far = f" with {stopped_at}"
        problems[0] += so_far
    if result and result.lost_node:  # the reason names the node; the exit status says nothing more
        problems = [result.lost_node]
    not_submittable = plan.not_submittable
    if status == "aborted":
        # The reason says it all; a detail log cut off by the kill has no verdict to report.
        assert result is not None and result.aborted is not None
        problems = [result.aborted]
        not_submittable = [*not_submittable, ABORTED_NOT_SUBMITTABLE]
    if result and result.error:
        problems.append(result.error)
    if result and result.failed_samples:
        failed, first = result.failed_samples, result.first_failure
        problems.append(f"{failed} sample(s) failed in the engine; the first: {first}")
    if status != "aborted":
        problems += mode_problems(request.mode, outcome)
    audit, accuracy = None, None
    interrupted_during: Literal["test", "evaluation"] | None = "test" if status == "interrupted" else None
    if status == "completed" and outcome is not None and not problems:
        try:  # from the ledger's line on: a signal landing while it is synced must keep the run too
            ledger.append_event(
                request.runs_root, "run-evaluating", request.system.id, step=step, run_dir=ledger_dir
            )
            audit, accuracy, evaluation_problems = evaluate_run(plan, run_dir)
            problems += evaluation_problems
        except KeyboardInterrupt:  # LoadGen's logs are complete: keep them, and say how to finish
            status, interrupted_during = "interrupted", "evaluation"
            problems.append(_interrupted_evaluation(plan, run_dir))
    # The run is over: a signal now waits until run.json and the ledger say how it ended (nothing lost).
    with signals_held():
        record = RunRecord(
            status=status,  # type: ignore[arg-type]
            interrupted_during=interrupted_during,
            valid=not problems,
            problems=problems,
            submittable=not not_submittable,
            not_submittable=not_submittable,
            system=request.system.id,
            system_desc_id=request.system.system_desc_id,
            round=plan.rules.name,
            benchmark=request.benchmark,
            scenario=request.scenario,
            mode=request.mode,
            command_line=list(request.command_line),
            started_utc=started.isoformat(timespec="seconds"),
            finished_utc=datetime.now(UTC).isoformat(timespec="seconds"),
            wall_s=round(time.monotonic() - began, 3),
            exit_status=exit_status,
            error=result.error if result else None,
            versions={
                **environment.versions(),
                "mlcommons-loadgen": plan.loadgen.version,
                **(result.engine_versions if result else {}),
            },
            git=environment.git_state(),
            gpus=plan.placement.gpus if plan.placement else environment.gpus(),
            engine=plan.engine_record(),
            topology=_with_engine_memory(plan.topology_record(), test.engine_log),
            cluster=plan.cluster_record(result),
            dataset={"path": str(plan.dataset), "samples": plan.dataset_size, "sha256": plan.dataset_sha256},
            loadgen=LoadGenRecord(
                model=plan.target.model,
                scenario=plan.target.scenario,
                user_conf=plan.user_conf,
                overrides=plan.overrides,
                audit_config=str(plan.audit_config) if plan.audit_config else None,
                outcome=outcome,
            ),
            harness=result,
            audit=audit,
            accuracy=accuracy,
        )
        _write_finished(request, step, run_dir, record, engine=_engine_text(result))
    if status == "interrupted":
        if interrupted_during == "evaluation":
            raise RunInterrupted(f"{problems[-1]}; run.json and LoadGen's complete logs are in {run_dir}")
        raise RunInterrupted(f"interrupted{so_far}; what LoadGen wrote so far and run.json are in {run_dir}")
    return FinishedRun(run_dir, record)


def _evaluation_name(mode: Mode) -> str:
    return "scoring the accuracy log" if mode is Mode.ACCURACY else f"verifying {mode}"


def _interrupted_evaluation(plan: RunPlan, run_dir: Path) -> str:
    scored_by_hand = (
        f", or `submitter accuracy {run_dir}` scores it" if plan.request.mode is Mode.ACCURACY else ""
    )
    return (
        f"interrupted while {_evaluation_name(plan.request.mode)}; LoadGen's logs are complete: "
        f"`submitter run-all` finishes the evaluation without running the test again{scored_by_hand}"
    )


def finish_evaluation(plan: RunPlan, run_dir: Path, record: RunRecord) -> FinishedRun:
    """Evaluate a run that was interrupted after its LoadGen test (its logs are complete) and complete its
    record; an interruption now leaves it as it was."""
    request = plan.request
    step = f"{request.benchmark}/{request.scenario}/{request.mode}"
    ledger_dir = str(run_dir.relative_to(request.runs_root))
    try:
        ledger.append_event(
            request.runs_root, "run-evaluating", request.system.id, step=step, run_dir=ledger_dir
        )
        audit, accuracy, problems = evaluate_run(plan, run_dir)
    except KeyboardInterrupt:
        raise RunInterrupted(f"{_interrupted_evaluation(plan, run_dir)}; {run_dir} is as it was") from None
    with signals_held():  # as after a run: run.json and the ledger agree on how it ended
        finished = record.model_copy(
            update={
                "status": "completed",
                "interrupted_during": None,
                "valid": not problems,
                "problems": problems,
                "audit": audit,
                "accuracy": accuracy,
                "finished_utc": datetime.now(UTC).isoformat(timespec="seconds"),
            }
        )
        _write_finished(request, step, run_dir, finished, fallback="evaluated after an interruption")
    return FinishedRun(run_dir, finished)


def _write_finished(
    request: RunRequest,
    step: str,
    run_dir: Path,
    record: RunRecord,
    engine: str | None = None,
    fallback: str | None = None,
) -> None:
    """run.json, then the ledger's run-finished line; callers hold signals so that both are written."""
    write_record(run_dir, record)
    ledger.append_event(
        request.runs_root,
        "run-finished",
        request.system.id,
        step=step,
        run_dir=str(run_dir.relative_to(request.runs_root)),
        status=record.status,
        valid=record.valid,
        detail=(record.problems[0] if record.problems else _result_text(record)) or fallback,
        engine=engine,
    )
