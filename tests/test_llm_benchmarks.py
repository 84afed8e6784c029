"""The pickled-dataset LLM plug-ins (llama2-70b, mixtral-8x7b, llama3.1-405b) against the reference
evaluators' semantics, on small real-format sample sets built here by hand.

Each set is a pandas pickle with the reference's columns (written by the plug-in's `write_dataset`), a demo
tokenizer over the answers chosen here, and an accuracy log in LoadGen's format (int32 little-endian ids in
hex, a repeated sample, an answer ending in EOS). The expected numbers are computed here on their own, from
the answer texts as written (not decoded by the product), with rouge-score, nltk and pandas directly:
- llama2-70b: first answer per sample, ROUGE-1/2/L/Lsum of stripped one-sentence-per-line texts, each mean
  x 100 rounded to 4 places by numpy, gen_len the characters of those answers, tokens per sample to 1 place;
- mixtral-8x7b: gen_num counts every log entry (repeats too); OpenOrca ROUGE, GSM8K's number, MBXP's
  programs (right or wrong by construction, so the score is known without running them);
- llama3.1-405b: each sample by its `metric`, the means of pandas' `describe()` over per-sample dicts, in
  the order the keys first appear.
"""

from __future__ import annotations

import ast
import json
import os
import pickle
import re
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import nltk
import numpy as np
import pandas as pd
import pytest
from rouge_score.rouge_scorer import RougeScorer
from tokenizers import Tokenizer

from harness.benchmarks import llama2_70b, llama3_1_405b, mixtral_8x7b
from harness.benchmarks.demo_text import write_text_demo_model
from harness.benchmarks.mixtral_8x7b.mbxp import missing_toolchains, problem_from_sample, score_mbxp
from submitter.errors import UsageProblem
from submitter.evaluation.verdicts import AccuracyReport
from submitter.fileformats.accuracy_txt import parse_accuracy_txt
from submitter.rounds.models import BenchmarkRules
from submitter.rounds.registry import load_round

nltk.data.path.insert(0, str(Path(__file__).resolve().parents[1] / "submitter" / "evaluation" / "nltk_data"))

RULES = load_round("v6.0")
PATTERNS = RULES.accuracy_patterns
EOS = 2  # </s> in Llama 2's and Mixtral's vocabularies, and in the demo tokenizer
ROUGE_KEYS = ("rouge1", "rouge2", "rougeL", "rougeLsum")
# The round's metric names -> the printed keys they read.
PRINTED_KEY = {
    "ROUGE1": "rouge1",
    "ROUGE2": "rouge2",
    "ROUGEL": "rougeL",
    "ROUGELSUM": "rougeLsum",
    "TOKENS_PER_SAMPLE": "tokens_per_sample",
    "GEN_LEN": "gen_len",
    "gsm8k_accuracy": "gsm8k",
    "mbxp_accuracy": "mbxp",
    "exact_match": "exact_match",
}

# Hand-written text: abbreviations, quotes, numbers with commas and decimals, questions, exclamations.
SENTENCES = (
    "The Amazon rainforest produces a large share of the world's oxygen, although estimates vary widely.",
    "Dr. Rivera moved to the U.S. in 2019 and started teaching biology at a small college.",
    "Why do leaves change colour in autumn?",
    "As the days get shorter, chlorophyll breaks down and the yellow and orange pigments show through!",
    "Water boils at 100 degrees Celsius at sea level; on a mountain it boils at a lower temperature.",
    "The recipe calls for 2.5 cups of flour, three eggs, and a pinch of salt.",
    "In 1969, Apollo 11 landed on the Moon, and Neil Armstrong became the first person to walk there.",
    'She said, "We will finish the report by Friday," but the deadline moved to Monday.',
    "Photosynthesis turns light, water and carbon dioxide into sugar and oxygen.",
    "Most bridges expand slightly in summer heat, so engineers leave small gaps called expansion joints.",
    "The committee voted 7-2 to approve the new budget (after a long debate).",
    "Is it safe to swim after eating?",
    "Doctors say there is little evidence that a full stomach causes cramps in the water.",
    "A healthy adult needs about seven to nine hours of sleep each night.",
    'The translation of "bonjour" is "hello", and it is used all day in France.',
    "Mt. Everest is 8,849 metres tall, according to a survey published in 2020.",
    "Therefore, the correct option is B: the statement is false.",
    "Bees communicate the location of flowers through a movement known as the waggle dance.",
    "Prices rose by 3.2% last year, which was the largest increase in a decade.",
    "First, read the question carefully; then, eliminate the answers that are clearly wrong.",
    "The museum opens at 9 a.m. on weekdays and closes early on public holidays.",
    "Sound travels faster in water than in air, about 1,480 metres per second.",
    "Finally, the author argues that small habits, repeated daily, lead to lasting change.",
    "Can machines think?",
)


def passage(start: int, count: int, step: int = 1) -> str:
    return " ".join(SENTENCES[(start + step * k) % len(SENTENCES)] for k in range(count))


def prompt_ids(number: int, length: int, bos: int = 1) -> list[int]:
    return [bos, *range(1000 + 37 * number, 1000 + 37 * number + length - 1)]


# ---------------------------------------------------------------------------------------------------
# The accuracy log, the printed result and the verdicts


@dataclass(frozen=True)
class Logged:
    """One accuracy-log entry: the sample, the answer's text, and whether the model's EOS ends it."""

    qsl_idx: int
    text: str
    eos: bool = False


def write_log(run_dir: Path, model_dir: Path, entries: Sequence[Logged]) -> list[list[int]]:
    """mlperf_log_accuracy.json as LoadGen writes it; each entry's ids, in log order."""
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    records, logged_ids = [], []
    for number, entry in enumerate(entries):
        ids = tokenizer.encode(entry.text).ids + ([EOS] if entry.eos else [])
        assert 0 not in ids, f"{entry.text!r} has a piece outside the demo vocabulary"
        logged_ids.append(ids)
        records.append(
            {
                "seq_id": 4000 + number,
                "qsl_idx": entry.qsl_idx,
                "data": struct.pack(f"<{len(ids)}i", *ids).hex().upper(),
                "token_count": len(ids),
            }
        )
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "mlperf_log_accuracy.json").write_text(json.dumps(records), encoding="utf-8")
    return logged_ids


