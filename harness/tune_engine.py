"""`submitter tune-engine`: the engine arguments that give a scenario the most, found with short runs.

A coordinate search from the descriptor's own setting: each dimension of the search space in turn
(`harness.search_space`), each of its values with the best setting so far; a value is kept only when it
beats that setting by more than `min_gain` (run-to-run noise on a GPU is 1-2.5 %, bench/RESULTS.md).
Every configuration is one engine start (its own worker), measured through the harness itself:
- Offline: one pass over `samples` prompts; the score is LoadGen's result (tokens/s for an LLM);
- Server and Interactive: a short tune-qps search on that engine, from the best rate so far; the score
  is the highest rate LoadGen judged VALID, so a setting wins by carrying more load within the limits.
Each configuration is a `tune-trial` event in the ledger beside its runs. The best setting goes into a
copy of the descriptor (the changed arguments on the scenario, its rate as target_qps) with
evidence.json beside it: every trial, the runs behind it, the versions and GPUs they ran on.

    result = tune_engine(EngineSearch(system, Scenario.OFFLINE, source=path, out=folder), on_trial=print)
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness import ledger
from harness.loadgen_settings import Smoke
from harness.runner import RunInterrupted, RunRequest, execute, plan_run
from harness.search_space import SETUP_FIELDS, SearchSpace
from harness.tune import TRIAL, Trial, TuneRequest, tune_qps
from submitter import __version__
from submitter.errors import SubmitterError, UsageProblem
from submitter.fileformats.run_mode import Mode
from submitter.fileformats.run_record import read_record
from submitter.fileio import read_json, write_text_atomic
from submitter.rounds.models import Scenario
from submitter.systems.descriptor import BenchmarkSetup, SystemDescriptor
from submitter.systems.validate import load_descriptor

EVIDENCE = "evidence.json"
Config = dict[str, Any]  # searched name -> value (None: unset, the engine's default)


@dataclass(frozen=True)
class EngineSearch:
    system: SystemDescriptor
    scenario: Scenario
    source: Path  # the descriptor file the copy is made from
    out: Path  # where the copy and evidence.json go
    space: SearchSpace
    benchmark: str = "llama3.1-8b"
    min_gain: float = 0.01
    max_configs: int = 16
    samples: int = 2048  # Offline: prompts in one pass
    trial: Smoke = TRIAL  # Server and Interactive: each rate trial
    qps_trials: int = 4  # Server and Interactive: rate trials per configuration
    qps_step: float = 1.05
    qps_precision: float = 0.02
    dataset: Path | None = None
    model: str | None = None
    runs_root: Path = Path("runs")
    progress: bool = False
    command_line: tuple[str, ...] = ()


@dataclass
class ConfigTrial:
    number: int
    changes: Config  # against the descriptor's setting
    engine_args: Config  # what the engine ran with
    score: float | None  # Offline: LoadGen's result; Server/Interactive: the best VALID target_qps
    unit: str  # the score's
    tokens_per_second: float | None
    samples_per_second: float | None  # Offline: for target_qps
    run_dirs: list[str] = field(default_factory=list)
    engine_start_s: float | None = None
    problem: str | None = None  # why it has no score
    best_so_far: bool = False


@dataclass
class EngineSearchResult:
    baseline: ConfigTrial | None = None
    trials: list[ConfigTrial] = field(default_factory=list)
    best: ConfigTrial | None = None
    descriptor_copy: Path | None = None
    evidence: Path | None = None
    interrupted: bool = False


def benchmark_setup(system: SystemDescriptor, benchmark: str, scenario: Scenario) -> BenchmarkSetup:
    """The benchmark's setup, refused when it does not set up the scenario."""
    setup = system.benchmarks.get(benchmark)
    if setup is None or scenario not in setup.scenarios:
        raise UsageProblem(f"system {system.id} sets up no {scenario} scenario for {benchmark}")
    return setup


def _setup(search: EngineSearch) -> BenchmarkSetup:
    return benchmark_setup(search.system, search.benchmark, search.scenario)


