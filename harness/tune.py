"""`submitter tune-qps`: the highest Server or Interactive target_qps that LoadGen still judges VALID.

LoadGen's own verdict is the criterion: with early stopping it decides whether the p99 TTFT and TPOT
stay under the scenario's limits at that arrival rate. Short trials bracket the answer (growing or
shrinking by `step`), bisection narrows it to `precision`, and a full-length run confirms the best.
Near the engine's capacity a short trial can pass where ten minutes fail (the queue has no time to grow),
so an INVALID confirmation steps down to `precision` below the rate that run actually completed, and
is confirmed again. Every trial runs on one engine, started once (`harness.engine_session`).

Trials and confirmations stop early once their latencies make VALID impossible (`harness.early_abort`):
such a trial is INVALID, and the rate it completed until then stands for its capacity. An aborted test
ends its worker, so the next trial starts the engine again; a search trial is therefore only watched
while the engine starts faster than the trial's minimum duration, the most an abort can save.

    result = tune_qps(TuneRequest(system, Scenario.SERVER), on_trial=print)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from harness.engine_session import EngineSession
from harness.loadgen_settings import Smoke
from harness.runner import FinishedRun, RunRequest, execute, plan_run
from submitter.errors import UsageProblem
from submitter.fileformats.run_mode import Mode
from submitter.rounds.models import Scenario
from submitter.systems.descriptor import SystemDescriptor

# A trial: 1024 samples as the sample set (equal-issue rounds Server runs up to whole sets of it),
# 60 s, at least 1024 queries (early stopping needs several hundred to judge p99).
TRIAL = Smoke(samples=1024, min_duration_ms=60_000, server_min_queries=1024)


@dataclass(frozen=True)
class TuneRequest:
    system: SystemDescriptor
    scenario: Scenario
    benchmark: str = "llama3.1-8b"
    start_qps: float | None = None  # default: the descriptor's target_qps
    trial: Smoke = TRIAL
    confirm: Smoke | None = None  # None: a full-length run; a Smoke: a longer trial (tests)
    skip_confirm: bool = False
    precision: float = 0.02  # stop when the valid and invalid rates are this close (relative)
    step: float = 1.5  # growth factor while bracketing
    max_trials: int = 16
    dataset: Path | None = None
    model: str | None = None
    runs_root: Path = Path("runs")
    progress: bool = False
    command_line: tuple[str, ...] = ()
    early_abort: bool = True  # stop a trial once VALID is impossible (harness.early_abort)


@dataclass(frozen=True)
class Trial:
    qps: float
    confirmation: bool  # a run confirming the search's answer, not a search step
    full_length: bool
    valid: bool
    run_dir: Path
    tokens_per_second: float | None
    completed_qps: float | None  # samples LoadGen saw completed per second, over the whole run
    p99_ttft_ms: float | None
    p99_tpot_ms: float | None
    why_invalid: str | None
    aborted: bool = False  # stopped early: VALID was impossible (why_invalid says why)
    seconds: float | None = None  # LoadGen's seconds: the whole test, or until the abort
    saved_s: float | None = None  # the schedule's seconds an abort spared
    engine_start_s: float | None = None  # the engine started for this trial, in that many seconds


@dataclass
class TuneResult:
    trials: list[Trial] = field(default_factory=list)
    best: Trial | None = None  # the highest valid rate: confirmed at full length unless skipped


def _trial(
    request: TuneRequest,
    qps: float,
    smoke: Smoke | None,
    confirmation: bool,
    session: EngineSession,
    early_abort: bool,
) -> Trial:
    finished: FinishedRun = execute(
        plan_run(
            RunRequest(
                system=request.system,
                benchmark=request.benchmark,
                scenario=request.scenario,
                mode=Mode.PERFORMANCE,
                dataset=request.dataset,
                model=request.model,
                smoke=smoke,
                runs_root=request.runs_root,
                progress=request.progress,
                command_line=request.command_line,
                target_qps=round(qps, 3),
                early_abort=early_abort,
            )
        ),
        session,
    )
    record = finished.record
    outcome = record.loadgen.outcome
    figures = outcome.figures if outcome else {}
    harness = record.harness
    aborted = record.status == "aborted"
    seconds = harness.loadgen_test_s if harness else None
    completed_qps = figures.get("completed_samples_per_second")
    if aborted and harness and seconds:
        # LoadGen wrote no result: the rate completed until the abort stands for the engine's capacity.
        completed_qps = round(harness.samples_completed / seconds, 3)
    return Trial(
        qps=round(qps, 3),
        confirmation=confirmation,
        full_length=smoke is None,
        valid=record.valid,
        run_dir=finished.run_dir,
        tokens_per_second=None if aborted or not outcome else outcome.metric_value,
        completed_qps=completed_qps,
        p99_ttft_ms=figures["p99_ttft_ns"] / 1e6 if "p99_ttft_ns" in figures else None,
        p99_tpot_ms=figures["p99_tpot_ns"] / 1e6 if "p99_tpot_ns" in figures else None,
        why_invalid=None if record.valid else "; ".join(record.problems) or "not valid",
        aborted=aborted,
        seconds=seconds,
        saved_s=harness.early_abort.saved_s if aborted and harness and harness.early_abort else None,
        engine_start_s=harness.engine_start_s if harness else None,
    )


def _start_qps(request: TuneRequest) -> float:
    if request.start_qps is not None:
        return request.start_qps
    setup = request.system.benchmarks.get(request.benchmark)
    scenario = setup.scenarios.get(request.scenario) if setup else None
    configured = scenario.user_conf.get("target_qps") if scenario else None
    if not configured:
        raise UsageProblem(
            f"{request.system.shown} sets no {request.scenario} target_qps to start from; pass --start QPS"
        )
    return float(configured)


def worth_aborting(smoke: Smoke | None, engine_start_s: float | None) -> bool:
    """Whether a trial should stop early once VALID is impossible: an abort ends the worker, so the next
    trial waits for the engine to start again, and an abort saves at most the trial's minimum duration.
    Full-length runs (ten minutes) always are; so is every trial before an engine start was measured."""
    if smoke is None or engine_start_s is None:
        return True
    return engine_start_s < smoke.min_duration_ms / 1000


# An aborted run steps down at most this many precisions at once (see next_confirmation_qps).
_ABORTED_STEP_LIMIT = 4


def next_confirmation_qps(failed: Trial, precision: float) -> float:
    """The rate to confirm after `failed`: `precision` below what that run actually completed.

    Above capacity the queue grows for the whole run and the engine completes only what it can, so the
    completed rate measures the capacity; stepping down from the target instead would spend another ten
    minutes on a rate that cannot hold either. Below capacity the two rates differ only by the final drain.
    An aborted run's completed rate is the one until the abort, which misses the answers still being
    generated: after a short run (an H100 stopped 11 s in had completed 25 of the 48 queries/s it holds)
    it says little, so an aborted run steps down at most `_ABORTED_STEP_LIMIT` precisions; it costs
    little to abort again.
    """
    ceiling = min(failed.qps, failed.completed_qps or failed.qps)
    if failed.aborted:
        ceiling = max(ceiling, failed.qps * (1 - _ABORTED_STEP_LIMIT * precision))
    return ceiling * (1 - precision)


def tune_qps(request: TuneRequest, on_trial: Callable[[Trial], None]) -> TuneResult:
    if request.scenario not in (Scenario.SERVER, Scenario.INTERACTIVE):
        raise UsageProblem("tune-qps searches Server and Interactive rates; Offline has no arrival rate")
    with EngineSession() as session:  # one engine for every trial: a GPU engine takes minutes to start
        return _search(request, on_trial, session)


def _search(request: TuneRequest, on_trial: Callable[[Trial], None], session: EngineSession) -> TuneResult:
    result = TuneResult()
    engine_start_s: float | None = None  # the last engine start measured; None before the first

    def attempt(qps: float, smoke: Smoke | None, confirmation: bool = False) -> Trial:
        nonlocal engine_start_s
        early_abort = request.early_abort and worth_aborting(smoke, engine_start_s)
        trial = _trial(request, qps, smoke, confirmation, session, early_abort)
        if trial.engine_start_s is not None:
            engine_start_s = trial.engine_start_s
        result.trials.append(trial)
        on_trial(trial)
        return trial

    low: float | None = None  # highest rate seen valid
    high: float | None = None  # lowest rate seen invalid
    qps = _start_qps(request)
    while len(result.trials) < request.max_trials:
        if low is not None and high is not None and high / low - 1 <= request.precision:
            break
        trial = attempt(qps, request.trial)
        if trial.valid:
            low = qps
        else:
            high = qps
        if low is None:
            qps = qps / request.step
        elif high is None:
            qps = qps * request.step
        else:
            qps = math.sqrt(low * high)
    if low is None:
        return result
    result.best = next(t for t in result.trials if t.qps == round(low, 3) and t.valid)
    if request.skip_confirm:
        return result

    # Short trials can be luckier than ten minutes; step down until a full-length run is VALID too.
    candidate = low
    for _ in range(3):
        confirmation = attempt(candidate, request.confirm, confirmation=True)
        if confirmation.valid:
            result.best = confirmation
            return result
        candidate = next_confirmation_qps(confirmation, request.precision)
    result.best = None
    return result