def first_answers(entries: Sequence[Logged], logged_ids: Sequence[list[int]]) -> dict[int, tuple[str, int]]:
    """qsl_idx -> (answer text, tokens logged) of each sample's first entry, in log order."""
    kept: dict[int, tuple[str, int]] = {}
    for entry, ids in zip(entries, logged_ids, strict=True):
        if entry.qsl_idx not in kept:
            kept[entry.qsl_idx] = (entry.text, len(ids))
    return kept


def sentence_lines(text: str) -> str:
    return "\n".join(nltk.sent_tokenize(text.strip()))


def rouge_means(pairs: Sequence[tuple[str, str]]) -> tuple[dict[str, float], int]:
    """(each ROUGE mean x 100 rounded by numpy to 4 places, characters of the answers) for (reference,
    answer) pairs, both stripped and one sentence per line."""
    scorer = RougeScorer(list(ROUGE_KEYS), use_stemmer=True)
    table = np.zeros((len(ROUGE_KEYS), len(pairs)))
    characters = 0
    for column, (reference, answer) in enumerate(pairs):
        prediction = sentence_lines(answer)
        characters += len(prediction)
        scores = scorer.score(sentence_lines(reference), prediction)
        for row, key in enumerate(ROUGE_KEYS):
            table[row, column] = scores[key].fmeasure
    means = {
        key: float(np.round(np.mean(table[row].tolist()) * 100, 4)) for row, key in enumerate(ROUGE_KEYS)
    }
    return means, characters


def printed_result(run_dir: Path) -> dict[str, object]:
    """accuracy.txt's result block, as the reference prints it: a blank line, Results, a blank line, the
    dict."""
    text = (run_dir / "accuracy.txt").read_text(encoding="utf-8")
    header = "\nResults\n\n"
    assert text.startswith(header) and text.endswith("\n") and text.count("\n") == 4
    return ast.literal_eval(text[len(header) :].strip())


def assert_printed(run_dir: Path, expected: dict[str, object]) -> None:
    got = printed_result(run_dir)
    assert list(got) == list(expected)  # the reference's key order
    assert got == expected
    assert repr(got) == repr(expected)  # ints stay ints, floats print alike


def assert_verdicts(
    run_dir: Path,
    report: AccuracyReport,
    benchmark: BenchmarkRules,
    expected: dict[str, float],
    failing: set[tuple[str, str]],
    evaluators_own: dict[tuple[str, str], bool] | None = None,
) -> None:
    """The checker's patterns read the printed values, and every target and upper limit is judged as the
    round says; `failing` names the (metric, ">=" or "<=") bounds this case was built to miss;
    `evaluators_own`: the evaluator's verdicts beside the round's, and whether each passes."""
    parsed = parse_accuracy_txt((run_dir / "accuracy.txt").read_text(encoding="utf-8"), "acc", PATTERNS)
    own: dict[tuple[str, str], bool] = {}
    for sign, bounds in ((">=", benchmark.accuracy.targets), ("<=", benchmark.accuracy.upper_limits)):
        for bound in bounds:
            value = expected[PRINTED_KEY[bound.metric]]
            assert float(parsed.values[bound.metric].raw) == value
            limit = bound.reference * bound.factor
            own[(bound.metric, sign)] = value >= limit if sign == ">=" else value <= limit
    assert {key for key, passed in own.items() if not passed} == failing
    judged = {(v.metric, v.bound.split()[0]): v.passed for v in report.verdicts}
    extra = evaluators_own or {}
    assert judged == own | extra
    assert report.passed is (not failing and all(extra.values()))
    saved = json.loads((run_dir / "accuracy.json").read_text(encoding="utf-8"))
    assert [(v["metric"], v["passed"]) for v in saved["verdicts"]] == [
        (v.metric, v.passed) for v in report.verdicts
    ]


# ---------------------------------------------------------------------------------------------------
# llama2-70b

LLAMA2_SYSTEM = "You are an AI assistant. You will be given a task. You must generate a detailed answer."
LLAMA2_SAMPLES = 12
LLAMA2_EMPTY = 5  # the sample whose answer is only EOS


def llama2_reference(number: int) -> str:
    return passage(3 * number, 12)


def llama2_answer(number: int) -> str:
    """Most of the reference, one sentence swapped for another and one word changed: a good answer."""
    sentences = [SENTENCES[(3 * number + k) % len(SENTENCES)] for k in range(12)]
    sentences[4] = SENTENCES[(3 * number + 13) % len(SENTENCES)]
    text = " ".join(sentences[:-1]).replace(" the ", " a ", 1)
    return f"\n  {text} " if number == 3 else text  # white space that the post-processing strips


def llama2_records() -> list[dict[str, object]]:
    records = []
    for number in range(LLAMA2_SAMPLES):
        origin = ("cot", "flan", "niv", "t0")[number % 4]
        question = f"Summarise the following facts in your own words ({number})."
        tok_input = [*prompt_ids(number, 40 + 9 * number), 29871]
        output = llama2_reference(number)
        records.append(
            {
                "id": f"{origin}.{1000 + number}",
                "system_prompt": LLAMA2_SYSTEM,
                "question": question,
                "output": output,
                "input": f"<s>[INST] <<SYS>>\n{LLAMA2_SYSTEM}\n<</SYS>>\n\n{question} [/INST]",
                "tok_input": tok_input,
                "tok_output": list(range(500, 500 + 70 + number)),
                "origin": origin,
                "tok_input_length": len(tok_input),
                "tok_output_length": 70 + number,
            }
        )
    return records


def llama2_log(padded: bool) -> list[Logged]:
    """Samples in a scrambled order; the one at LLAMA2_EMPTY answered by EOS alone, sample 7's answer ends
    with EOS, sample 2 logged twice (the perfect second answer must be ignored). `padded`: each answer said
    twice, so tokens per sample are above the upper limit."""
    entries = []
    for number in (4, 0, 9, 2, 11, 7, 1, 5, 10, 3, 8, 6):
        text = "" if number == LLAMA2_EMPTY else llama2_answer(number)
        if padded and text:
            text = f"{text} {text.strip()}"
        entries.append(Logged(number, text, eos=number in (LLAMA2_EMPTY, 7)))
    entries.insert(6, Logged(2, llama2_reference(2), eos=True))
    return entries


