"""`submitter rounds`: the rules of each MLPerf round, with where every number comes from."""

from __future__ import annotations

import click
import msgspec

from submitter.cli.output import echo_json, echo_sourced_table, echo_table
from submitter.rounds.registry import available_rounds, load_round
from submitter.rounds.rule_table import benchmark_rows, round_rows


@click.group()
def rounds() -> None:
    """Show the rules of the MLPerf rounds submitter knows."""


@rounds.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout.")
def list_rounds(as_json: bool) -> None:
    """One line per round: LoadGen version, layout and benchmarks."""
    loaded = [load_round(name) for name in available_rounds()]
    if as_json:
        echo_json(
            [
                {
                    "round": r.name,
                    "loadgen": r.loadgen.version,
                    "layout": r.layout.name,
                    "benchmarks": list(r.benchmarks),
                }
                for r in loaded
            ]
        )
        return
    echo_table(
        [(r.name, r.loadgen.version, r.layout.name, ", ".join(r.benchmarks)) for r in loaded],
        headers=("round", "loadgen", "layout", "benchmarks"),
    )


@rounds.command("show")
@click.argument("round_name", metavar="ROUND")
@click.argument("benchmark", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the full rules as JSON on stdout.")
def show_round(round_name: str, benchmark: str | None, as_json: bool) -> None:
    """The rules of ROUND, or of one BENCHMARK in it, each with its source."""
    rules = load_round(round_name)
    if benchmark is None:
        if as_json:
            echo_json(msgspec.to_builtins(rules))
            return
        click.echo(f"MLPerf Inference {rules.name}")
        echo_sourced_table(round_rows(rules))
        return
    bench = rules.benchmark(benchmark)
    if as_json:
        echo_json(msgspec.to_builtins(bench))
        return
    click.echo(f"{bench.name} in MLPerf Inference {rules.name}")
    echo_sourced_table(benchmark_rows(rules, bench))


@rounds.command("install-loadgen")
@click.argument("round_name", metavar="ROUND", type=click.Choice(available_rounds()))
def install_loadgen(round_name: str) -> None:
    """Install ROUND's LoadGen beside the pinned one, for runs in that round (its mlperf.conf has the
    round's seeds); nothing to do when the installed LoadGen already is one of the round's."""
    from harness.loadgen_release import in_seed_range, install_release, installed_version

    rules = load_round(round_name)
    installed = installed_version()
    if installed is not None and in_seed_range(rules, installed):
        click.echo(f"LoadGen {installed} (installed) already has round {rules.name}'s seeds", err=True)
        return
    click.echo(
        f"installed LoadGen {rules.loadgen.version} for round {rules.name} in {install_release(rules)}"
    )
