"""`submitter accuracy RUN_DIR`: evaluate an accuracy run, again or with a tokenizer from elsewhere."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from harness.benchmarks.registry import benchmark_plugin
from submitter.cli.output import echo_json, echo_table
from submitter.errors import UsageProblem
from submitter.fileformats.run_record import read_record
from submitter.fileio import ensure_writable
from submitter.rounds.registry import load_round


@click.command("accuracy")
@click.argument("run_dir", type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.option(
    "--model", type=click.Path(path_type=Path), help="Directory with tokenizer.json (default: the run's)."
)
@click.option(
    "--dataset", type=click.Path(path_type=Path), help="Dataset with the references (default: the run's)."
)
@click.option("--workers", type=click.IntRange(min=1), help="Scoring processes (default: every core).")
@click.option("--json", "as_json", is_flag=True, help="Print the numbers and verdicts as JSON on stdout.")
def accuracy(
    run_dir: Path, model: Path | None, dataset: Path | None, workers: int | None, as_json: bool
) -> None:
    """Score RUN_DIR's accuracy log like the reference evaluator; writes accuracy.txt and accuracy.json."""
    record = read_record(run_dir)
    if record is None:
        raise UsageProblem(f"{run_dir} has no run.json: it is not a finished `submitter run` directory")
    if record.mode != "accuracy":
        raise UsageProblem(f"{run_dir} is a {record.mode} run; evaluate an accuracy run")
    rules = load_round(record.round)
    benchmark = rules.benchmark(record.benchmark)
    plugin = benchmark_plugin(benchmark)
    for name in plugin.ACCURACY_FILES:  # scoring takes minutes: find out first that its results can be kept
        ensure_writable(run_dir / name)
    tokenizer_dir = model or Path(record.engine.model)
    report = plugin.write_accuracy(
        run_dir,
        dataset or Path(record.dataset["path"]),
        tokenizer_dir,
        benchmark,
        rules.accuracy_patterns,
        workers,
        trial=bool(record.loadgen.overrides),
    )
    if as_json:
        echo_json(report.model_dump(mode="json"))
    else:
        click.echo(report.result.printed())
        echo_table(
            [(v.metric, f"{v.value:g}", v.bound, "pass" if v.passed else "FAIL") for v in report.verdicts],
            headers=("metric", "value", "needs", "verdict"),
        )
    click.echo(
        f"accuracy {'passes' if report.passed else 'FAILS'}; wrote {run_dir / 'accuracy.txt'}", err=True
    )
    if not report.passed:
        sys.exit(1)