def expected_llama2(records: list[dict[str, object]], entries: list[Logged], ids: list[list[int]]) -> dict:
    kept = first_answers(entries, ids)
    means, characters = rouge_means([(str(records[q]["output"]), text) for q, (text, _) in kept.items()])
    tokens = sum(count for _, count in kept.values())
    return {
        **means,
        "gen_len": characters,
        "gen_num": len(kept),
        "gen_tok_len": tokens,
        "tokens_per_sample": round(tokens / len(kept), 1),
    }


@pytest.fixture(scope="module")
def llama2_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[dict[str, object]]]:
    folder = tmp_path_factory.mktemp("llama2")
    records = llama2_records()
    dataset = folder / "open_orca_gpt4_tokenized_llama.sampled_12.pkl"
    llama2_70b.write_dataset(dataset, records)
    texts = [entry.text for padded in (False, True) for entry in llama2_log(padded)]
    model = write_text_demo_model(folder / "model", texts, 1024)
    return dataset, model, records


@pytest.mark.parametrize(
    ("padded", "failing"),
    [(False, set()), (True, {("TOKENS_PER_SAMPLE", "<=")})],
    ids=["built-to-pass", "tokens-above-the-upper-limit"],
)
def test_llama2_accuracy_txt_is_the_references_result_and_judged_by_the_round(
    llama2_files, tmp_path: Path, padded: bool, failing: set[tuple[str, str]]
) -> None:
    dataset, model, records = llama2_files
    entries = llama2_log(padded)
    ids = write_log(tmp_path, model, entries)
    expected = expected_llama2(records, entries, ids)
    assert expected["gen_num"] == LLAMA2_SAMPLES  # the repeated sample counts once
    for name in ("llama2-70b-99", "llama2-70b-99.9"):
        benchmark = RULES.benchmark(name)
        report = llama2_70b.write_accuracy(tmp_path, dataset, model, benchmark, PATTERNS, workers=1)
        assert_printed(tmp_path, expected)
        assert_verdicts(tmp_path, report, benchmark, expected, failing)


def test_llama2_first_answer_wins_and_eos_is_counted_but_not_scored(llama2_files, tmp_path: Path) -> None:
    """Three samples: the empty one (EOS only) scores 0 and counts 1 token, a repeat is ignored, a trailing
    EOS counts as a token and leaves the text alone."""
    dataset, model, records = llama2_files
    entries = [
        Logged(LLAMA2_EMPTY, "", eos=True),
        Logged(7, llama2_answer(7), eos=True),
        Logged(7, llama2_reference(7)),
        Logged(1, llama2_reference(1)),
    ]
    ids = write_log(tmp_path, model, entries)
    report = llama2_70b.write_accuracy(
        tmp_path, dataset, model, RULES.benchmark("llama2-70b-99"), PATTERNS, workers=1
    )
    got = printed_result(tmp_path)
    assert got == expected_llama2(records, entries, ids)
    answer_tokens = len(ids[1])
    assert got["gen_tok_len"] == 1 + answer_tokens + len(ids[3])
    assert got["gen_len"] == len(sentence_lines(llama2_answer(7))) + len(sentence_lines(llama2_reference(1)))
    # rouge1 of (0, imperfect, perfect) / 3: below 2/3 only because sample 7's first answer is kept
    assert 100 / 3 < got["rouge1"] < 200 / 3
    assert report.result.model_dump()["gen_num"] == 3


# ---------------------------------------------------------------------------------------------------
# mixtral-8x7b

PYTHON_SUM_TEST = """

METADATA = {}


def check(candidate):
    assert candidate([1, 2, 3]) == 6
    assert candidate([]) == 0
    assert candidate([-4, 10]) == 6

"""
PYTHON_VOWELS_TEST = """

def check(candidate):
    assert candidate("education") == 5
    assert candidate("rhythm") == 0
    assert candidate("AEIOU") == 5

"""
PYTHON_SQUARE_TEST = """

def check(candidate):
    assert candidate(3) == 9
    assert candidate(-2) == 4

"""
JAVASCRIPT_MAX_TEST = """
const _ = require("lodash")

function compare(object1, object2){
    return _.isEqual(object1, object2)
}

var arg00 = 3;
var arg01 = 8;
var x0 = maxOfTwo(arg00, arg01);
var v0 = 8;
if(!compare(x0, v0)){
    throw 'Error at 1th assert statement. Value = ' + JSON.stringify(x0)
}

var arg10 = -1;
var arg11 = -5;
var x1 = maxOfTwo(arg10, arg11);
var v1 = -1;
if(!compare(x1, v1)){
    throw 'Error at 2th assert statement. Value = ' + JSON.stringify(x1)
}
"""
JAVASCRIPT_REVERSE_TEST = """
const _ = require("lodash")

function compare(object1, object2){
    return _.isEqual(object1, object2)
}

var arg00 = [1, 2, 3];
var x0 = reverseList(arg00);
var v0 = [3, 2, 1];
if(!compare(x0, v0)){
    throw 'Error at 1th assert statement. Value = ' + JSON.stringify(x0)
}
"""


@dataclass(frozen=True)
class MixtralSample:
    subset: str
    id: str
    gt_output: str
    answer: str
    # GSM8K: the number the reference takes from the answer; MBXP: whether the program passes.
    truth: str | bool | None = None


