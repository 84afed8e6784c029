"""`submitter data`: stand-ins for data that cannot be downloaded (a shaped dataset, a weightless model)."""

from __future__ import annotations

from pathlib import Path

import click

from harness.benchmarks.registry import benchmark_plugin, load_plugin, sample_media
from harness.stand_in_models import PRECISIONS, write_dummy_model
from submitter.errors import UsageProblem
from submitter.fileio import ensure_writable
from submitter.rounds.registry import available_rounds, load_round


@click.group()
def data() -> None:
    """Synthetic datasets and dummy-weight models for runs without the real ones."""


@data.command("synth")
@click.option("--benchmark", default="llama3.1-8b", show_default=True)
@click.option("--round", "round_name", help="The round whose rules shape the data (default: the newest).")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    required=True,
    help="Dataset to write in the reference's format (.json for llama3.1-8b, whisper's .json manifest with "
    "its WAV files in a folder beside it, a folder of Parquet files for gpt-oss-120b and qwen3-vl-235b-a22b, "
    "a pandas .pkl for the others; its parent folder must exist).",
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
    is_folder = plugin.DATASET_SUFFIX == ""  # one file per run mode (gpt-oss-120b)
    ensure_writable(out, folder=is_folder)
    if demo_model is not None:
        ensure_writable(demo_model, folder=True)
    if not is_folder and out.suffix != plugin.DATASET_SUFFIX:
        raise UsageProblem(
            f"--out {out}: {benchmark}'s dataset is a {plugin.DATASET_SUFFIX} file in its reference's "
            f"format; name it {out.with_suffix(plugin.DATASET_SUFFIX).name}"
        )
    count = samples or rules.dataset.size
    records = plugin.synthesize_records(count, rules.generation, seed)
    plugin.write_dataset(out, records)
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
@click.option(
    "--precision",
    type=click.Choice(PRECISIONS),
    default="checkpoint",
    show_default=True,
    help="checkpoint: the model's own (16-bit, or the format it is published in); published: the "
    "quantization_config of the checkpoint the published systems ran "
    "(harness/models/published_precision.json); fp8: per-tensor FP8. vLLM allocates quantised weights "
    "in their format directly.",
)
@click.option(
    "--layers", type=click.IntRange(min=1), help="Fewer layers than the model has (said in run.json)."
)
def dummy_model(benchmark: str, out: Path, precision: str, layers: int | None) -> None:
    """A model directory with the architecture's config.json and no weights (vLLM load_format=dummy)."""
    ensure_writable(out, folder=True)
    write_dummy_model(out, benchmark, precision=precision, layers=layers)
    click.echo(
        f"wrote a dummy-weights {benchmark} model to {out}; its results are never submittable", err=True
    )
    rules = load_round(available_rounds()[-1]).benchmarks.get(benchmark)
    if rules is not None and rules.plugin is not None and sample_media(load_plugin(rules.plugin)):
        click.echo(
            f"note: vLLM also reads {benchmark}'s processor and tokenizer files, which are not written here; "
            "bench/multimodal_model_folders.py writes a complete folder",
            err=True,
        )
