"""`submitter run-all`: every run a submission needs from one system, planned and checked up front.

    campaign = plan_campaign(request)       # preflight of every run; raises before anything is written
    outcomes = execute_campaign(campaign, progress)

Runs that already completed valid with the same settings are reused (`harness.reuse`), so a killed
run-all started again finishes the plan without redoing them. Every run and plan is journalled in
runs/ledger.jsonl. Only one run-all per system and runs folder at a time.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from harness import ledger
from harness.engine_session import EngineSession
from harness.estimate import Estimate, estimate
from harness.loadgen_settings import Smoke
from harness.matrix import Step, required_steps
from harness.preflight import PreflightFailed, check_runs_destination
from harness.reuse import Earlier, find_earlier
from harness.runner import (
    EngineDidNotStart,
    RunInterrupted,
    RunPlan,
    RunRequest,
    execute,
    finish_evaluation,
    plan_run,
    run_directory,
)
from submitter.errors import SubmitterError, UsageProblem
from submitter.fileformats.run_mode import Mode
from submitter.fileformats.run_record import RunRecord, read_record
from submitter.interrupts import terminate_as_interrupt
from submitter.rounds.models import Scenario
from submitter.rounds.registry import load_round
from submitter.systems.descriptor import SystemDescriptor

# Free space wanted beyond the plan's own estimate: logs are small, so this is the real margin.
DISK_MARGIN_BYTES = 1 << 30


@dataclass(frozen=True)
class CampaignRequest:
    system: SystemDescriptor
    benchmarks: tuple[str, ...] = ()
    scenarios: tuple[Scenario, ...] = ()
    modes: tuple[Mode, ...] = ()
    dataset: Path | None = None
    model: str | None = None
    smoke: Smoke | None = None
    runs_root: Path = Path("runs")
    resume: bool = True
    fail_fast: bool = False
    progress: bool = False
    command_line: tuple[str, ...] = ()
    early_abort: bool = True  # Server and Interactive performance runs stop once VALID is impossible
    described_host: bool = False  # plan for the descriptor's GPUs, not this host's (dry runs)


@dataclass(frozen=True)
class PlannedRun:
    step: Step
    plan: RunPlan
    earlier: Earlier
    estimate: Estimate

    @property
    def reuse(self) -> Path | None:
        return self.earlier.reusable


@dataclass(frozen=True)
class Campaign:
    request: CampaignRequest
    runs: tuple[PlannedRun, ...]
    disk_free_bytes: int

    @property
    def to_run(self) -> tuple[PlannedRun, ...]:
        return tuple(run for run in self.runs if run.reuse is None)

    @property
    def seconds(self) -> float:
        return sum(run.estimate.seconds for run in self.to_run)

    @property
    def disk_bytes(self) -> int:
        return sum(run.estimate.disk_bytes for run in self.to_run)


@dataclass(frozen=True)
class StepOutcome:
    step: Step
    reused: bool
    run_dir: Path | None
    record: RunRecord | None
    error: str | None = None  # why the run was refused before LoadGen started, or not tried (not_run)
    engine_did_not_start: bool = False  # the refusal was the engine's: it failed to build or start
    not_run: bool = False  # not tried: its engine had failed to start for an earlier run of the plan

    @property
    def valid(self) -> bool:
        return self.record is not None and self.record.status == "completed" and self.record.valid

    @property
    def lost_node(self) -> str | None:
        """Why a multi-node run stopped: a node left the cluster (the message names it)."""
        harness = self.record.harness if self.record else None
        return harness.lost_node if harness else None


class CampaignProgress(Protocol):
    def starting(self, index: int, total: int, planned: PlannedRun, seconds_left: float) -> None: ...

    def finished(self, index: int, total: int, outcome: StepOutcome) -> None: ...


def _free_bytes(path: Path) -> int:
    existing = next(parent for parent in (path.resolve(), *path.resolve().parents) if parent.exists())
    return shutil.disk_usage(existing).free


def plan_campaign(request: CampaignRequest) -> Campaign:
    """Plan every run and run every preflight check; all problems are reported together."""
    system = request.system
    steps = required_steps(
        system, load_round(system.round), request.benchmarks, request.scenarios, request.modes
    )
    problems: dict[str, list[Step]] = {}
    usage_problem = False
    try:  # where every run writes: refused now, not after the first engine has started
        check_runs_destination(request.runs_root)
        writable_root = True
    except SubmitterError as exc:
        problems[str(exc)] = list(steps)
        usage_problem, writable_root = isinstance(exc, UsageProblem), False
    planned = []
    engine_running: tuple[object, ...] | None = None  # what the engine of the last run to do serves
    for step in steps:
        run_request = RunRequest(
            system=system,
            benchmark=step.benchmark,
            scenario=step.scenario,
            mode=step.mode,
            dataset=request.dataset,
            model=request.model,
            smoke=request.smoke,
            runs_root=request.runs_root,
            progress=request.progress,
            command_line=request.command_line,
            early_abort=request.early_abort,
            described_host=request.described_host,
        )
        try:
            plan = plan_run(run_request)
            if writable_root:
                check_runs_destination(request.runs_root, run_directory(plan, datetime.now(UTC)).parent)
        except SubmitterError as exc:
            for problem in exc.problems if isinstance(exc, PreflightFailed) else [exc]:
                problems.setdefault(str(problem), []).append(step)
                usage_problem = usage_problem or isinstance(problem, UsageProblem)
            continue
        earlier = find_earlier(plan) if request.resume else Earlier(None, "--no-resume")
        runs_test = earlier.reusable is None and earlier.unfinished is None
        starts_engine = runs_test and _engine_of(plan) != engine_running
        if runs_test:
            engine_running = _engine_of(plan)
        planned.append(PlannedRun(step, plan, earlier, estimate(plan, starts_engine=starts_engine)))
    if problems:
        lines = [
            f"- {message} ({'every run' if len(failing) == len(steps) else ', '.join(map(str, failing))})"
            for message, failing in problems.items()
        ]
        error = UsageProblem if usage_problem else SubmitterError
        raise error(f"preflight found {len(problems)} problem(s); nothing was run:\n" + "\n".join(lines))
    campaign = Campaign(request, tuple(planned), _free_bytes(request.runs_root))
    if campaign.disk_bytes + DISK_MARGIN_BYTES > campaign.disk_free_bytes:
        raise SubmitterError(
            f"the plan writes about {campaign.disk_bytes / 1e9:.1f} GB and wants "
            f"{DISK_MARGIN_BYTES / 1e9:.1f} GB spare, but {request.runs_root} has "
            f"{campaign.disk_free_bytes / 1e9:.1f} GB free; free space or pass --runs-dir elsewhere"
        )
    return campaign


def _built_engine(plan: RunPlan) -> tuple[object, ...]:
    """What a worker builds its engine from (harness.worker): an engine that failed to start from these
    fails again, whatever the scenario or mode of the run."""
    return (plan.engine.build_key(), plan.engine_environment)


def _tried_before(failed_engines: list[tuple[tuple[object, ...], str]], plan: RunPlan) -> str | None:
    """The run for which the plan's engine already failed to start, if one did."""
    built = _built_engine(plan)
    return next((run for engine, run in failed_engines if engine == built), None)


