"""A deterministic engine without a GPU, timed like a real one, for demos and tests.

Timing model (a continuous-batching engine): `max_num_seqs` slots; a sample waits for a free slot, then
its first token comes `time_to_first_token_ms` (plus its prompt length over `prefill_tokens_per_second`,
if given) later, and each further token one decode step later. Every time is fixed when the sample
arrives, and a timer thread fires the events, so a 600-second run costs little CPU.

The decode step takes one of two forms:
- throughput: `max_num_seqs / tokens_per_second`, so a full engine produces `tokens_per_second`;
- memory-bound, like a GPU's (`step_weights_ms` and `step_kv_ms_per_sequence`): reading the weights
  once, plus the KV cache of every running sequence. More sequences raise the throughput with
  diminishing returns and lengthen every token (TPOT).
It responds to vLLM's arguments of the same names, so `submitter tune-engine` can be tested on it:
`kv_cache_sequences` sequences' KV cache fits (at 16 bits; beyond it further slots wait), and
`kv_cache_dtype` "fp8..." halves the cache's reads and doubles what fits; `start_s` is the time a GPU
engine takes to load and compile before the first test; `max_num_batched_tokens`
takes a prompt in chunks, each costing a decode step before the first token; `async_scheduling` false
adds `scheduling_ms` of CPU work to every step, which vLLM otherwise overlaps with the GPU's.

Outputs are `output_tokens` ids (default: the benchmark's max_tokens) drawn from a generator seeded
with the sample's dataset index: the same sample always gets the same answer. When the model directory
holds answers.json (a demo model from `submitter data synth --demo-model`), each sample gets its answer
from there instead, so that evaluation has real text to score.
"""

from __future__ import annotations

import heapq
import itertools
import json
import math
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from harness.engines.base import CompletionEvents, EngineSpec, Generation, Sample
from harness.stand_in_models import DEMO_ANSWERS, prompt_key
from submitter.errors import SubmitterError

# Ordinary vocabulary ids of Llama 3 (special tokens start at 128000).
_VOCABULARY = range(1000, 120000)


class SyntheticArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tokens_per_second: float | None = Field(
        default=None, gt=0, description="output tokens/s with every slot busy (default 5000)"
    )
    max_num_seqs: int = Field(default=128, gt=0, description="sequences generated at once")
    time_to_first_token_ms: float = Field(default=50.0, ge=0)
    prefill_tokens_per_second: float | None = Field(default=None, gt=0)
    output_tokens: int | None = Field(default=None, ge=2, description="tokens per answer; default max_tokens")
    # The memory-bound step, instead of tokens_per_second.
    step_weights_ms: float | None = Field(default=None, gt=0, description="a step's fixed part")
    step_kv_ms_per_sequence: float | None = Field(
        default=None, gt=0, description="a step's part per running sequence, 16-bit KV cache"
    )
    kv_cache_sequences: int | None = Field(
        default=None, gt=0, description="sequences whose 16-bit KV cache fits; default: all"
    )
    scheduling_ms: float = Field(default=0.0, ge=0, description="CPU time per step, hidden when async")
    start_s: float = Field(
        default=0.0, ge=0, description="seconds to start, as a GPU engine loads and compiles"
    )
    # vLLM's arguments of these names.
    kv_cache_dtype: str = "auto"
    max_num_batched_tokens: int | None = Field(default=None, gt=0)
    async_scheduling: bool = True

    @model_validator(mode="after")
    def _one_step_model(self) -> SyntheticArgs:
        memory_bound = (self.step_weights_ms, self.step_kv_ms_per_sequence)
        if any(part is not None for part in memory_bound) and (
            None in memory_bound or self.tokens_per_second is not None
        ):
            raise ValueError(
                "the memory-bound step needs step_weights_ms and step_kv_ms_per_sequence, "
                "and no tokens_per_second"
            )
        if self.kv_cache_dtype != "auto" and not self.kv_cache_dtype.startswith("fp8"):
            raise ValueError(f"kv_cache_dtype {self.kv_cache_dtype!r}: use auto or fp8")
        return self

    @property
    def running_sequences(self) -> int:
        """Slots that run at once: max_num_seqs, unless the KV cache holds fewer."""
        if self.kv_cache_sequences is None:
            return self.max_num_seqs
        fits = self.kv_cache_sequences * (2 if self._fp8_cache else 1)
        return min(self.max_num_seqs, fits)

    @property
    def step_s(self) -> float:
        """One decode step, with every slot running."""
        if self.step_weights_ms is not None and self.step_kv_ms_per_sequence is not None:
            kv_ms = self.step_kv_ms_per_sequence * (0.5 if self._fp8_cache else 1.0)
            step_ms = self.step_weights_ms + self.running_sequences * kv_ms
        else:
            step_ms = 1000 * self.max_num_seqs / (self.tokens_per_second or 5000.0)
        if not self.async_scheduling:
            step_ms += self.scheduling_ms
        return step_ms / 1000

    @property
    def _fp8_cache(self) -> bool:
        return self.kv_cache_dtype.startswith("fp8")


