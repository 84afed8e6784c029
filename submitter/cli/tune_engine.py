"""`submitter tune-engine`: search a scenario's engine arguments; the best go into a descriptor copy."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import click

from harness.preflight import check_runs_destination
from harness.search_space import parse_space, space_for
from harness.tune import TRIAL
from harness.tune_engine import ConfigTrial, EngineSearch, benchmark_setup, tune_engine
from submitter.cli.output import echo_table, run_round_option, runnable_descriptor
from submitter.fileio import ensure_writable
from submitter.rounds.models import Scenario
from submitter.systems.runnable import descriptor_file
from submitter.workspace import RUNS

HEADERS = ("#", "changes against the descriptor", "score", "unit", "tokens/s", "engine start s", "runs", "")


def _row(trial: ConfigTrial) -> tuple[str, ...]:
    changes = ", ".join(f"{name}={json.dumps(value)}" for name, value in trial.changes.items())
    return (
        str(trial.number),
        changes or "(the descriptor's setting)",
        f"{trial.score:,.3f}" if trial.score is not None else "none",
        trial.unit,
        f"{trial.tokens_per_second:,.1f}" if trial.tokens_per_second is not None else "",
        f"{trial.engine_start_s:.1f}" if trial.engine_start_s is not None else "",
        str(len(trial.run_dirs)),
        "best so far" if trial.best_so_far else (trial.problem or "")[:80],
    )


@click.command("tune-engine")
@click.option("--system", "system_id", required=True, help="Descriptor id (or path to its .json).")
@run_round_option
@click.option(
    "--scenario",
    required=True,
    type=click.Choice([s.value for s in (Scenario.OFFLINE, Scenario.SERVER, Scenario.INTERACTIVE)]),
)
@click.option("--benchmark", default="llama3.1-8b", show_default=True)
@click.option(
    "--space",
    "space_options",
    multiple=True,
    metavar="ARG=V1,V2",
    help="Search these engine arguments and values, in this order (repeat the option); default: the "
    "backend's space in harness/engines/search_spaces.json. null: unset.",
)
@click.option(
    "--min-gain",
    type=click.FloatRange(min=0, max=0.5),
    default=EngineSearch.min_gain,
    show_default=True,
    help="A value is kept only when it beats the best so far by more than this (run-to-run noise).",
)
@click.option(
    "--max-configs",
    type=click.IntRange(min=1),
    default=EngineSearch.max_configs,
    show_default=True,
    help="Most configurations (engine starts), the descriptor's own included.",
)
@click.option(
    "--samples",
    type=click.IntRange(min=1),
    default=EngineSearch.samples,
    show_default=True,
    help="Offline: prompts in each configuration's one pass.",
)
@click.option(
    "--trial-seconds",
    type=click.FloatRange(min=1),
    default=TRIAL.min_duration_ms / 1000,
    show_default=True,
    help="Server and Interactive: each rate trial's length.",
)
@click.option(
    "--rate-trials",
    type=click.IntRange(min=1),
    default=EngineSearch.qps_trials,
    show_default=True,
    help="Server and Interactive: rate trials per configuration, from the best rate so far.",
)
@click.option("--dataset", type=click.Path(path_type=Path), help="Dataset JSON (default: the descriptor's).")
@click.option("--model", help="Checkpoint directory or hub name (default: the descriptor's model_path).")
@click.option("--runs-dir", type=click.Path(path_type=Path), default=RUNS, show_default=True)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    help="Folder for the descriptor copy and evidence.json "
    "(default: RUNS_DIR/tune-engine/<system>/<benchmark>/<scenario>/<UTC time>).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the evidence as JSON.")
def tune_engine_command(
    system_id: str,
    round_name: str | None,
    scenario: str,
    benchmark: str,
    space_options: tuple[str, ...],
    min_gain: float,
    max_configs: int,
    samples: int,
    trial_seconds: float,
    rate_trials: int,
    dataset: Path | None,
    model: str | None,
    runs_dir: Path,
    out: Path | None,
    as_json: bool,
) -> None:
    """Try engine arguments one at a time from the descriptor's setting, each configuration on one engine
    start with short runs through the harness; the best goes into a copy of the descriptor."""
    system = runnable_descriptor(system_id, round_name)
    chosen = Scenario(scenario)
    setup = benchmark_setup(system, benchmark, chosen)
    space = parse_space(space_options) if space_options else space_for(setup.backend_for(chosen))
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    out = out or runs_dir / "tune-engine" / system.id / benchmark / scenario / stamp
    check_runs_destination(runs_dir, runs_dir / system.id)
    ensure_writable(out, folder=True, make_parents=True)
    search = EngineSearch(
        system=system,
        scenario=chosen,
        source=descriptor_file(system_id),
        out=out,
        space=space,
        benchmark=benchmark,
        min_gain=min_gain,
        max_configs=max_configs,
        samples=samples,
        trial=TRIAL.model_copy(update={"min_duration_ms": int(trial_seconds * 1000)}),
        qps_trials=rate_trials,
        dataset=dataset,
        model=model,
        runs_root=runs_dir,
        progress=sys.stderr.isatty(),
        command_line=("submitter", *sys.argv[1:]),
    )

    def report(trial: ConfigTrial) -> None:
        row = _row(trial)
        click.echo(f"[{row[0]}] {row[1]}: {row[2]} {row[3]} {row[7]}".rstrip(), err=True)

    result = tune_engine(search, report)
    if as_json and result.evidence is not None:
        click.echo(result.evidence.read_text(encoding="utf-8"), nl=False)
    else:
        echo_table([_row(trial) for trial in result.trials], headers=HEADERS)
    best, baseline = result.best, result.baseline
    assert best is not None and baseline is not None and best.score and baseline.score
    click.echo(
        f"best: {_row(best)[1]}, "
        f"{best.score:,.3f} {best.unit} ({best.score / baseline.score:.3f} x the descriptor's); "
        f"copy: {result.descriptor_copy}; evidence: {result.evidence}",
        err=True,
    )
    if chosen is not Scenario.OFFLINE:
        in_round = f" --round {round_name}" if round_name else ""
        confirm = f"submitter tune-qps --system {result.descriptor_copy}{in_round} --scenario {scenario}"
        click.echo(
            f"  short trials only: confirm at full length with {confirm} --start {best.score:g}", err=True
        )
