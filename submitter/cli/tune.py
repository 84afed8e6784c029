"""`submitter tune-qps`: find the highest valid Server or Interactive target_qps for a system."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from harness.preflight import check_runs_destination
from harness.tune import TRIAL, Trial, TuneRequest, tune_qps
from submitter.cli.output import echo_json, echo_table, run_round_option, runnable_descriptor
from submitter.rounds.models import Scenario
from submitter.workspace import RUNS


def _descriptor_shown(system_id: str) -> str:
    """The descriptor's file as the user can open it (bench/systems/..., a path given, a shipped one)."""
    from submitter.systems.runnable import descriptor_file
    from submitter.systems.validate import display_path

    return display_path(descriptor_file(system_id))


def _verdict(trial: Trial) -> str:
    if trial.valid:
        return "VALID"
    if trial.aborted and trial.seconds is not None:
        return f"INVALID (aborted at {trial.seconds:,.0f} s)"
    return "INVALID"


def _row(trial: Trial) -> tuple[str, ...]:
    def number(value: float | None, digits: int = 1) -> str:
        return "" if value is None else f"{value:,.{digits}f}"

    return (
        f"{trial.qps:g}",
        ("confirmation" if trial.confirmation else "search") + (", full length" if trial.full_length else ""),
        _verdict(trial),
        number(trial.completed_qps, 2),
        number(trial.tokens_per_second),
        number(trial.p99_ttft_ms),
        number(trial.p99_tpot_ms),
        str(trial.run_dir),
    )


HEADERS = (
    "target_qps",
    "run",
    "LoadGen",
    "completed/s",
    "tokens/s",
    "p99 TTFT ms",
    "p99 TPOT ms",
    "run directory",
)


@click.command("tune-qps")
@click.option("--system", "system_id", required=True, help="Descriptor id (or path to its .json).")
@run_round_option
@click.option(
    "--scenario", required=True, type=click.Choice([Scenario.SERVER.value, Scenario.INTERACTIVE.value])
)
@click.option("--benchmark", default="llama3.1-8b", show_default=True)
@click.option(
    "--start",
    "start_qps",
    type=click.FloatRange(min=0, min_open=True),
    help="First rate to try (default: the descriptor's target_qps).",
)
@click.option(
    "--trial-seconds", type=click.FloatRange(min=1), default=TRIAL.min_duration_ms / 1000, show_default=True
)
@click.option(
    "--precision",
    type=click.FloatRange(min=0.001, max=0.5),
    default=TuneRequest.precision,
    show_default=True,
    help="Relative gap to stop at.",
)
@click.option(
    "--step",
    type=click.FloatRange(min=1.01, max=4),
    default=TuneRequest.step,
    show_default=True,
    help="Growth factor while bracketing; near 1 when --start is already close.",
)
@click.option(
    "--max-trials",
    type=click.IntRange(min=1),
    default=TuneRequest.max_trials,
    show_default=True,
    help="Most short trials before confirming the best valid one (the search's time budget).",
)
@click.option("--no-confirm", is_flag=True, help="Skip the full-length confirmation run.")
@click.option("--dataset", type=click.Path(path_type=Path), help="Dataset JSON (default: the descriptor's).")
@click.option("--model", help="Checkpoint directory or hub name (default: the descriptor's model_path).")
@click.option("--runs-dir", type=click.Path(path_type=Path), default=RUNS, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the trials and the result as JSON.")
def tune(
    system_id: str,
    round_name: str | None,
    scenario: str,
    benchmark: str,
    start_qps: float | None,
    trial_seconds: float,
    precision: float,
    step: float,
    max_trials: int,
    no_confirm: bool,
    dataset: Path | None,
    model: str | None,
    runs_dir: Path,
    as_json: bool,
) -> None:
    """Search the highest target_qps LoadGen judges VALID (p99 TTFT and TPOT under the scenario's
    limits, by early stopping) with short trials, then confirm it with a full-length run."""
    system = runnable_descriptor(system_id, round_name)
    # Every trial is a run in the runs folder: proved writable before the engine starts.
    check_runs_destination(runs_dir, runs_dir / system.id)
    request = TuneRequest(
        system=system,
        scenario=Scenario(scenario),
        benchmark=benchmark,
        start_qps=start_qps,
        trial=TRIAL.model_copy(update={"min_duration_ms": int(trial_seconds * 1000)}),
        skip_confirm=no_confirm,
        precision=precision,
        step=step,
        max_trials=max_trials,
        dataset=dataset,
        model=model,
        runs_root=runs_dir,
        progress=sys.stderr.isatty(),
        command_line=("submitter", *sys.argv[1:]),
    )

    def report(trial: Trial) -> None:
        verdict = "VALID" if trial.valid else f"INVALID ({trial.why_invalid})"
        click.echo(
            f"target_qps {trial.qps:g} ({'full' if trial.full_length else 'trial'}): {verdict}", err=True
        )
        if trial.aborted and trial.saved_s is not None:
            click.echo(f"  stopped early: about {trial.saved_s:,.0f} s of its schedule saved", err=True)
        if trial.confirmation and not trial.valid and trial.completed_qps is not None:
            # Below the target, this is the engine's capacity; the next confirmation starts under it.
            over = "until it was stopped" if trial.aborted else "over the run"
            click.echo(f"  it completed {trial.completed_qps:g} queries/s {over}", err=True)

    result = tune_qps(request, report)
    best = result.best
    saved = sum(trial.saved_s or 0 for trial in result.trials)
    if saved:
        aborted = sum(trial.aborted for trial in result.trials)
        click.echo(f"early abort stopped {aborted} run(s), about {saved:,.0f} s of schedule saved", err=True)
    if as_json:
        echo_json(
            {
                "system": system.id,
                "scenario": scenario,
                "best_qps": best.qps if best else None,
                "confirmed_full_length": bool(best and best.full_length),
                "trials": [{**trial.__dict__, "run_dir": str(trial.run_dir)} for trial in result.trials],
            }
        )
    else:
        echo_table([_row(trial) for trial in result.trials], headers=HEADERS)
    if best is None:
        click.echo("no rate was VALID; lower --start or look at the runs above", err=True)
        sys.exit(1)
    confirmed = "confirmed at full length" if best.full_length else "not confirmed at full length"
    click.echo(
        f"best {scenario} target_qps: {best.qps:g} ({confirmed}); set it in {_descriptor_shown(system_id)}: "
        f'"{scenario}": {{"user_conf": {{"target_qps": {best.qps:g}}}}}',
        err=True,
    )