MIXTRAL_SAMPLES = (
    MixtralSample("OpenOrca", "flan.12", passage(0, 10), passage(0, 16).replace(" a ", " one ", 2)),
    MixtralSample(
        "GSM8K",
        "gsm8k_3",
        "1234",
        (
            "Each box holds 617 pencils and there are 2 boxes. 617 * 2 = 1,234. The answer is 1,234.\n"
            "Q: A farmer has 12 cows and buys 30 more. How many cows? A: 12 + 30 = 42. The answer is 42."
        ),
        "1234",
    ),
    MixtralSample(
        "MBXP",
        "python_sum_list",
        PYTHON_SUM_TEST,
        (
            "def sum_list(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total\n"
            "```\n\nThe function adds the numbers one by one."
        ),
        True,
    ),
    MixtralSample("OpenOrca", "cot.77", passage(9, 10, step=2), passage(9, 17, step=2)),
    MixtralSample(
        "GSM8K",
        "gsm8k_8",
        "18",
        "Tom had 25 apples. He gave 7 to his sister, so he has 25 - 7 = 18 apples left.",
        "18",
    ),
    MixtralSample(
        "MBXP",
        "javascript_maxOfTwo",
        JAVASCRIPT_MAX_TEST,
        "function maxOfTwo(a, b) {\n  return a > b ? a : b;\n}\n```\nThis returns the larger of the two.",
        True,
    ),
    MixtralSample(
        "GSM8K",
        "gsm8k_15",
        "41",
        "The shop sells 6 packs of 7 stickers, which is 6 * 7 = 42 stickers. The answer is 42.",
        "42",
    ),
    MixtralSample(
        "MBXP",
        "python_count_vowels",
        PYTHON_VOWELS_TEST,
        (
            # Mixtral escapes underscores; the reference unescapes them before running the code.
            'def count\\_vowels(s):\n    return sum(1 for c in s.lower() if c in "aeiou")\n```\n'
            "It counts the vowels in the text."
        ),
        True,
    ),
    MixtralSample(
        "GSM8K", "gsm8k_21", "9.5", "Half of 19 is 9.5, since 19 / 2 = 9.5. The answer is 9.5.", "9.5"
    ),
    MixtralSample(
        "MBXP",
        "javascript_reverseList",
        JAVASCRIPT_REVERSE_TEST,
        "function reverseList(xs) {\n  return xs;\n}\n```\nThis reverses the list.",
        False,
    ),
    MixtralSample("OpenOrca", "niv.5", passage(5, 10), passage(5, 14) + " " + passage(17, 2)),
    MixtralSample(
        "MBXP",
        "python_square",
        PYTHON_SQUARE_TEST,
        "\n  def square(x):\n    return x * 2\n```\nThe square of x.",
        False,
    ),
)
# A fourth GSM8K answer, wrong, for the failing case (it replaces the right one of gsm8k_8).
MIXTRAL_WRONG_GSM8K = "Tom had 25 apples and gave 7 away. The answer is 32."


def mixtral_records() -> list[dict[str, object]]:
    records = []
    for number, sample in enumerate(MIXTRAL_SAMPLES):
        question = f"Question {number} of the {sample.subset} subset."
        tok_input = prompt_ids(number, 30 + 11 * number)
        records.append(
            {
                "dataset": sample.subset,
                "id": sample.id,
                "question": question,
                "input": f"<s> [INST] {question} [/INST]",
                "ref_output": sample.answer,
                "gt_output": sample.gt_output,
                "tok_input": tok_input,
                "tok_ref_output": list(range(700, 760)),
                "stop_sequence": "</s>",
                "tok_stop_sequence": [EOS],
                "tok_input_len": len(tok_input),
                "tok_ref_output_len": 60,
            }
        )
    return records


def mixtral_log(wrong_gsm8k: bool) -> list[Logged]:
    order = (3, 0, 7, 2, 10, 5, 1, 9, 4, 11, 6, 8)
    entries = [
        Logged(
            number,
            MIXTRAL_WRONG_GSM8K if wrong_gsm8k and number == 4 else MIXTRAL_SAMPLES[number].answer,
            eos=number in (0, 5),
        )
        for number in order
    ]
    # A repeat of gsm8k_15 with a right answer (its first is wrong): counted in gen_num, never scored.
    entries.insert(
        order.index(6) + 1, Logged(6, "6 * 7 = 42, minus one returned: 41. The answer is 41.", eos=True)
    )
    return entries


def gsm8k_number(text: str) -> str:
    """The number the reference reads: before any next "\\nQ:", the first number after the last "The
    answer is", else the last number; without thousands commas."""
    text = text.split("\nQ:")[0]
    numbers = [match.group() for match in re.finditer(r"-?[\d,]*\.?\d+", text)]
    marker = text.rfind("The answer is")
    if marker >= 0:
        after = [match.group() for match in re.finditer(r"-?[\d,]*\.?\d+", text[marker + 13 :])]
        if after:
            return after[0].replace(",", "")
    return numbers[-1].replace(",", "") if numbers else ""


def expected_mixtral(entries: list[Logged], ids: list[list[int]], unscored: Sequence[str]) -> dict:
    kept = first_answers(entries, ids)
    orca, math, code = [], [], []
    for number, (text, _) in kept.items():
        sample = MIXTRAL_SAMPLES[number]
        if sample.subset == "OpenOrca":
            orca.append((sample.gt_output, text))
        elif sample.subset == "GSM8K":
            math.append(float(gsm8k_number(text)) == float(sample.gt_output) if gsm8k_number(text) else False)
        elif sample.id.split("_", 1)[0] not in unscored:
            code.append(sample.truth if text == sample.answer else None)
    means, characters = rouge_means(orca)
    assert None not in code
    tokens = sum(count for _, count in kept.values())
    return {
        **means,
        "gsm8k": 100.0 * sum(math) / len(math),
        "mbxp": 100 * sum(code) / len(code),
        "gen_len": characters,
        "gen_num": len(entries),
        "gen_tok_len": tokens,
        "tokens_per_sample": round(tokens / len(entries), 1),
    }


@pytest.fixture(scope="module")
def mixtral_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("mixtral")
    dataset = folder / "09292024_mixtral_15k_mintoken2_v1_12.pkl"
    mixtral_8x7b.write_dataset(dataset, mixtral_records())
    texts = [entry.text for wrong in (False, True) for entry in mixtral_log(wrong)]
    return dataset, write_text_demo_model(folder / "model", texts, 1024)