def baseline_config(search: EngineSearch) -> Config:
    """The descriptor's setting of every searched name."""
    setup = _setup(search)
    args = setup.engine_args_for(search.scenario)
    return {
        dimension.arg: getattr(setup, dimension.arg)
        if dimension.arg in SETUP_FIELDS
        else args.get(dimension.arg)
        for dimension in search.space.dimensions
    }


def system_with(search: EngineSearch, config: Config) -> SystemDescriptor:
    """The descriptor with `config` on the scenario (engine arguments) or the benchmark (parallelism)."""
    setup = _setup(search)
    scenario_setup = setup.scenarios[search.scenario]
    engine_args = {**scenario_setup.engine_args}
    setup_fields: dict[str, Any] = {}
    for name, value in config.items():
        if name in SETUP_FIELDS:
            setup_fields[name] = value
        else:
            engine_args[name] = value  # None unsets it (engine_args_for drops a scenario's null)
    scenarios = {
        **setup.scenarios,
        search.scenario: scenario_setup.model_copy(update={"engine_args": engine_args}),
    }
    new_setup = setup.model_copy(update={"scenarios": scenarios, **setup_fields})
    return search.system.model_copy(
        update={"benchmarks": {**search.system.benchmarks, search.benchmark: new_setup}}
    )


def _offline_trial(search: EngineSearch, system: SystemDescriptor, trial: ConfigTrial) -> None:
    finished = execute(
        plan_run(
            RunRequest(
                system=system,
                benchmark=search.benchmark,
                scenario=search.scenario,
                mode=Mode.PERFORMANCE,
                dataset=search.dataset,
                model=search.model,
                smoke=Smoke(samples=search.samples),
                runs_root=search.runs_root,
                progress=search.progress,
                command_line=search.command_line,
            )
        )
    )
    record = finished.record
    trial.run_dirs.append(str(finished.run_dir))
    trial.engine_start_s = record.harness.engine_start_s if record.harness else None
    outcome = record.loadgen.outcome
    if not record.valid or outcome is None or outcome.metric_value is None:
        trial.problem = "; ".join(record.problems) or "LoadGen reported no result"
        return
    trial.score, trial.unit = outcome.metric_value, outcome.metric_unit or trial.unit
    trial.tokens_per_second = outcome.metric_value if outcome.metric_unit == "Tokens/s" else None
    trial.samples_per_second = outcome.figures.get("samples_per_second")


class _CannotWin(Exception):
    """A configuration failed a rate no higher than it must hold to win: its other rates are not needed."""


def _rate_trials(
    search: EngineSearch,
    system: SystemDescriptor,
    trial: ConfigTrial,
    to_win: float | None,
) -> None:
    """A short tune-qps search on one engine. The descriptor's own setting (`to_win` None) gets twice the
    trials, from the descriptor's target_qps (tune-qps's default start); another starts at the rate it must
    hold to win."""
    rates: list[Trial] = []

    def seen(rate: Trial) -> None:
        rates.append(rate)
        trial.run_dirs.append(str(rate.run_dir))
        if to_win is not None and not rate.valid and rate.qps <= to_win:
            raise _CannotWin

    request = TuneRequest(
        system=system,
        scenario=search.scenario,
        benchmark=search.benchmark,
        start_qps=to_win,
        trial=search.trial,
        skip_confirm=True,
        precision=search.qps_precision,
        step=search.qps_step,
        max_trials=search.qps_trials if to_win is not None else 2 * search.qps_trials,
        dataset=search.dataset,
        model=search.model,
        runs_root=search.runs_root,
        progress=search.progress,
        command_line=search.command_line,
    )
    with contextlib.suppress(_CannotWin):
        tune_qps(request, seen)
    if rates:
        trial.engine_start_s = rates[0].engine_start_s
    valid = [rate for rate in rates if rate.valid]
    if not valid:
        trial.problem = "no rate was VALID: " + "; ".join(
            f"{rate.qps:g} {rate.why_invalid}" for rate in rates
        )
        return
    best = max(valid, key=lambda rate: rate.qps)
    trial.score = best.qps
    trial.tokens_per_second = best.tokens_per_second


