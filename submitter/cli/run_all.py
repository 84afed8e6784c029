"""`submitter run-all`: the whole matrix of runs a system's submission needs, resumable."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from harness.estimate import answer_length_note, whole_set_note
from harness.loadgen_settings import Smoke
from harness.matrix import HARNESS_SCENARIOS
from harness.run_all import (
    Campaign,
    CampaignRequest,
    PlannedRun,
    StepOutcome,
    execute_campaign,
    plan_campaign,
)
from submitter.cli.output import echo_json, echo_table, run_round_option, runnable_descriptor
from submitter.errors import UsageProblem
from submitter.fileformats.run_mode import Mode
from submitter.fileformats.run_record import aborted_note, scores_text
from submitter.rounds.models import Scenario
from submitter.workspace import RUNS


def duration(seconds: float) -> str:
    minutes = round(seconds / 60)
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"


def _metric(outcome: StepOutcome) -> str:
    """The figure that matters for the run's mode: ROUGE for accuracy, the LoadGen metric otherwise."""
    record = outcome.record
    if record is None:
        return ""
    if record.scores:
        return scores_text(record.scores)
    loadgen = record.loadgen.outcome
    if loadgen is None or loadgen.metric_value is None:
        return ""
    figure = f"{loadgen.metric_value:,.2f} {loadgen.metric_unit}"
    verified = record.audit is not None and record.audit.get("passed")
    return f"{figure}; {record.mode} verified" if verified else figure


def _verdict(outcome: StepOutcome) -> str:
    if outcome.error:
        return f"{'not run' if outcome.not_run else 'refused'}: {outcome.error}"
    if outcome.record is None:
        return "no record"
    if outcome.valid and outcome.record.unscored:
        return f"logged, NOT scored: {outcome.record.unscored}"
    if outcome.valid:
        return "valid (kept)" if outcome.reused else "valid"
    stopped = aborted_note(outcome.record)
    if stopped:
        return f"ABORTED ({stopped}): {outcome.record.problems[0]}"
    return f"NOT valid: {outcome.record.problems[0] if outcome.record.problems else outcome.record.status}"


class TerminalProgress:
    """Step lines on stderr: where the plan is, always; what is starting, only on a terminal."""

    def __init__(self, live: bool) -> None:
        self.live = live

    def starting(self, index: int, total: int, planned: PlannedRun, seconds_left: float) -> None:
        if self.live:
            click.echo(
                f"[{index}/{total}] {planned.step}: starting, about {duration(planned.estimate.seconds)} "
                f"({duration(seconds_left)} left in the plan)",
                err=True,
            )

    def finished(self, index: int, total: int, outcome: StepOutcome) -> None:
        metric = f", {_metric(outcome)}" if _metric(outcome) else ""
        where = f" -> {outcome.run_dir}" if outcome.run_dir else ""
        click.echo(f"[{index}/{total}] {outcome.step}: {_verdict(outcome)}{metric}{where}", err=True)


def plan_notes(campaign: Campaign) -> list[str]:
    """One line per engine of the plan (where its replicas run, the memory estimate), and one per run
    whose target_qps makes equal-issue mode issue far more samples than it asks for, or whose dummy
    weights will run every answer far past the benchmark's mean length."""
    lines: dict[str, None] = {}
    for planned in campaign.runs:
        text = planned.plan.topology_text()
        if text:
            lines[f"{planned.step.benchmark} {planned.step.scenario}: {text}"] = None
    for planned in campaign.to_run:
        for note in (whole_set_note(planned.plan), answer_length_note(planned.plan)):
            if note:
                lines[f"{planned.step}: {note}"] = None
    return list(lines)


def _echo_plan(campaign: Campaign) -> None:
    rows = [
        (
            str(index),
            str(planned.step),
            _action(planned),
            f"{planned.estimate.samples:,}",
            "" if planned.reuse else duration(planned.estimate.seconds),
        )
        for index, planned in enumerate(campaign.runs, 1)
    ]
    echo_table(rows, headers=("#", "run", "action", "samples", "about"))
    for line in plan_notes(campaign):
        click.echo(line)
    click.echo(
        f"\n{len(campaign.to_run)} of {len(campaign.runs)} runs to do, about {duration(campaign.seconds)}; "
        f"writes about {campaign.disk_bytes / 1e6:,.0f} MB ({campaign.disk_free_bytes / 1e9:,.1f} GB free)"
    )


def _action(planned: PlannedRun) -> str:
    if planned.reuse:
        return f"keep {planned.reuse.name}"
    if planned.earlier.unfinished:
        return f"evaluate {planned.earlier.unfinished.name}"
    return f"run again: {planned.earlier.note}" if planned.earlier.note else "run"


def _plan_json(campaign: Campaign) -> dict[str, object]:
    return {
        "system": campaign.request.system.id,
        "smoke": campaign.request.smoke is not None,
        "estimated_seconds": round(campaign.seconds),
        "disk_bytes": campaign.disk_bytes,
        "runs": [
            {
                "step": planned.step.key,
                "action": "keep" if planned.reuse else "evaluate" if planned.earlier.unfinished else "run",
                "note": planned.earlier.note,
                "run_dir": str(planned.reuse or planned.earlier.unfinished or "") or None,
                "samples": planned.estimate.samples,
                "estimated_seconds": round(planned.estimate.seconds),
                "topology": topology.model_dump(mode="json") if topology else None,
                "environment": planned.plan.engine_environment,
                "renderer_workers": planned.plan.engine.renderer_workers,
            }
            for planned in campaign.runs
            for topology in [planned.plan.topology_record()]
        ],
    }


