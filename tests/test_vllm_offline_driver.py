"""The `vllm` backend's driver against a deterministic stand-in for vLLM's `LLMEngine` and renderer (no GPU
here): token prompts go in at once; audio has its inputs made on several threads, handed over in issue
order, never more than the window in the engine at once, by waves for an encoder-decoder model; a sample
whose input fails fails alone."""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from harness.engines.base import Sample
from harness.engines.vllm_offline import OfflineDriver, descriptor_wave, encoder_wave
from harness.media import AudioClip
from submitter.errors import SubmitterError

CLIP = AudioClip(np.zeros(1600, dtype=np.float32), 16_000)


@dataclass
class Completion:
    token_ids: list[int]


@dataclass
class Output:
    request_id: str
    finished: bool
    outputs: list[Completion]


@dataclass
class StandInEngine:
    """`LLMEngine` as the driver uses it. Each step finishes the two oldest requests, answering each with
    its request id as the one token; it records what was added, how many before each step, and the most
    requests it held at once."""

    added: list[tuple[str, Any]] = field(default_factory=list)
    added_before_step: list[int] = field(default_factory=list)
    most_at_once: int = 0
    fail_on_step: int | None = None
    _running: deque[str] = field(default_factory=deque)
    _steps: int = 0

    def add_request(self, request_id: str, prompt: Any, params: Any) -> None:
        self.added.append((request_id, prompt))
        self._running.append(request_id)
        self.most_at_once = max(self.most_at_once, len(self._running))

    def has_unfinished_requests(self) -> bool:
        return bool(self._running)

    def step(self) -> list[Output]:
        self.added_before_step.append(len(self.added) - sum(self.added_before_step))
        self._steps += 1
        if self._steps == self.fail_on_step:
            raise RuntimeError("CUDA error: an illegal memory access was encountered")
        finished = [self._running.popleft() for _ in range(min(2, len(self._running)))]
        return [Output(request_id, True, [Completion([int(request_id)])]) for request_id in finished]


class StandInRenderer:
    """vLLM's renderer as the driver uses it: `render_cmpl([prompt])` gives the engine's input. Like vLLM's,
    it loads the model's processor when it makes its first input, and each input begun before that load is
    done loads another (`processor_loads`); the first load waits a moment for one. Inputs two and three
    wait for each other, so they are made only if two threads make inputs at once."""

    def __init__(self, failing: int | None = None) -> None:
        self.failing = failing
        self.threads: set[str] = set()
        self.processor_loads = 0
        self._loaded = False
        self._another_begun = threading.Event()
        self._together = threading.Barrier(2, timeout=30)
        self._made = 0
        self._lock = threading.Lock()

    def render_cmpl(self, prompts: Sequence[Any]) -> list[Any]:
        (prompt,) = prompts
        with self._lock:
            self._made += 1
            order = self._made
            loading = not self._loaded
            self.processor_loads += loading
        if order > 1:
            self._another_begun.set()
        if order == 1:
            self._another_begun.wait(timeout=0.2)
        if loading:
            self._loaded = True
        if order in (2, 3):
            self._together.wait()
        self.threads.add(threading.current_thread().name)
        if prompt["sample"] == self.failing:
            raise ValueError(f"clip {self.failing} is not 16 kHz mono")
        return [{"made from": prompt["sample"]}]


class Answers:
    def __init__(self) -> None:
        self.tokens: dict[int, list[int]] = {}
        self.failed: dict[int, str] = {}

    def first_token(self, sample_id: int, token_ids: Sequence[int]) -> None: ...

    def complete(self, sample_id: int, token_ids: Sequence[int]) -> None:
        assert sample_id not in self.tokens, f"sample {sample_id} answered twice"
        self.tokens[sample_id] = list(token_ids)

    def fail(self, sample_id: int, reason: str) -> None:
        self.failed[sample_id] = reason


def drive(
    engine: StandInEngine,
    batches: Sequence[Sequence[Sample]],
    renderer: Any,
    workers: int | None,
    window: int,
    wave: int | None = None,
) -> tuple[OfflineDriver, Answers]:
    answers = Answers()
    driver = OfflineDriver(
        engine,
        params=lambda sample: None,
        prompt_for=lambda sample: {"sample": sample.id},
        renderer=renderer,
        workers=workers,
        window=window,
        wave=wave,
    )
    incoming: queue.Queue[Any] = queue.Queue()
    for batch in batches:
        incoming.put((batch, answers))
    incoming.put(None)
    driver.run(incoming)
    return driver, answers


def audio_samples(ids: range) -> list[Sample]:
    return [Sample(id=n, index=n, prompt=[50258, 50259], media=CLIP) for n in ids]