def _measure(
    search: EngineSearch, number: int, config: Config, baseline: Config, best: ConfigTrial | None
) -> ConfigTrial:
    system = system_with(search, config)
    setup = system.benchmarks[search.benchmark]
    trial = ConfigTrial(
        number=number,
        changes={name: value for name, value in config.items() if value != baseline.get(name)},
        engine_args=setup.engine_args_for(search.scenario),
        score=None,
        unit="result" if search.scenario is Scenario.OFFLINE else "target_qps",
        tokens_per_second=None,
        samples_per_second=None,
    )
    try:
        if search.scenario is Scenario.OFFLINE:
            _offline_trial(search, system, trial)
        else:
            to_win = round(best.score * (1 + search.min_gain), 3) if best and best.score else None
            _rate_trials(search, system, trial, to_win)
    except RunInterrupted:
        raise
    except SubmitterError as exc:  # an argument the engine does not take, or an engine that failed to start
        trial.problem = str(exc)
    return trial


def _normal(space: SearchSpace, config: Config) -> Config:
    """A configuration as the engine sees it, to try each only once."""
    return {dimension.arg: dimension.normal(config.get(dimension.arg)) for dimension in space.dimensions}


def _describe(changes: Config) -> str:
    return (
        ", ".join(f"{name}={json.dumps(value)}" for name, value in changes.items())
        or "the descriptor's setting"
    )


def _ledger_trial(search: EngineSearch, trial: ConfigTrial) -> None:
    figure = f"{trial.score:,.3f} {trial.unit}" if trial.score is not None else f"no score: {trial.problem}"
    ledger.append_event(
        search.runs_root,
        "tune-trial",
        search.system.id,
        step=_step(search),
        run_dir=_relative(Path(trial.run_dirs[0]), search.runs_root) if trial.run_dirs else None,
        valid=trial.score is not None,
        detail=f"{_describe(trial.changes)}: {figure}" + (" (best so far)" if trial.best_so_far else ""),
    )


def _relative(run_dir: Path, runs_root: Path) -> str:
    """As the ledger names runs: from the runs folder."""
    return str(run_dir.relative_to(runs_root)) if run_dir.is_relative_to(runs_root) else str(run_dir)


def _step(search: EngineSearch) -> str:
    return f"{search.benchmark}/{search.scenario}/tune-engine"


def tune_engine(search: EngineSearch, on_trial: Callable[[ConfigTrial], None]) -> EngineSearchResult:
    """Search, then write the copy and the evidence; evidence is written even when interrupted."""
    baseline = baseline_config(search)
    result = EngineSearchResult()
    started = datetime.now(UTC)
    ledger.append_event(
        search.runs_root,
        "tune-started",
        search.system.id,
        step=_step(search),
        detail="; ".join(
            f"{d.arg}: {', '.join(json.dumps(v) for v in d.values)}" for d in search.space.dimensions
        ),
    )

    def measure(config: Config) -> ConfigTrial:
        trial = _measure(search, len(result.trials) + 1, config, baseline, result.best)
        result.trials.append(trial)
        best = result.best
        if trial.score is not None and (
            best is None or best.score is None or trial.score > best.score * (1 + search.min_gain)
        ):
            trial.best_so_far = True
            result.best = trial
        _ledger_trial(search, trial)
        on_trial(trial)
        return trial

    try:
        result.baseline = measure(dict(baseline))
        if result.baseline.score is None:
            raise SubmitterError(
                f"the descriptor's own setting has no score to compare with: {result.baseline.problem}"
            )
        best_config = dict(baseline)
        tried = [_normal(search.space, baseline)]
        for dimension in search.space.dimensions:
            for value in dimension.values:
                config = {**best_config, dimension.arg: value}
                if _normal(search.space, config) in tried:
                    continue
                if len(result.trials) >= search.max_configs:
                    break
                tried.append(_normal(search.space, config))
                if measure(config) is result.best:
                    best_config = config
    except (KeyboardInterrupt, RunInterrupted):
        result.interrupted = True
        raise
    finally:
        try:
            _write_outputs(search, result, baseline, started)
        finally:
            _ledger_finished(search, result)
    return result