def test_gsm8k_answers_read_as_the_reference_reads_them() -> None:
    """The hand-made answers' numbers, written out, so the GSM8K expectations rest on more than one regex."""
    answers = {sample.id: sample.answer for sample in MIXTRAL_SAMPLES if sample.subset == "GSM8K"}
    assert {key: gsm8k_number(text) for key, text in answers.items()} == {
        "gsm8k_3": "1234",  # cut at "\nQ:": the 42 of the next question is not read
        "gsm8k_8": "18",  # no "The answer is": the last number
        "gsm8k_15": "42",  # wrong: the reference says 41
        "gsm8k_21": "9.5",
    }
    assert answers["gsm8k_3"].count("\nQ:") == 1
    assert gsm8k_number(answers["gsm8k_3"].replace("\nQ:", " Q:")) == "42"  # without the cut: the 42
    assert gsm8k_number(MIXTRAL_WRONG_GSM8K) == "32"
    math = [sample for sample in MIXTRAL_SAMPLES if sample.subset == "GSM8K"]
    assert [gsm8k_number(sample.answer) for sample in math] == [sample.truth for sample in math]


@pytest.mark.parametrize(
    ("wrong_gsm8k", "failing"),
    [(False, set()), (True, {("gsm8k_accuracy", ">=")})],
    ids=["built-to-pass", "gsm8k-below-target"],
)
def test_mixtral_accuracy_txt_is_the_references_result_and_judged_by_the_round(
    mixtral_files, tmp_path: Path, wrong_gsm8k: bool, failing: set[tuple[str, str]]
) -> None:
    dataset, model = mixtral_files
    entries = mixtral_log(wrong_gsm8k)
    ids = write_log(tmp_path, model, entries)
    missing = missing_toolchains()
    expected = expected_mixtral(entries, ids, tuple(missing))
    assert expected["gen_num"] == len(MIXTRAL_SAMPLES) + 1  # every entry, the repeat too
    benchmark = RULES.benchmark("mixtral-8x7b")
    report = mixtral_8x7b.write_accuracy(tmp_path, dataset, model, benchmark, PATTERNS, workers=2)
    assert_printed(tmp_path, expected)
    details = json.loads((tmp_path / "accuracy.json").read_text(encoding="utf-8"))["result"]["mbxp_details"]
    languages = {"python": (3, 2), "javascript": (2, 1)}
    assert details["missing_toolchains"] == {
        lang: languages[lang][0] for lang in missing if lang in languages
    }
    assert details["per_language"] == {
        lang: {"problems": problems, "passed": passed}
        for lang, (problems, passed) in languages.items()
        if lang not in missing
    }
    # Where this machine lacks node or lodash, javascript is left unscored and a verdict of its own fails.
    unscored = {("mbxp_unscored_problems", "=="): False} if "javascript" in missing else {}
    assert_verdicts(tmp_path, report, benchmark, expected, failing, unscored)


# ---------------------------------------------------------------------------------------------------
# llama3.1-405b

NEEDLE = "9b1d4e2a-7c3f-4a8e-b6d0-5e9f1c2a3b4d"
# NEEDLE with every 9 written as 8: the reference scores the share of NEEDLE's characters found anywhere in
# the answer's UUID, so the two 9s are missed and 34/36 is scored.
NEAR_NEEDLE = NEEDLE.replace("9", "8")
NEEDLE_2 = "c0ffee12-3456-4789-abcd-ef0123456789"
NEEDLE_3 = "d41d8cd9-8f00-4204-a980-0998ecf8427e"


@dataclass(frozen=True)
class Llama405Sample:
    metric: str
    gt_output: str
    right: str  # an answer that scores fully
    quirky: str  # the answer of the mixed log
    quirky_score: float | None = None  # its exact_match, worked out by hand


LLAMA405_SAMPLES = (
    Llama405Sample(
        "niah_em", NEEDLE, f"The special magic uuid is: {NEEDLE}", f"The uuid is {NEEDLE}.", 100.0
    ),
    Llama405Sample("rouge", passage(1, 8), passage(1, 52), passage(1, 7)),
    Llama405Sample(
        "qa_em", "Paris|paris, the capital", "The text says so. Answer: Paris", "Answer: Paris", 100.0
    ),
    Llama405Sample("rouge", passage(4, 8, step=5), passage(4, 52, step=5), passage(4, 9, step=5)),
    # Another needle altogether: NEAR_NEEDLE has every character of NEEDLE_2 but its two 9s, so 34/36.
    Llama405Sample("niah_em", NEEDLE_2, NEEDLE_2, f"It is {NEAR_NEEDLE}", 94.44),
    Llama405Sample(
        "qa_em",
        "Lisbon|the capital of Portugal",
        "Answer: Lisbon",
        "I think so. Answer: somewhere. Answer: The Capital of Portugal",
        100.0,
    ),
    Llama405Sample("rouge", passage(10, 8), passage(10, 53), passage(12, 8)),
    Llama405Sample(
        "niah_em", NEEDLE_3, f"uuid: {NEEDLE_3}", "I could not find the special magic number.", 0.0
    ),
    Llama405Sample(
        "qa_em", "San Francisco|SF", "Answer: San Francisco", "Answer:  SAN\n  francisco is the city", 100.0
    ),
    Llama405Sample("rouge", passage(7, 8, step=3), passage(7, 52, step=3), passage(7, 8, step=3) + " Yes."),
    Llama405Sample("niah_em", NEEDLE, f"Found it: {NEEDLE}", f"Found it: {NEAR_NEEDLE}", 94.44),
    # The text after the last "Answer: " is read: the first one would have matched.
    Llama405Sample(
        "qa_em", "Nairobi|nairobi", "Answer: Nairobi", "Answer: Nairobi? No. Answer: Mombasa", 0.0
    ),
    Llama405Sample("rouge", passage(15, 8), passage(15, 52), "Can machines think? " + passage(15, 3)),
    Llama405Sample("rouge", passage(20, 8, step=7), passage(20, 52, step=7), passage(20, 6, step=7)),
)


def niah_score(reference: str, answer: str) -> float:
    """The reference's needle score: for each answer UUID and the reference UUID in its place, the share
    of the reference UUID's characters that occur anywhere in the answer UUID; averaged over the answer's
    UUIDs, to 2 places."""
    shape = r"\w{8}-\w{4}-\w{4}-\w{4}-\w{12}"
    found, wanted = re.findall(shape, answer), re.findall(shape, reference)
    if not found:
        return 0.0
    total = 0.0
    for index in range(min(len(found), len(wanted))):
        hits = [character.lower() in found[index].lower() for character in wanted[index]]
        total += hits.count(True) * 1.0 / len(wanted[index])
    return round(total / len(found) * 100, 2)


