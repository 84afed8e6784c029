"""`submitter run`: one LoadGen run of one benchmark scenario in one mode, on a described system."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

import click

from harness import preflight
from harness.estimate import answer_length_note
from harness.loadgen_settings import Smoke
from harness.runner import RunPlan, RunRequest, execute, plan_run, run_directory
from submitter.cli.output import echo_json, run_round_option, runnable_descriptor
from submitter.fileformats.run_mode import Mode
from submitter.fileformats.run_record import aborted_note
from submitter.rounds.models import Scenario
from submitter.workspace import RUNS

RUN_SCENARIOS = (Scenario.OFFLINE, Scenario.SERVER, Scenario.INTERACTIVE)


def checked_plan(request: RunRequest) -> RunPlan:
    """The run's plan, and the runs folder proved writable: every problem of both reported together."""
    found = preflight.Problems()
    plan = found.check(plan_run, request)
    run_folder = run_directory(plan, datetime.now(UTC)).parent if plan is not None else None
    found.check(preflight.check_runs_destination, request.runs_root, run_folder)
    found.raise_if_any()
    assert plan is not None
    return plan


@click.command("run")
@click.option("--system", "system_id", required=True, help="Descriptor id (or path to its .json).")
@run_round_option
@click.option("--benchmark", default="llama3.1-8b", show_default=True)
@click.option("--scenario", required=True, type=click.Choice([s.value for s in RUN_SCENARIOS]))
@click.option("--mode", required=True, type=click.Choice([m.value for m in Mode]))
@click.option("--dataset", type=click.Path(path_type=Path), help="Dataset JSON (default: the descriptor's).")
@click.option("--model", help="Checkpoint directory or hub name (default: the descriptor's model_path).")
@click.option("--smoke", is_flag=True, help="A short trial run; its result is marked not submittable.")
@click.option(
    "--smoke-samples",
    type=click.IntRange(min=1),
    default=Smoke().samples,
    show_default=True,
    help="With --smoke: how many of the dataset's prompts (Offline makes one pass over them).",
)
@click.option("--runs-dir", type=click.Path(path_type=Path), default=RUNS, show_default=True)
@click.option(
    "--no-early-abort",
    is_flag=True,
    help="Run a Server or Interactive performance run to its end even once its latencies make VALID "
    "impossible (by default it stops there).",
)
@click.option("--json", "as_json", is_flag=True, help="Print run.json on stdout.")
def run(
    system_id: str,
    round_name: str | None,
    benchmark: str,
    scenario: str,
    mode: str,
    dataset: Path | None,
    model: str | None,
    smoke: bool,
    smoke_samples: int,
    runs_dir: Path,
    no_early_abort: bool,
    as_json: bool,
) -> None:
    """Run LoadGen against the system's engine; results go to
    RUNS_DIR/<system>/<benchmark>/<scenario>/<mode>/<UTC time>/ with run.json written last."""
    request = RunRequest(
        system=runnable_descriptor(system_id, round_name),
        benchmark=benchmark,
        scenario=Scenario(scenario),
        mode=Mode(mode),
        dataset=dataset,
        model=model,
        smoke=Smoke(samples=smoke_samples) if smoke else None,
        runs_root=runs_dir,
        progress=sys.stderr.isatty(),
        command_line=("submitter", *sys.argv[1:]),
        early_abort=not no_early_abort,
    )
    plan = checked_plan(request)
    if plan.topology_text():
        click.echo(f"{benchmark} {scenario}: {plan.topology_text()}", err=True)
    if note := answer_length_note(plan):
        click.echo(f"{benchmark} {scenario}: {note}", err=True)
    finished = execute(plan)
    record = finished.record
    if as_json:
        echo_json(record.model_dump(mode="json"))
    outcome = record.loadgen.outcome
    metric = ""
    if outcome and outcome.metric_value is not None:
        metric = f", {outcome.metric_value:,.2f} {outcome.metric_unit} ({outcome.metric})"
    verdict = "valid" if record.valid else "NOT valid"
    if record.valid and record.unscored:
        verdict = "logged, NOT scored"
    took = f" ({record.wall_s:.0f} s)"
    stopped = aborted_note(record)
    if stopped:  # the one line an aborted run gets (it says how long it ran); the reason follows
        verdict, took = f"ABORTED, VALID was impossible; {stopped}", ""
    click.echo(f"{scenario} {mode}: {verdict}{metric}{took} -> {finished.run_dir}", err=True)
    for problem in (*record.problems, *([record.unscored] if record.unscored else [])):
        click.echo(f"  {problem}", err=True)
    if record.not_submittable:
        click.echo(f"  not submittable: {'; '.join(record.not_submittable)}", err=True)
    if not record.valid or record.unscored:
        sys.exit(1)