def _ledger_finished(search: EngineSearch, result: EngineSearchResult) -> None:
    ledger.append_event(
        search.runs_root,
        "tune-finished",
        search.system.id,
        step=_step(search),
        valid=result.best is not None and not result.interrupted,
        detail=_summary(result),
    )


def _summary(result: EngineSearchResult) -> str:
    if result.interrupted:
        return f"interrupted after {len(result.trials)} configuration(s)"
    best, baseline = result.best, result.baseline
    if best is None or best.score is None or baseline is None or baseline.score is None:
        return "no configuration had a score"
    return (
        f"best {_describe(best.changes)}: {best.score:,.3f} {best.unit}, "
        f"{best.score / baseline.score:.3f} x the descriptor's {baseline.score:,.3f}"
    )


def _tuned_rate(search: EngineSearch, best: ConfigTrial) -> float | None:
    if search.scenario is Scenario.OFFLINE:
        # Offline issues min_duration x target_qps samples: the rate measured, so the run is not cut short.
        return round(best.samples_per_second, 3) if best.samples_per_second else None
    return best.score


def _write_outputs(
    search: EngineSearch, result: EngineSearchResult, baseline: Config, started: datetime
) -> None:
    search.out.mkdir(parents=True, exist_ok=True)
    best = result.best
    if best is not None and not result.interrupted:
        result.descriptor_copy = _write_descriptor_copy(search, best)
    evidence = {
        "tool": f"submitter {__version__} tune-engine",
        "command_line": list(search.command_line),
        "system": search.system.id,
        "descriptor": str(search.source),
        "benchmark": search.benchmark,
        "scenario": str(search.scenario),
        "started_utc": started.isoformat(timespec="seconds"),
        "finished_utc": datetime.now(UTC).isoformat(timespec="seconds"),
        "interrupted": result.interrupted,
        "score": (
            "LoadGen's result over one pass of `samples` prompts"
            if search.scenario is Scenario.OFFLINE
            else "the highest target_qps LoadGen judged VALID in short trials"
        ),
        "min_gain": search.min_gain,
        "trial_sizes": (
            {"samples": search.samples}
            if search.scenario is Scenario.OFFLINE
            else {**search.trial.model_dump(), "rate_trials": search.qps_trials, "step": search.qps_step}
        ),
        "space": [dimension.model_dump() for dimension in search.space.dimensions],
        "baseline": baseline,
        "trials": [asdict(trial) for trial in result.trials],
        "best": asdict(best) if best else None,
        "descriptor_copy": str(result.descriptor_copy) if result.descriptor_copy else None,
        "ran_on": ran_on([run_dir for trial in result.trials for run_dir in trial.run_dirs]),
    }
    result.evidence = search.out / EVIDENCE
    write_text_atomic(result.evidence, json.dumps(evidence, indent=2, ensure_ascii=False) + "\n")


def ran_on(run_dirs: list[str]) -> dict[str, Any]:
    """Versions and GPUs, from the first of the runs that has a record (a search runs on one host)."""
    for run_dir in run_dirs:
        record = read_record(Path(run_dir))
        if record is not None:
            dumped = record.model_dump(mode="json")
            return {"versions": dumped["versions"], "gpus": dumped["gpus"]}
    return {}


def _write_descriptor_copy(search: EngineSearch, best: ConfigTrial) -> Path:
    """The source descriptor, as written, with the best setting: a copy to review, never the original."""
    data = read_json(search.source)
    setup = data["benchmarks"][search.benchmark]
    scenario = setup["scenarios"][str(search.scenario)]
    for name, value in best.changes.items():
        if name in SETUP_FIELDS:
            setup[name] = value
        else:
            scenario.setdefault("engine_args", {})[name] = value
    rate = _tuned_rate(search, best)
    if rate is not None:
        scenario.setdefault("user_conf", {})["target_qps"] = rate
    scenario["tuned_from"] = str(search.out / EVIDENCE)  # still names its evidence once copied to systems/
    copy = search.out / f"{search.system.id}.json"
    write_text_atomic(copy, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    load_descriptor(copy)  # the copy must still be a descriptor that runs
    return copy
