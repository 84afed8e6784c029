"""mixtral-8x7b's answers as its reference hands them to LoadGen: trailing EOS and padding removed, code
answers cut after their closing fence; other benchmarks' answers are left as the engine made them."""

from __future__ import annotations

from pathlib import Path

from harness.benchmarks.mixtral_8x7b.dataset import CODE_STOP_IDS, finish_answer, load_samples, write_dataset
from harness.benchmarks.mixtral_8x7b.synthetic import synthesize_records
from submitter.rounds.registry import load_round

FENCE = CODE_STOP_IDS


def test_trailing_eos_and_padding_go_from_every_answer() -> None:
    assert finish_answer(frozenset(), 0, [5, 6, 2, 2, 0]) == [5, 6]
    assert finish_answer(frozenset(), 0, [2, 5, 2]) == [2, 5]  # only the trailing run
    assert finish_answer(frozenset(), 0, [2, 0]) == []


def test_a_code_answer_ends_with_its_first_closing_fence() -> None:
    answer = [7, 8, *FENCE, 9, 10, *FENCE, 11]
    assert finish_answer(frozenset({3}), 3, answer) == [7, 8, *FENCE]
    assert finish_answer(frozenset({3}), 4, answer) == answer  # not a code sample
    assert finish_answer(frozenset({3}), 3, [7, *FENCE[:3]]) == [7, *FENCE[:3]]  # no whole fence


def test_the_loaded_samples_know_which_are_code(tmp_path: Path) -> None:
    generation = load_round("v6.0").benchmark("mixtral-8x7b").generation
    assert generation is not None
    records = synthesize_records(9, generation, seed=3)
    write_dataset(tmp_path / "mixtral.pkl", records)
    prompts = load_samples(tmp_path / "mixtral.pkl")
    assert prompts.finish is not None
    code = [index for index, record in enumerate(records) if record["dataset"] == "MBXP"]
    prose = [index for index, record in enumerate(records) if record["dataset"] != "MBXP"]
    assert code and prose
    assert prompts.finish(code[0], [1, *FENCE, 1]) == [1, *FENCE]
    assert prompts.finish(prose[0], [1, *FENCE, 1]) == [1, *FENCE, 1]