def test_token_prompts_go_to_the_engine_at_once_as_they_are() -> None:
    engine = StandInEngine()
    samples = [Sample(id=n, index=n, prompt=[1, 2, 3]) for n in range(40)]
    driver, answers = drive(engine, [samples], StandInRenderer(), workers=4, window=8)
    assert driver.failure is None
    assert answers.tokens == {n: [n] for n in range(40)}
    assert engine.added == [(str(n), {"sample": n}) for n in range(40)]  # not rendered
    assert engine.most_at_once == 40  # no window for token prompts


def test_audio_inputs_are_made_on_several_threads_and_handed_over_in_order_within_the_window() -> None:
    engine = StandInEngine()
    renderer = StandInRenderer()
    batches = [audio_samples(range(0, 50)), audio_samples(range(50, 120))]
    driver, answers = drive(engine, batches, renderer, workers=3, window=6)
    assert driver.failure is None and not answers.failed
    assert answers.tokens == {n: [n] for n in range(120)}
    assert engine.added == [(str(n), {"made from": n}) for n in range(120)]
    assert engine.most_at_once <= 6
    assert len(renderer.threads) >= 2 and all(name.startswith("vllm-renderer") for name in renderer.threads)
    assert renderer.processor_loads == 1  # the first input was made alone


def test_an_encoder_decoder_engine_gets_its_requests_by_whole_waves_with_none_waiting() -> None:
    engine = StandInEngine()
    batches = [audio_samples(range(0, 33)), audio_samples(range(33, 61))]
    driver, answers = drive(engine, batches, StandInRenderer(), workers=2, window=12, wave=5)
    assert driver.failure is None and answers.tokens == {n: [n] for n in range(61)}
    assert engine.added == [(str(n), {"made from": n}) for n in range(61)]
    waves = [added for added in engine.added_before_step if added]
    assert sum(waves) == 61 and len(waves) < 61 / 5
    assert all(added >= 5 for added in waves[:-1]), waves  # the last may be the samples left
    assert engine.most_at_once <= 12


def test_the_wave_is_an_eighth_of_the_batch_for_encoder_decoder_models_unless_the_descriptor_says() -> None:
    whisper = SimpleNamespace(model_config=SimpleNamespace(is_encoder_decoder=True))
    llama = SimpleNamespace(model_config=SimpleNamespace(is_encoder_decoder=False))
    assert encoder_wave(whisper, None, max_num_seqs=256) == 32
    assert encoder_wave(whisper, None, max_num_seqs=4) == 1
    assert encoder_wave(whisper, descriptor_wave({"encoder_wave": 10}), max_num_seqs=256) == 10
    assert encoder_wave(whisper, descriptor_wave({"encoder_wave": 0}), max_num_seqs=256) is None
    assert encoder_wave(llama, descriptor_wave({}), max_num_seqs=256) is None
    assert encoder_wave(SimpleNamespace(), None, max_num_seqs=256) is None


@pytest.mark.parametrize("value", ["32", 2.5, -1, True, None])
def test_a_wave_that_is_not_a_whole_number_of_places_is_refused_by_name(value: Any) -> None:
    with pytest.raises(SubmitterError, match=r"engine_args\.encoder_wave is .*a whole number, or 0"):
        descriptor_wave({"encoder_wave": value})


def test_a_sample_whose_input_cannot_be_made_fails_alone() -> None:
    engine = StandInEngine()
    renderer = StandInRenderer(failing=7)
    driver, answers = drive(engine, [audio_samples(range(20))], renderer, workers=2, window=4)
    assert driver.failure is None
    assert set(answers.failed) == {7} and "clip 7 is not 16 kHz mono" in answers.failed[7]
    assert set(answers.tokens) == set(range(20)) - {7}


def test_without_renderer_workers_audio_goes_in_as_issued() -> None:
    engine = StandInEngine()
    driver, answers = drive(engine, [audio_samples(range(30))], StandInRenderer(), workers=None, window=4)
    assert driver.failure is None and set(answers.tokens) == set(range(30))
    assert engine.added == [(str(n), {"sample": n}) for n in range(30)]  # vLLM makes the inputs itself
    assert engine.most_at_once == 30


def test_an_engine_failure_fails_every_sample_not_yet_answered() -> None:
    engine = StandInEngine(fail_on_step=3)
    driver, answers = drive(engine, [audio_samples(range(40))], StandInRenderer(), workers=2, window=8)
    assert isinstance(driver.failure, RuntimeError)
    assert 0 < len(answers.tokens) <= 4  # two steps of at most two
    assert all(tokens == [n] for n, tokens in answers.tokens.items())
    assert set(answers.tokens) | set(answers.failed) == set(range(40))
    assert all("illegal memory access" in reason for reason in answers.failed.values())