def qa_score(reference: str, answer: str) -> float:
    tail = answer.rsplit("Answer: ", 1)[-1]
    if tail in reference:
        return 100.0

    def squash(text: str) -> str:
        return "".join(re.split(r"\s+", text)).lower()

    return 100.0 if any(squash(option) in squash(tail) for option in reference.split("|")) else 0.0


def llama405_records() -> list[dict[str, object]]:
    records = []
    for number, sample in enumerate(LLAMA405_SAMPLES):
        tok_input = prompt_ids(number, 200 + 50 * number, bos=128000)
        records.append(
            {
                "input": f"<|begin_of_text|>Long context {number} ... answer the task.",
                "tok_input": tok_input,
                "tok_input_len": len(tok_input),
                "gt_output": sample.gt_output,
                "metric": sample.metric,
            }
        )
    return records


# LoadGen's order of the right answers (a ROUGE sample first). Any order must give the reference's numbers;
# in this one, the mean of the ROUGE-L scores alone differs in its last digits from pandas' mean of the
# column with the exact-match rows left empty (describe() sums the column with zeros in their places).
LLAMA405_RIGHT_ORDER = (12, 1, 6, 5, 13, 9, 4, 11, 7, 2, 10, 8, 3, 0)


def llama405_log(right: bool) -> list[Logged]:
    """`right`: every answer scores fully, the summaries long enough for tokens per sample; else the quirky
    answers in dataset order (a needle sample first). Sample 2 is logged again, ignored."""
    order = LLAMA405_RIGHT_ORDER if right else tuple(range(len(LLAMA405_SAMPLES)))
    entries = [
        Logged(n, LLAMA405_SAMPLES[n].right if right else LLAMA405_SAMPLES[n].quirky, eos=n == 4)
        for n in order
    ]
    entries.insert(order.index(2) + 1, Logged(2, "Answer: Rome"))
    return entries


def expected_llama405(entries: list[Logged], ids: list[list[int]]) -> dict:
    kept = first_answers(entries, ids)
    scorer = RougeScorer(["rougeL"], use_stemmer=True)
    rows: list[dict[str, float]] = []
    characters = 0
    for number, (text, _) in kept.items():
        sample = LLAMA405_SAMPLES[number]
        answer, reference = sentence_lines(text), sentence_lines(sample.gt_output)
        characters += len(answer)
        if sample.metric == "rouge":
            rows.append({"rougeL": 100 * scorer.score(reference, answer)["rougeL"].fmeasure})
        else:
            score = (niah_score if sample.metric == "niah_em" else qa_score)(reference, answer)
            rows.append({"exact_match": score})
    means = pd.DataFrame(rows).describe().loc["mean"].to_dict()
    tokens = sum(count for _, count in kept.values())
    return {
        **{key: float(value) for key, value in means.items()},
        "gen_len": characters,
        "gen_num": len(kept),
        "gen_tok_len": tokens,
        "tokens_per_sample": round(tokens / len(kept), 1),
    }


@pytest.fixture(scope="module")
def llama405_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("llama405")
    dataset = folder / "mlperf_llama3.1_405b_dataset_14.pkl"
    llama3_1_405b.write_dataset(dataset, llama405_records())
    texts = [entry.text for right in (False, True) for entry in llama405_log(right)]
    return dataset, write_text_demo_model(folder / "model", texts, 2000)


def test_405b_exact_match_quirks_worked_out_by_hand() -> None:
    assert [NEEDLE.count("9"), NEEDLE_2.count("9"), NEAR_NEEDLE.count("9"), len(NEEDLE)] == [2, 2, 0, 36]
    assert set(NEEDLE_2) - set(NEAR_NEEDLE) == {"9"}
    for sample in LLAMA405_SAMPLES:
        if sample.quirky_score is not None:
            scorer = niah_score if sample.metric == "niah_em" else qa_score
            assert (
                scorer(sentence_lines(sample.gt_output), sentence_lines(sample.quirky)) == sample.quirky_score
            )
    # Only an answer's first UUID pairs with the reference's one, yet every answer UUID counts in the average.
    assert niah_score(NEEDLE, f"{NEAR_NEEDLE} and {NEEDLE}") == 47.22
    assert niah_score(NEEDLE, f"{NEEDLE} or {NEEDLE_2}") == 50.0
    assert qa_score("Nairobi|nairobi", "Answer: Nairobi? No.\nAnswer: Mombasa") == 0.0


@pytest.mark.parametrize(
    ("right", "first_key", "failing"),
    [
        (True, "rougeL", set()),
        (False, "exact_match", {("exact_match", ">="), ("TOKENS_PER_SAMPLE", ">=")}),
    ],
    ids=["built-to-pass", "quirky-answers"],
)
def test_405b_accuracy_txt_is_the_references_result_and_judged_by_the_round(
    llama405_files, tmp_path: Path, right: bool, first_key: str, failing: set[tuple[str, str]]
) -> None:
    dataset, model = llama405_files
    entries = llama405_log(right)
    ids = write_log(tmp_path, model, entries)
    expected = expected_llama405(entries, ids)
    assert next(iter(expected)) == first_key and expected["gen_num"] == len(LLAMA405_SAMPLES)
    benchmark = RULES.benchmark("llama3.1-405b")
    report = llama3_1_405b.write_accuracy(tmp_path, dataset, model, benchmark, PATTERNS, workers=1)
    assert_printed(tmp_path, expected)
    assert_verdicts(tmp_path, report, benchmark, expected, failing)


# ---------------------------------------------------------------------------------------------------
# Dataset validation

PLUGINS: dict[str, tuple[ModuleType, Callable[[], list[dict[str, object]]], str]] = {
    "llama2-70b-99": (llama2_70b, llama2_records, "output"),
    "mixtral-8x7b": (mixtral_8x7b, mixtral_records, "gt_output"),
    "llama3.1-405b": (llama3_1_405b, llama405_records, "metric"),
}


def write_frame(path: Path, records: list[dict[str, object]], drop: str | None = None) -> Path:
    frame = pd.DataFrame.from_records(records)
    if drop:
        frame = frame.drop(columns=[drop])
    frame.to_pickle(path)
    return path


