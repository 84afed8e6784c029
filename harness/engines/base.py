"""The one protocol every engine implements, and the types that cross it.

The LoadGen glue (`harness.sut`) hands samples to an engine and hears back through `CompletionEvents`;
it never imports an engine's library. An engine reports only token ids its model produced.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from harness.media import Media
from submitter.rounds.models import GenerationRules
from submitter.systems.descriptor import ClusterSetup


@dataclass(frozen=True, slots=True)
class Sample:
    """One LoadGen query sample: LoadGen's response id, the dataset index, and the prompt's token ids."""

    id: int
    index: int
    prompt: Sequence[int]
    # The reference answer's length where the dataset has it: what a dummy-weight run generates.
    reference_output_tokens: int | None = None
    # Audio or images beside (or, for a chat, instead of) the prompt ids.
    media: Media | None = None


class Generation(BaseModel):
    """How every sample is generated: the benchmark's sampling rules (greedy, bounded length), as sent to
    engine worker processes (pydantic, JSON); the pack's `GenerationRules` are the source."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_tokens: int
    min_tokens: int
    eos_token_id: int
    temperature: float = 0.0
    top_k: int = 1
    top_p: float = 1.0
    seed: int = 42
    # Dummy-weight timing runs ignore EOS: each sample runs to its reference answer's length where the
    # dataset gives it, else to max_tokens.
    ignore_eos: bool = False

    def tokens_for(self, sample: Sample) -> int | None:
        """The exact output length a dummy-weight run gives this sample; None: the model decides."""
        if not self.ignore_eos or sample.reference_output_tokens is None:
            return None
        return max(self.min_tokens, min(sample.reference_output_tokens, self.max_tokens))

    @classmethod
    def of(
        cls, rules: GenerationRules, *, ignore_eos: bool = False, max_tokens: int | None = None
    ) -> Generation:
        """The round pack's generation rules as engines take them (the one place they are mapped);
        `max_tokens` where the run's mode has its own limit (gpt-oss-120b's accuracy runs)."""
        return cls(
            max_tokens=rules.max_output_tokens if max_tokens is None else max_tokens,
            min_tokens=rules.min_output_tokens,
            eos_token_id=rules.eos_token_id,
            temperature=rules.temperature,
            top_k=rules.top_k,
            top_p=rules.top_p,
            seed=rules.seed,
            ignore_eos=ignore_eos,
        )


class EngineSpec(BaseModel):
    """Everything an engine needs to build itself; `args` are the backend's own keyword arguments."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    backend: str  # a name in submitter.systems.backends.BACKENDS, checked when the engine is created
    model: str
    generation: Generation
    args: dict[str, Any] = Field(default_factory=dict)
    quantization: str | None = None
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    replicas: int = 1
    # True for Server and Interactive: the first token must be reported as soon as it exists.
    streaming: bool = False
    dummy_weights: bool = False
    # What samples carry besides token ids ("audio", "image"; harness.media): vLLM then needs the model's
    # processor and tokenizer even with dummy weights.
    media: str | None = None
    # A multi-node system's Ray cluster: every replica an actor on its nodes (engines.ray_replicas).
    cluster: ClusterSetup | None = None
    # Replica r's own CPUs on this host, as preflight placed them (harness.cpu_shares); None: shared.
    cpu_shares: tuple[tuple[int, ...], ...] | None = None
    # The engine core runs with one torch thread, from the environment (harness.cpu_shares); False where
    # the descriptor sets the threads.
    split_threads: bool = False
    # Threads that make the inputs of samples with audio or images, each with vLLM's renderer, beside the
    # engine core (harness.cpu_shares); None: vLLM makes them one at a time, as it does by default.
    renderer_workers: int | None = None

    @property
    def gpus_per_replica(self) -> int:
        return self.tensor_parallel_size * self.pipeline_parallel_size

    def build_key(self) -> dict[str, Any]:
        """What an engine is built from: everything but the sampling, which each test sets, so an engine
        built for one spec serves every spec with the same key."""
        return self.model_dump(exclude={"generation"})


class CompletionEvents(Protocol):
    """Where an engine reports progress; both calls are safe from any thread."""

    def first_token(self, sample_id: int, token_ids: Sequence[int]) -> None: ...

    def complete(self, sample_id: int, token_ids: Sequence[int]) -> None: ...

    def fail(self, sample_id: int, reason: str) -> None:
        """The sample cannot be answered; LoadGen still needs a response, so the run is marked failed."""
        ...


class Engine(Protocol):
    """An inference engine as the harness sees it.

    `start` loads the model (before LoadGen's clock runs); `submit` must return at once, because
    LoadGen calls it on its scheduling thread; `flush` means no more samples are coming; `stop`
    waits for outstanding work and frees the engine. An engine serves every test of a scenario, so
    `use_generation` sets the sampling of the tests that follow (an accuracy run may have its own
    answer length) without a restart.
    """

    def start(self) -> None: ...

    def use_generation(self, generation: Generation) -> None: ...

    def submit(self, samples: Sequence[Sample], events: CompletionEvents) -> None: ...

    def flush(self) -> None: ...

    def stop(self) -> None: ...

    def versions(self) -> dict[str, str]:
        """Versions of the libraries behind the engine, for run.json."""
        ...