@dataclass(order=True, slots=True)
class _Event:
    due: float
    order: int
    first_token: bool = field(compare=False)
    sample: Sample = field(compare=False)
    events: CompletionEvents = field(compare=False)


class _DemoAnswers:
    """A demo model's answers.json: a list (the answer to each dataset index), or {"by_prompt": {key: ids}}
    for benchmarks whose modes read different dataset files (keys: `prompt_key` of the prompt's ids)."""

    def __init__(self, path: Path, max_tokens: int) -> None:
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise SubmitterError(
                f"{path} cannot be read as a demo model's answers ({exc}); write the demo model again "
                "with `submitter data synth --demo-model`"
            ) from None
        self._by_prompt = isinstance(stored, dict)
        answers = stored["by_prompt"] if self._by_prompt else dict(enumerate(stored))
        # At least two tokens each: LoadGen's token latencies need them.
        self._answers = {
            key: (answer if len(answer) >= 2 else [*answer, 0, 0][:2])[:max_tokens]
            for key, answer in answers.items()
        }

    def __call__(self, sample: Sample) -> list[int]:
        key = prompt_key(sample.prompt, sample.media) if self._by_prompt else sample.index
        return self._answers[key]


def _demo_answers(model_dir: Path, max_tokens: int) -> _DemoAnswers | None:
    path = model_dir / DEMO_ANSWERS
    return _DemoAnswers(path, max_tokens) if path.is_file() else None


def answer_tokens(index: int, length: int) -> list[int]:
    """The synthetic model's answer for a dataset index: `length` ordinary token ids."""
    draw = random.Random(index)
    return [draw.choice(_VOCABULARY) for _ in range(length)]


class SyntheticEngine:
    def __init__(self, spec: EngineSpec, clock: Callable[[], float] = time.monotonic) -> None:
        args = SyntheticArgs.model_validate(spec.args)
        self._output_tokens = args.output_tokens
        self._start_s = args.start_s
        self._model_dir = Path(spec.model)
        self._streaming = spec.streaming
        self.use_generation(spec.generation)
        self._ttft = args.time_to_first_token_ms / 1000
        self._prefill_rate = args.prefill_tokens_per_second
        self._chunk = args.max_num_batched_tokens
        self._step = args.step_s
        self._slots_free_at = [0.0] * args.running_sequences
        self._clock = clock
        self._pending: list[_Event] = []
        self._order = itertools.count()
        self._wake = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._fire_events, name="synthetic-engine", daemon=True)

    def start(self) -> None:
        time.sleep(self._start_s)
        self._thread.start()
        # Its log, as a GPU engine logs to stdout (harness.engine_log keeps it).
        print(
            f"synthetic engine: {len(self._slots_free_at)} sequence(s) at once, model {self._model_dir}",
            flush=True,
        )

    def use_generation(self, generation: Generation) -> None:
        self._length = min(max(self._output_tokens or generation.max_tokens, 2), generation.max_tokens)
        self._answers = _demo_answers(self._model_dir, generation.max_tokens)

    def submit(self, samples: Sequence[Sample], events: CompletionEvents) -> None:
        now = self._clock()
        with self._wake:
            for sample in samples:
                begins = max(now, heapq.heappop(self._slots_free_at))
                first = begins + self._ttft
                if self._prefill_rate:
                    first += len(sample.prompt) / self._prefill_rate
                if self._chunk:  # each chunk but the last shares a step with the running sequences
                    first += max(math.ceil(len(sample.prompt) / self._chunk) - 1, 0) * self._step
                done = first + (len(self._answer(sample)) - 1) * self._step
                heapq.heappush(self._slots_free_at, done)
                if self._streaming:
                    self._push(first, True, sample, events)
                self._push(done, False, sample, events)
            self._wake.notify()

    def _answer(self, sample: Sample) -> list[int]:
        if self._answers is not None:
            return self._answers(sample)
        return answer_tokens(sample.index, self._length)

    def _push(self, due: float, first_token: bool, sample: Sample, events: CompletionEvents) -> None:
        heapq.heappush(self._pending, _Event(due, next(self._order), first_token, sample, events))

    def flush(self) -> None:
        """Nothing is batched, so there is nothing to push out."""

    def stop(self) -> None:
        with self._wake:
            self._stopping = True
            self._wake.notify()
        if self._thread.is_alive():
            self._thread.join()

    def versions(self) -> dict[str, str]:
        return {}

    def _fire_events(self) -> None:
        while True:
            with self._wake:
                while True:
                    now = self._clock()
                    if self._pending and self._pending[0].due <= now:
                        break
                    if self._stopping and not self._pending:
                        return
                    self._wake.wait(self._pending[0].due - now if self._pending else None)
                due: list[_Event] = []
                while self._pending and self._pending[0].due <= now:
                    due.append(heapq.heappop(self._pending))
            for event in due:
                tokens = self._answer(event.sample)
                if event.first_token:
                    event.events.first_token(event.sample.id, tokens[:1])
                else:
                    event.events.complete(event.sample.id, tokens)