@pytest.mark.parametrize("name", list(PLUGINS))
def test_the_hand_made_datasets_load_with_their_prompts(name: str, tmp_path: Path) -> None:
    plugin, make, _ = PLUGINS[name]
    records = make()
    path = tmp_path / "dataset.pkl"
    plugin.write_dataset(path, records)
    generation = RULES.benchmark(name).generation
    prompts = plugin.load_samples(path, max_input_tokens=generation.max_input_tokens)
    assert [list(ids) for ids in prompts.token_ids] == [record["tok_input"] for record in records]
    assert list(plugin.load_samples(path, limit=3).token_ids) == list(prompts.token_ids[:3])
    frame = pd.read_pickle(path)
    # The reference's columns (llama3.1-405b's answer lengths are in synthetic files only).
    assert list(frame.columns) == [column for column in plugin.dataset.COLUMNS if column in records[0]]
    # Text as plain Python objects, which the reference environment's older pandas can read.
    assert all(
        frame[column].dtype == object for column in frame.columns if isinstance(records[0][column], str)
    )


@pytest.mark.parametrize("name", list(PLUGINS))
@pytest.mark.parametrize("column", ["tok_input", "evaluated"])
def test_a_missing_column_is_refused_by_name(name: str, column: str, tmp_path: Path) -> None:
    plugin, make, evaluated = PLUGINS[name]
    column = evaluated if column == "evaluated" else column
    path = write_frame(tmp_path / "dataset.pkl", make(), drop=column)
    with pytest.raises(UsageProblem, match=rf"lacks the column\(s\) {column} ") as caught:
        plugin.load_samples(path, max_input_tokens=100000)
    assert str(path) in str(caught.value)


@pytest.mark.parametrize("name", list(PLUGINS))
@pytest.mark.parametrize("bad", ["text", "number", "missing", "negative"])
def test_a_prompt_that_is_not_a_list_of_token_ids_names_the_record(
    name: str, bad: str, tmp_path: Path
) -> None:
    plugin, make, _ = PLUGINS[name]
    records = make()
    records[2]["tok_input"] = {
        "text": "<s>[INST] What is the capital of France? [/INST]",
        "number": 29871,
        "missing": None,
        "negative": [1, 5, -3],
    }[bad]
    path = write_frame(tmp_path / "dataset.pkl", records)
    with pytest.raises(UsageProblem, match=r"record 2: tok_input must be a non-empty list of token ids"):
        plugin.load_samples(path)


@pytest.mark.parametrize("name", list(PLUGINS))
def test_a_prompt_longer_than_the_benchmark_allows_names_the_record(name: str, tmp_path: Path) -> None:
    plugin, make, _ = PLUGINS[name]
    limit = RULES.benchmark(name).generation.max_input_tokens
    records = make()
    records[1]["tok_input"] = prompt_ids(1, limit + 1)
    path = tmp_path / "dataset.pkl"
    plugin.write_dataset(path, records)
    with pytest.raises(UsageProblem, match=rf"record 1: the prompt has {limit + 1} tokens, more than the"):
        plugin.load_samples(path, max_input_tokens=limit)
    records[1]["tok_input"] = prompt_ids(1, limit)  # exactly the limit is allowed
    plugin.write_dataset(path, records)
    assert len(plugin.load_samples(path, max_input_tokens=limit).token_ids[1]) == limit


@pytest.mark.parametrize(
    ("name", "column", "value"),
    [("mixtral-8x7b", "dataset", "HumanEval"), ("llama3.1-405b", "metric", "bleu")],
)
def test_an_unknown_subset_or_metric_names_the_record(
    name: str, column: str, value: str, tmp_path: Path
) -> None:
    plugin, make, _ = PLUGINS[name]
    records = make()
    records[4][column] = value
    path = tmp_path / "dataset.pkl"
    plugin.write_dataset(path, records)
    with pytest.raises(UsageProblem, match=rf"record 4: {column} is '{value}', not one of"):
        plugin.load_samples(path)