def _engine_of(plan: RunPlan) -> tuple[object, ...]:
    """What decides whether consecutive runs share an engine (harness.engine_session): the engine but
    its sampling, and the scenario, since LoadGen reads its configuration once per process."""
    return (plan.engine.build_key(), plan.target.model, plan.target.scenario)


@contextmanager
def _exclusive(runs_root: Path, system_id: str) -> Iterator[None]:
    """One run-all per system and runs folder: two would fight over the GPUs and the plan."""
    lock_path = runs_root / system_id / ".run-all.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("a+") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            holder = lock.read().strip() or "another process"
            raise SubmitterError(
                f"a run-all for {system_id} is already running in {runs_root} (pid {holder}); "
                "wait for it, or stop it first"
            ) from None
        lock.truncate(0)
        lock.write(str(os.getpid()))
        lock.flush()
        yield


def execute_campaign(campaign: Campaign, progress: CampaignProgress) -> list[StepOutcome]:
    """Run what the plan needs, in order; Ctrl-C or SIGTERM ends it as RunInterrupted."""
    request = campaign.request
    system_id = request.system.id
    total = len(campaign.runs)
    outcomes: list[StepOutcome] = []
    # One worker for the whole plan: it keeps its engine while consecutive runs can share it (every mode
    # of a scenario) and is replaced when they cannot.
    with _exclusive(request.runs_root, system_id), terminate_as_interrupt(), EngineSession() as session:
        ledger.append_event(
            request.runs_root,
            "plan-started",
            system_id,
            detail=f"{total} runs, {len(campaign.to_run)} to do: "
            + ", ".join(f"{run.step.key}{'' if run.reuse is None else ' (reused)'}" for run in campaign.runs),
        )
        seconds_left = campaign.seconds
        # Engines that failed to start, each with the run that tried: later runs needing one are not tried,
        # since a start can take many minutes on a large model and would fail the same way.
        failed_engines: list[tuple[tuple[object, ...], str]] = []
        try:
            for index, planned in enumerate(campaign.runs, 1):
                if planned.reuse is not None:
                    outcome = StepOutcome(planned.step, True, planned.reuse, read_record(planned.reuse))
                    ledger.append_event(
                        request.runs_root,
                        "run-reused",
                        system_id,
                        step=planned.step.key,
                        run_dir=str(planned.reuse.relative_to(request.runs_root)),
                    )
                elif (tried := _tried_before(failed_engines, planned.plan)) is not None:
                    seconds_left -= planned.estimate.seconds
                    outcome = _not_run(planned, tried, request)
                else:
                    progress.starting(index, total, planned, seconds_left)
                    seconds_left -= planned.estimate.seconds
                    outcome = _run_one(planned, session)
                    if outcome.engine_did_not_start:
                        failed_engines.append((_built_engine(planned.plan), planned.step.key))
                outcomes.append(outcome)
                progress.finished(index, total, outcome)
                if outcome.lost_node:  # the cluster is not the described system: later runs would fail
                    break
                if request.fail_fast and not outcome.valid:
                    break
        except (RunInterrupted, KeyboardInterrupt):
            done = f"after {len(outcomes)} of {total} runs"
            ledger.append_event(request.runs_root, "plan-interrupted", system_id, detail=done)
            raise RunInterrupted(
                f"run-all interrupted after {len(outcomes)} of {total} runs; run the same command again "
                "to finish the plan (valid runs are kept)"
            ) from None
        valid = sum(outcome.valid for outcome in outcomes)
        summary = f"{valid} of {total} runs valid"
        ledger.append_event(request.runs_root, "plan-finished", system_id, detail=summary)
    return outcomes


def _not_run(planned: PlannedRun, tried: str, request: CampaignRequest) -> StepOutcome:
    reason = (
        f"its engine failed to start for {tried} (the reason is given there); fix that and run the same "
        "command again: the runs already done are kept"
    )
    ledger.append_event(
        request.runs_root,
        "run-finished",
        request.system.id,
        step=planned.step.key,
        status="not run",
        valid=False,
        detail=reason,
    )
    return StepOutcome(planned.step, False, None, None, error=reason, not_run=True)


def _run_one(planned: PlannedRun, session: EngineSession) -> StepOutcome:
    unfinished = planned.earlier.unfinished
    try:
        if unfinished is not None:
            record = read_record(unfinished)
            assert record is not None  # find_earlier read it
            finished = finish_evaluation(planned.plan, unfinished, record)
        else:
            finished = execute(planned.plan, session)
    except RunInterrupted:
        raise
    except EngineDidNotStart as exc:
        return StepOutcome(planned.step, False, None, None, error=str(exc), engine_did_not_start=True)
    except SubmitterError as exc:  # refused in the worker before LoadGen started: no run directory
        return StepOutcome(planned.step, False, None, None, error=str(exc))
    return StepOutcome(planned.step, False, finished.run_dir, finished.record)
