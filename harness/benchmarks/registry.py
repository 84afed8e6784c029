"""The benchmark plug-ins: which package runs a benchmark (the round pack says), and what each must define."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import Protocol, cast

from harness.benchmarks.scoring import AccuracyWriter
from harness.prompts import Prompts
from submitter.errors import UsageProblem
from submitter.rounds.models import BenchmarkRules, GenerationRules


class BenchmarkPlugin(Protocol):
    """What `harness.benchmarks.<name>` defines (module-level names)."""

    # The files `write_accuracy` writes into a run folder: the checker's input first.
    ACCURACY_FILES: tuple[str, ...]
    # The dataset file's suffix in the reference's format (".json", ".pkl").
    DATASET_SUFFIX: str

    def load_samples(self, path: Path, *, limit: int | None, max_input_tokens: int | None) -> Prompts:
        """The dataset's first `limit` samples as requests; a bad file is a UsageProblem naming the record."""
        ...

    def synthesize_records(
        self, count: int, generation: GenerationRules, seed: int
    ) -> list[dict[str, object]]:
        """Records in the dataset's real format with the real length profile."""
        ...

    def write_dataset(self, path: Path, records: list[dict[str, object]]) -> None:
        """Records in the file format the reference reads, written atomically."""
        ...

    def write_demo_model(self, directory: Path, records: list[dict[str, object]], max_tokens: int) -> Path:
        """A tokenizer and the synthetic engine's answers to `records`, scoring as passing."""
        ...

    # Score a run's accuracy log as the reference does; writes ACCURACY_FILES beside it
    # (`scoring.accuracy_writer` makes one from the benchmark's evaluator).
    write_accuracy: AccuracyWriter

    # Optional: what samples carry besides token ids, "audio" or "image" (harness.media); absent: text.
    # SAMPLE_MEDIA: str
    # Optional: numpy's name for one element of a logged response; absent: "int32" (token ids).
    # RESPONSE_DTYPE: str
    # Optional, for samples whose prompt the engine renders from their media (no token ids): each prompt's
    # tokens in the engine, counted with the model folder's files; None where they do not say.
    # def engine_prompt_lengths(prompts: Prompts, model: Path | None) -> tuple[int, ...] | None: ...


_REQUIRED = (
    "ACCURACY_FILES",
    "DATASET_SUFFIX",
    "load_samples",
    "synthesize_records",
    "write_dataset",
    "write_demo_model",
    "write_accuracy",
)


def benchmark_plugin(rules: BenchmarkRules) -> BenchmarkPlugin:
    """The plug-in the round pack names for a benchmark; a benchmark without one is checked, never run."""
    if rules.plugin is None:
        raise UsageProblem(
            f"the harness does not run {rules.name}: its round pack names no plug-in "
            "(submitter checks, stages and reports its results all the same)"
        )
    return load_plugin(rules.plugin)


def sample_media(plugin: BenchmarkPlugin) -> str | None:
    """ "audio" or "image" for plug-ins whose samples carry them; None for text benchmarks."""
    return getattr(plugin, "SAMPLE_MEDIA", None)


def mean_prompt_tokens(plugin: BenchmarkPlugin, prompts: Prompts, model: Path | None) -> float | None:
    """The mean prompt's tokens in the engine: its token ids', or the plug-in's count where the engine
    renders the prompt from the sample's media; None where that count needs what `model` lacks."""
    count = getattr(plugin, "engine_prompt_lengths", None)
    if count is None:
        return prompts.mean_length
    lengths = count(prompts, model)
    return sum(lengths) / len(lengths) if lengths else None


def response_dtype(plugin: BenchmarkPlugin) -> str:
    """How the plug-in's responses are logged, element by element (TEST01 compares first elements)."""
    return getattr(plugin, "RESPONSE_DTYPE", "int32")


def load_plugin(name: str) -> BenchmarkPlugin:
    module: ModuleType = importlib.import_module(f"{__package__}.{name}")
    missing = [attribute for attribute in _REQUIRED if not hasattr(module, attribute)]
    if missing:
        raise TypeError(f"benchmark plug-in {module.__name__} lacks {', '.join(missing)}")
    return cast(BenchmarkPlugin, module)