class _RunsACommand:
    """Unpickling this runs a shell command (pickle calls os.system with it)."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, (self.command,))


@pytest.mark.parametrize("where", ["whole-file", "inside-a-cell"])
def test_a_pickle_that_asks_to_run_code_is_refused_without_running_it(where: str, tmp_path: Path) -> None:
    marker = tmp_path / "it-ran"
    payload = _RunsACommand(f"touch {marker}")
    if where == "whole-file":
        data = pickle.dumps(payload)
    else:
        records = llama2_records()
        records[3]["question"] = payload
        data = pickle.dumps(pd.DataFrame.from_records(records))
    path = tmp_path / "dataset.pkl"
    path.write_bytes(data)
    with pytest.raises(UsageProblem, match=r"asks to run (posix|os|nt)\.system") as caught:
        llama2_70b.load_samples(path)
    assert str(path) in str(caught.value)
    assert not marker.exists()


class _ExecsThroughNumpy:
    """Unpickling this runs Python code through a numpy function (numpy.testing's runstring is exec)."""

    def __init__(self, code: str) -> None:
        self.code = code

    def __reduce__(self) -> tuple[object, tuple[str, dict[str, object]]]:
        from numpy.testing._private.utils import runstring

        return (runstring, (self.code, {}))


class _LoadsAnotherPickle:
    """Unpickling this has pandas load another file with the unrestricted pickle."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (pd.read_pickle, (self.path,))


@pytest.mark.parametrize("route", ["numpy-runstring", "pandas-read_pickle"])
def test_code_reached_through_an_allowed_module_is_not_run_either(route: str, tmp_path: Path) -> None:
    """Allowing every numpy and pandas global lets a pickle call functions that run code."""
    marker = tmp_path / "it-ran"
    if route == "numpy-runstring":
        payload: object = _ExecsThroughNumpy(f"open({str(marker)!r}, 'w').close()")
    else:
        second = tmp_path / "second.pkl"
        second.write_bytes(pickle.dumps(_RunsACommand(f"touch {marker}")))
        payload = _LoadsAnotherPickle(second)
    path = tmp_path / "dataset.pkl"
    path.write_bytes(pickle.dumps(payload))
    with pytest.raises(UsageProblem):
        llama2_70b.load_samples(path)
    assert not marker.exists(), f"loading {path} ran the pickle's code ({route})"


# ---------------------------------------------------------------------------------------------------
# Synthetic data and the demo models

SYNTHETIC_COUNTS = {"llama2-70b-99": 3000, "mixtral-8x7b": 2000, "llama3.1-405b": 300}


@pytest.mark.parametrize("name", list(SYNTHETIC_COUNTS))
def test_synthetic_records_load_back_with_the_real_length_profile(name: str, tmp_path: Path) -> None:
    plugin, _, _ = PLUGINS[name]
    count, generation = SYNTHETIC_COUNTS[name], RULES.benchmark(name).generation
    records = plugin.synthesize_records(count, generation, 7)
    path = tmp_path / f"synthetic{plugin.DATASET_SUFFIX}"
    plugin.write_dataset(path, records)
    prompts = plugin.load_samples(path, max_input_tokens=generation.max_input_tokens)
    assert len(prompts) == count
    assert list(pd.read_pickle(path).columns) == list(plugin.dataset.COLUMNS)
    lengths = [len(ids) for ids in prompts.token_ids]
    assert abs(sum(lengths) / count - generation.mean_input_tokens) <= 0.1 * generation.mean_input_tokens
    assert max(lengths) == generation.max_input_tokens  # the longest case is exercised, never exceeded
    assert all(ids[0] == generation.bos_token_id for ids in prompts.token_ids)
    # What a dummy-weight run generates: each record's answer length, averaging the round's tokens per sample.
    column = "tok_output_length" if name.startswith("llama2") else "tok_ref_output_len"
    assert prompts.output_lengths == tuple(record[column] for record in records)
    mean_output = sum(prompts.output_lengths) / count
    assert abs(mean_output - generation.mean_output_tokens) <= 0.1 * generation.mean_output_tokens


@pytest.mark.parametrize("name", list(SYNTHETIC_COUNTS))
@pytest.mark.parametrize("bad", ["empty cell", "text"])
def test_an_answer_length_that_is_no_number_names_the_record(name: str, bad: str, tmp_path: Path) -> None:
    """The column a dummy-weight run takes its answers' lengths from: a gap (NaN, as pandas stores it) or text
    in one record is refused by name, not met by an internal error."""
    plugin, _, _ = PLUGINS[name]
    records = plugin.synthesize_records(12, RULES.benchmark(name).generation, 0)
    column = "tok_output_length" if name.startswith("llama2") else "tok_ref_output_len"
    records[5][column] = float("nan") if bad == "empty cell" else "many"
    path = tmp_path / f"synthetic{plugin.DATASET_SUFFIX}"
    plugin.write_dataset(path, records)
    with pytest.raises(UsageProblem, match=rf"record 5: {column} is .*, not a number of tokens") as caught:
        plugin.load_samples(path)
    assert str(path) in str(caught.value)


# Seed 0, `submitter data synth`'s default. Mixtral's 60 (not fewer): its longest answer is set to the
# maximum, 1023 tokens, which at 30 records lifts tokens per sample above the upper limit (170.7 > 160.49).
DEMO_COUNTS = {"llama2-70b-99": 48, "llama2-70b-99.9": 48, "mixtral-8x7b": 60, "llama3.1-405b": 40}


@pytest.mark.parametrize("name", list(DEMO_COUNTS))
def test_the_demo_models_answers_pass_the_rounds_targets(name: str, tmp_path: Path) -> None:
    benchmark = RULES.benchmark(name)
    plugin = PLUGINS.get(name, PLUGINS["llama2-70b-99"])[0]
    generation, count = benchmark.generation, DEMO_COUNTS[name]
    records = plugin.synthesize_records(count, generation, 0)
    dataset = tmp_path / f"dataset{plugin.DATASET_SUFFIX}"
    plugin.write_dataset(dataset, records)
    model = plugin.write_demo_model(tmp_path / "model", records, generation.max_output_tokens)
    answers = json.loads((model / "answers.json").read_text(encoding="utf-8"))
    assert len(answers) == count
    # LoadGen's order is not the dataset's: log the answers back to front, each ending in the demo's EOS.
    log = [
        {
            "seq_id": n,
            "qsl_idx": q,
            "data": struct.pack(f"<{len(answers[q]) + 1}i", *answers[q], EOS).hex(),
            "token_count": len(answers[q]) + 1,
        }
        for n, q in enumerate(reversed(range(count)))
    ]
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "mlperf_log_accuracy.json").write_text(json.dumps(log), encoding="utf-8")
    report = plugin.write_accuracy(run_dir, dataset, model, benchmark, PATTERNS, workers=2)
    printed = printed_result(run_dir)
    assert printed["gen_num"] == count
    assert printed["gen_tok_len"] == sum(len(ids) + 1 for ids in answers)
    missing = missing_toolchains() if name == "mixtral-8x7b" else {}
    failed = [v.metric for v in report.verdicts if not v.passed]
    if missing:
        details = report.result.model_dump()["mbxp_details"]
        assert set(details["missing_toolchains"]) <= set(missing) and details["missing_toolchains"]
        assert "mbxp_unscored_problems" in failed
    else:
        assert failed == [], report.verdicts
        assert report.passed


def test_the_synthetic_mbxp_reference_solutions_pass_in_every_language() -> None:
    """The synthetic MBXP problems' reference solutions (`ref_output`, the demo's right answers) are right
    programs, so each language's must pass under mxeval's rules, typescript's included (tsc must exit 2,
    which the real MBXP tests cause with `import * as assert from 'assert'`)."""
    records = mixtral_8x7b.synthesize_records(60, RULES.benchmark("mixtral-8x7b").generation, 0)
    first = {}
    for record in records:
        if record["dataset"] == "MBXP":
            first.setdefault(str(record["id"]).split("_", 1)[0], record)
    assert set(first) == {"cpp", "python", "php", "javascript", "ruby", "typescript"}
    problems = [
        problem_from_sample(str(r["id"]), str(r["ref_output"]), str(r["gt_output"])) for r in first.values()
    ]
    result = score_mbxp(problems, workers=2)
    missing = missing_toolchains()
    assert set(result.missing_toolchains) == set(missing) & set(first)
    failed = {outcome.language: outcome.detail for outcome in result.outcomes if not outcome.passed}
    assert failed == {}
    assert result.passed == result.scored == len(first) - len(result.missing_toolchains)