def _outcomes_json(campaign: Campaign, outcomes: list[StepOutcome]) -> dict[str, object]:
    return {
        "system": campaign.request.system.id,
        "smoke": campaign.request.smoke is not None,
        "valid": len(outcomes) == len(campaign.runs) and all(_done(outcome) for outcome in outcomes),
        "runs": [
            {
                "step": outcome.step.key,
                "reused": outcome.reused,
                "valid": outcome.valid,
                "unscored": outcome.record.unscored if outcome.record else None,
                "run_dir": str(outcome.run_dir) if outcome.run_dir else None,
                "metric": _metric(outcome) or None,
                "problems": outcome.record.problems if outcome.record else [outcome.error],
            }
            for outcome in outcomes
        ],
    }


@click.command("run-all")
@click.option("--system", "system_id", required=True, help="Descriptor id (or path to its .json).")
@run_round_option
@click.option("--benchmark", "benchmarks", multiple=True, help="Only this benchmark (repeatable).")
@click.option(
    "--scenario",
    "scenarios",
    multiple=True,
    type=click.Choice([s.value for s in HARNESS_SCENARIOS]),
    help="Only this scenario (repeatable).",
)
@click.option(
    "--mode",
    "modes",
    multiple=True,
    type=click.Choice([m.value for m in Mode]),
    help="Only runs of this mode (repeatable), e.g. the performance runs again after tuning.",
)
@click.option(
    "--dataset",
    type=click.Path(path_type=Path),
    help="Dataset file (default: the descriptor's dataset_path).",
)
@click.option("--model", help="Checkpoint directory or hub name (default: the descriptor's model_path).")
@click.option("--smoke", is_flag=True, help="Every run short, for a trial; results are not submittable.")
@click.option(
    "--smoke-samples",
    type=click.IntRange(min=1),
    help=f"With --smoke: how many of the dataset's records each run uses (default {Smoke().samples}; Offline "
    "makes one pass over them), e.g. enough for minutes of steady generation on a model whose full-length "
    "run would take hours.",
)
@click.option(
    "--resume/--no-resume",
    default=True,
    show_default=True,
    help="Keep runs that already completed valid with the same settings.",
)
@click.option("--dry-run", is_flag=True, help="Check everything and print the plan; run nothing.")
@click.option(
    "--described-gpus",
    is_flag=True,
    help="With --dry-run: plan for the GPUs the descriptor describes (accelerators_per_node x "
    "accelerator_model_name of accelerator_memory_capacity) instead of this host's, to prove placement "
    "and memory before the host is at hand.",
)
@click.option("--fail-fast", is_flag=True, help="Stop at the first run that is not valid.")
@click.option(
    "--no-early-abort",
    is_flag=True,
    help="Run Server and Interactive performance runs to their end even once VALID is impossible.",
)
@click.option("--runs-dir", type=click.Path(path_type=Path), default=RUNS, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the plan or the outcome as JSON on stdout.")
def run_all(
    system_id: str,
    round_name: str | None,
    benchmarks: tuple[str, ...],
    scenarios: tuple[str, ...],
    modes: tuple[str, ...],
    dataset: Path | None,
    model: str | None,
    smoke: bool,
    smoke_samples: int | None,
    resume: bool,
    dry_run: bool,
    described_gpus: bool,
    fail_fast: bool,
    no_early_abort: bool,
    runs_dir: Path,
    as_json: bool,
) -> None:
    """Run every (benchmark, scenario, mode) the system's round requires: audits (TEST06), accuracy
    (scored) and performance. A preflight checks all of them first and estimates the wall time."""
    if described_gpus and not dry_run:
        raise UsageProblem("--described-gpus plans for another host: use it with --dry-run")
    if smoke_samples is not None and not smoke:
        raise UsageProblem("--smoke-samples sets the length of a --smoke trial: add --smoke, or leave it out")
    live = sys.stderr.isatty()
    request = CampaignRequest(
        system=runnable_descriptor(system_id, round_name),
        benchmarks=benchmarks,
        scenarios=tuple(Scenario(name) for name in scenarios),
        modes=tuple(Mode(name) for name in modes),
        dataset=dataset,
        model=model,
        smoke=(Smoke() if smoke_samples is None else Smoke(samples=smoke_samples)) if smoke else None,
        runs_root=runs_dir,
        resume=resume,
        fail_fast=fail_fast,
        progress=live,
        command_line=("submitter", *sys.argv[1:]),
        early_abort=not no_early_abort,
        described_host=described_gpus,
    )
    campaign = plan_campaign(request)
    if dry_run:
        if as_json:
            echo_json(_plan_json(campaign))
        else:
            _echo_plan(campaign)
        return
    click.echo(
        f"{request.system.id}: {len(campaign.to_run)} of {len(campaign.runs)} runs to do, "
        f"about {duration(campaign.seconds)}",
        err=True,
    )
    for line in plan_notes(campaign):
        click.echo(line, err=True)
    outcomes = execute_campaign(campaign, TerminalProgress(live))
    if as_json:
        echo_json(_outcomes_json(campaign, outcomes))
    else:
        rows = [
            (str(outcome.step), _verdict(outcome), _metric(outcome), str(outcome.run_dir or ""))
            for outcome in outcomes
        ]
        echo_table(rows, headers=("run", "result", "metric", "run directory"))
    lost = [outcome.lost_node for outcome in outcomes if outcome.lost_node]
    if lost:
        left = len(campaign.runs) - len(outcomes)
        click.echo(f"run-all stopped with {left} run(s) not done: {lost[0]}", err=True)
    if len(outcomes) < len(campaign.runs) or not all(_done(outcome) for outcome in outcomes):
        sys.exit(1)


def _done(outcome: StepOutcome) -> bool:
    """Valid, and scored where it is an accuracy run: anything less makes run-all exit 1."""
    return outcome.valid and outcome.record is not None and not outcome.record.unscored
