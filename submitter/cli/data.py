"""`submitter data`: stand-ins for data that cannot be downloaded (a shaped dataset, a weightless model)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import click

from harness.benchmarks.registry import benchmark_plugin
from harness.stand_in_models import write_dummy_model
from submitter.errors import UsageProblem
from submitter.fileio import ensure_writable, write_chunks_atomic
from submitter.rounds.registry import available_rounds, load_round

# Records are encoded this many at a time: a full dataset is some 60 MB of JSON, never held as one string.
_RECORDS_PER_CHUNK = 256


@click.group()
def data() -> None:
    """Synthetic datasets and dummy-weight models for runs without the real ones."""


def json_array_chunks(records: Sequence[object]) -> Iterator[bytes]:
    """The bytes of json.dumps(records, separators=(",", ":")), a few records at a time."""
    yield b"["
    for start in range(0, len(records), _RECORDS_PER_CHUNK):
        batch = records[start : start + _RECORDS_PER_CHUNK]
        text = ",".join(json.dumps(record, separators=(",", ":")) for record in batch)
        yield (text if start == 0 else "," + text).encode("utf-8")
    yield b"]"


@data.command("synth")
@click.option("--benchmark", default="llama3.1-8b", show_default=True)
@click.option("--round", "round_name", help="The round whose rules shape the data (default: the newest).")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    required=True,
    help="JSON file to write (its folder must exist).",
)
@click.option(
    "--samples", type=click.IntRange(min=1), help="Records (default: the benchmark's dataset size)."
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--demo-model",
    type=click.Path(path_type=Path),
    help="Also write a demo model here: a tokenizer, and synthetic answers that score as passing.",
)
def synth(
    benchmark: str, round_name: str | None, out: Path, samples: int | None, seed: int, demo_model: Path | None
) -> None:
    """A dataset in the benchmark's file format with the real prompt-length profile."""
    rules = load_round(round_name or available_rounds()[-1]).benchmark(benchmark)
    if rules.generation is None:
        raise UsageProblem(f"{benchmark} has no generation rules, so submitter cannot shape data for it")
    plugin = benchmark_plugin(rules)
    ensure_writable(out)
    if demo_model is not None:
        ensure_writable(demo_model, folder=True)
    count = samples or rules.dataset.size
    records = plugin.synthesize_records(count, rules.generation, seed)
    write_chunks_atomic(out, json_array_chunks(records))
    click.echo(f"wrote {count} synthetic {benchmark} records to {out}", err=True)
    if demo_model is not None:
        plugin.write_demo_model(demo_model, records, rules.generation.max_output_tokens)
        click.echo(f"wrote a demo model (tokenizer and answers) to {demo_model}", err=True)


@data.command("dummy-model")
@click.option("--benchmark", default="llama3.1-8b", show_default=True)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    required=True,
    help="Directory to write (created if missing; its parent must exist).",
)
def dummy_model(benchmark: str, out: Path) -> None:
    """A model directory with the architecture's config.json and no weights (vLLM load_format=dummy)."""
    ensure_writable(out, folder=True)
    write_dummy_model(out, benchmark)
    click.echo(
        f"wrote a dummy-weights {benchmark} model to {out}; its results are never submittable", err=True
    )
