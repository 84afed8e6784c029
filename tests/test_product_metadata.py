"""qwen3-vl-235b-a22b's product metadata scoring, as the reference's evaluation.py scores it.

Every expectation is worked out by hand (level counts, true and false positives) and turned into a number
here with fractions, from the rules in submitter/evaluation/product_metadata.py's docstring; none is taken
from running the reference.
"""

from __future__ import annotations

import hashlib
import json
import re
from fractions import Fraction

import pytest

from submitter.evaluation.product_metadata import (
    BRAND_PAD,
    CATEGORY_PAD,
    GroundTruth,
    ProductAnswer,
    ProductMetadataScores,
    brand_score,
    category_components,
    hierarchical_f1,
    parse_answer,
    score_answers,
    secondhand_f1,
)
from submitter.fileformats.accuracy_txt import parse_accuracy_txt
from submitter.rounds.registry import load_round

# tools/submission/submission_checker/constants.py, ACC_PATTERN["F1_HIERARCHICAL"], matched line by line.
CHECKER_F1_PATTERN = r'\{.*"f1":\s*([\d\.]+).*\}'
CHECKER_HASH_PATTERN = r"^hash=([\w\d]+)$"


def f1_of(shared: int, predicted: int, true: int) -> Fraction:
    """Hierarchical F1 from summed level counts, exactly."""
    precision = Fraction(shared, predicted) if predicted else Fraction(0)
    recall = Fraction(shared, true) if true else Fraction(0)
    return 2 * precision * recall / (precision + recall) if precision + recall else Fraction(0)


def answer(category: str, brand: str = "Acme", is_secondhand: bool = False) -> str:
    return json.dumps({"category": category, "brand": brand, "is_secondhand": is_secondhand})


# --- category levels ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("predicted", "true", "components"),
    [
        ("A > B > C", "A > B > D", (2, 3, 3)),  # diverges at the last level
        ("A > B > C", "A > B > C", (3, 3, 3)),
        ("A > B", "A > B > C > D", (2, 2, 4)),  # shallower: every predicted level is right
        ("A > B > C > D", "A > B", (2, 4, 2)),  # deeper: the extra levels only count as predicted
        ("X > B > C", "A > B > C", (0, 3, 3)),  # a wrong first level: nothing shared below it either
        ("A > X > C", "A > B > C", (1, 3, 3)),  # the prefix stops at the first difference
        ("A  >  B", "A > B", (2, 2, 2)),  # split on " > ", then each level stripped
        (" A > B\n", "A > B", (2, 2, 2)),
        ("A>B", "A > B", (0, 1, 2)),  # no spaces: not a separator, one level "A>B"
        ("A > ", "A", (1, 2, 1)),  # a trailing separator adds an empty level
        ("", "", (1, 1, 1)),  # an empty path is one empty level, and two of them agree
        ("a > b", "A > B", (0, 2, 2)),  # case counts
    ],
)
def test_category_components_are_the_common_prefix_and_both_depths(
    predicted: str, true: str, components: tuple[int, int, int]
) -> None:
    assert category_components(predicted, true) == components


def test_hierarchical_f1_sums_levels_over_the_corpus_before_dividing() -> None:
    pairs = [
        ("A > B > C", "A > B > D"),  # 2 shared, 3 predicted, 3 true
        ("A", "A > B > C > D > E"),  # 1, 1, 5
        ("Z > Y", "A > B"),  # 0, 2, 2
    ]
    corpus = f1_of(2 + 1 + 0, 3 + 1 + 2, 3 + 5 + 2)  # P = 3/6, R = 3/10
    assert hierarchical_f1(pairs) == pytest.approx(float(corpus), rel=1e-12)
    per_sample_mean = (f1_of(2, 3, 3) + f1_of(1, 1, 5) + f1_of(0, 2, 2)) / 3
    assert corpus != per_sample_mean  # the two readings give different numbers here
    assert hierarchical_f1(pairs) != pytest.approx(float(per_sample_mean), rel=1e-6)


def test_hierarchical_f1_is_zero_with_nothing_shared_or_nothing_scored() -> None:
    assert hierarchical_f1([("X", "A > B")]) == 0.0
    assert hierarchical_f1([]) == 0.0


# --- reading answers ----------------------------------------------------------------------------------------

_ANSWER = '{"category": "A > B", "brand": "Acme", "is_secondhand": %s}'


@pytest.mark.parametrize(
    ("raw", "is_secondhand"),
    [
        ("true", True),
        ("false", False),
        ('"true"', True),  # pydantic's lax mode reads these strings, in any case
        ('"True"', True),
        ('"FALSE"', False),
        ('"yes"', True),
        ('"No"', False),
        ('"y"', True),
        ('"n"', False),
        ('"on"', True),
        ('"off"', False),
        ('"t"', True),
        ('"f"', False),
        ('"1"', True),
        ('"0"', False),
        ("1", True),  # the integers 0 and 1
        ("0", False),
        ("1.0", True),  # floats equal to 0 or 1
        ("1e0", True),
        ("-0.0", False),
    ],
)
def test_is_secondhand_accepts_what_pydantic_lax_mode_accepts(raw: str, is_secondhand: bool) -> None:
    parsed = parse_answer(_ANSWER % raw)
    assert parsed == ProductAnswer(category="A > B", brand="Acme", is_secondhand=is_secondhand)


@pytest.mark.parametrize(
    "raw",
    ["2", "-1", "0.5", "null", '" true"', '"true "', '"maybe"', '"1.0"', '""', "[]", "{}", "NaN"],
)
def test_is_secondhand_refuses_other_values(raw: str) -> None:
    assert parse_answer(_ANSWER % raw) is None


@pytest.mark.parametrize(
    "text",
    [
        ' \n\t{"category": "A", "brand": "Acme", "is_secondhand": false}\r\n ',  # JSON whitespace around it
        '{"category":"A","brand":"Acme","is_secondhand":false}',
        '{"is_secondhand": false, "brand": "Acme", "category": "A"}',  # any key order
        '{"category": "\\u0041", "brand": "Acme", "is_secondhand": false}',  # escapes are decoded
    ],
)
def test_accepted_forms_of_an_answer(text: str) -> None:
    assert parse_answer(text) == ProductAnswer(category="A", brand="Acme", is_secondhand=False)


def test_a_repeated_key_takes_its_last_value_and_earlier_ones_are_not_validated() -> None:
    text = '{"category": 1, "category": "B", "brand": "Acme", "is_secondhand": "no", "is_secondhand": true}'
    assert parse_answer(text) == ProductAnswer(category="B", brand="Acme", is_secondhand=True)


def test_unicode_survives_reading() -> None:
    parsed = parse_answer(answer("Café > 日本 > \U0001f9f8", brand="Ünï"))
    assert parsed is not None
    assert (parsed.category, parsed.brand) == ("Café > 日本 > \U0001f9f8", "Ünï")


_VALID = '{"category": "A", "brand": "Acme", "is_secondhand": false}'


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "null",
        "[]",
        "{}",
        '"A"',
        f"```json\n{_VALID}\n```",  # fenced, as the prompt tells the model not to do
        f"Here it is: {_VALID}",
        f"{_VALID}\n```",
        f"{_VALID},",
        f"{_VALID}{{}}",  # a second value
        f"\ufeff{_VALID}",  # a byte-order mark
        f"{_VALID}\u00a0",  # a no-break space is not JSON whitespace
        _VALID.replace('"', "'"),
        _VALID[:-1] + ",}",  # a trailing comma
        _VALID[:-1],  # cut short
        f"[{_VALID}]",
        '{"category": "A", "brand": "Acme"}',  # a missing key
        '{"category": "A", "brand": "Acme", "is_secondhand": false, "confidence": 1}',  # an extra key
        '{"Category": "A", "brand": "Acme", "is_secondhand": false}',  # keys are case-sensitive
        '{"category": 1, "brand": "Acme", "is_secondhand": false}',  # no number for a string
        '{"category": "A", "brand": null, "is_secondhand": false}',
        '{"category": ["A"], "brand": "Acme", "is_secondhand": false}',
        '{"category": "A\\ud800", "brand": "Acme", "is_secondhand": false}',  # a lone surrogate
        '{"category": "A\nB", "brand": "Acme", "is_secondhand": false}',  # a raw control character
        '{"answer": ' + _VALID + "}",
    ],
)
def test_refused_forms_of_an_answer(text: str) -> None:
    assert parse_answer(text) is None


# --- scoring a run ------------------------------------------------------------------------------------------


def test_a_refused_answer_predicts_as_many_levels_as_the_truth_and_shares_none() -> None:
    truths = [GroundTruth("A > B > C", "Acme", False), GroundTruth("D > E", "Other", True)]
    scores = score_answers([(answer("A > B > C"), truths[0]), ("not JSON", truths[1])])
    # 3 + 0 shared, 3 + 2 predicted (the padding has the truth's 2 levels), 3 + 2 true.
    assert scores.f1 == pytest.approx(float(f1_of(3, 5, 5)), rel=1e-12)
    assert scores.unparsable == 1
    assert scores.total_samples == scores.samples == 2
    assert scores.brand_score == pytest.approx(1 / 2)  # the padded brand matches nothing


def test_the_padding_is_scored_as_text_like_any_other_answer() -> None:
    # A ground truth that holds the pad level itself shares it with the padding, as in the reference.
    truth = GroundTruth(f"{CATEGORY_PAD} > B", BRAND_PAD, False)
    scores = score_answers([("", truth)])
    assert scores.f1 == pytest.approx(float(f1_of(1, 2, 2)), rel=1e-12)
    assert scores.brand_score == 1.0


def test_every_log_entry_counts_repeats_included() -> None:
    good = (answer("A > B"), GroundTruth("A > B", "Acme", False))
    bad = (answer("X > Y > Z"), GroundTruth("A > B", "Acme", False))
    once = score_answers([good, bad])
    twice = score_answers([good, good, bad])
    assert once.f1 == pytest.approx(float(f1_of(2, 5, 4)), rel=1e-12)
    assert twice.f1 == pytest.approx(float(f1_of(4, 7, 6)), rel=1e-12)
    assert twice.total_samples == 3


def test_the_category_score_does_not_depend_on_the_random_draws() -> None:
    answers = [
        ("junk", GroundTruth("A > B", "Acme", True)),
        (answer("A"), GroundTruth("A > B", "Acme", True)),
    ]
    first, second = score_answers(answers, seed=1), score_answers(answers, seed=2)
    assert first.f1 == second.f1
    assert first.brand_score == second.brand_score
    assert score_answers(answers, seed=1) == first  # the same seed draws the same


def test_no_answers_score_zero() -> None:
    scores = score_answers([])
    assert (scores.f1, scores.brand_score, scores.is_secondhand_f1, scores.samples) == (0.0, 0.0, 0.0, 0)


# --- brand --------------------------------------------------------------------------------------------------


def test_brand_needs_a_ratio_above_90() -> None:
    # fuzz.ratio is 100 * 2 * (matched characters) / (both lengths): one letter changed in ten gives
    # 100 * 18 / 20 = 90, which is not above 90; in eleven, 100 * 20 / 22 = 90.9..., which is.
    assert brand_score([("abcdefghik", "abcdefghij")]) == 0.0
    assert brand_score([("abcdefghijx", "abcdefghijk")]) == 1.0


def test_brand_is_compared_stripped_and_lower_cased() -> None:
    pairs = [("  NIKE\t", "nike"), ("Adidas", " adidas "), ("Puma", "Reebok")]
    assert brand_score(pairs) == pytest.approx(2 / 3)
    assert brand_score([("", "")]) == 1.0  # two empty brands are identical
    assert brand_score([]) == 0.0


# --- is_secondhand ------------------------------------------------------------------------------------------


def test_secondhand_f1_counts_true_as_the_positive_class() -> None:
    pairs = [(True, True), (True, True), (True, False), (False, True), (False, False), (False, False)]
    true_positives, false_positives, false_negatives = 2, 1, 1
    expected = Fraction(2 * true_positives, 2 * true_positives + false_positives + false_negatives)
    assert secondhand_f1(pairs) == pytest.approx(float(expected), rel=1e-12)


def test_secondhand_f1_without_positives_is_zero() -> None:
    assert secondhand_f1([(False, False), (False, False)]) == 0.0  # scikit-learn's zero_division default
    assert secondhand_f1([(False, True)]) == 0.0  # positives missed: no true positive
    assert secondhand_f1([(True, False)]) == 0.0
    assert secondhand_f1([]) == 0.0


# --- accuracy.txt -------------------------------------------------------------------------------------------


def test_accuracy_txt_is_the_json_line_and_its_hash_without_a_final_newline() -> None:
    scores = ProductMetadataScores(
        f1=0.8125, brand_score=0.5, is_secondhand_f1=0.25, total_samples=4, unparsable=0
    )
    line = '{"f1": 0.8125}'
    assert scores.printed() == line
    digest = hashlib.sha256(line.encode()).hexdigest()
    assert scores.accuracy_txt() == f"Results\n\n{line}\n\nhash={digest}"


def test_the_checker_reads_f1_and_the_hash_back() -> None:
    truth = GroundTruth("A > B > C", "Acme", False)
    scores = score_answers([(answer("A > B > D"), truth), (answer("A > B > C"), truth)])
    lines = scores.accuracy_txt().splitlines(keepends=True)  # as the checker's readlines() gives them
    read = [match.group(1) for line in lines if (match := re.match(CHECKER_F1_PATTERN, line))]
    hashes = [match.group(1) for line in lines if (match := re.match(CHECKER_HASH_PATTERN, line))]
    assert [float(value) for value in read] == [scores.f1]
    assert scores.f1 == pytest.approx(float(f1_of(5, 6, 6)), rel=1e-12)
    assert hashes == [hashlib.sha256(scores.printed().encode()).hexdigest()]


@pytest.mark.parametrize("round_name", ["v6.0", "v6.1"])
def test_the_round_packs_read_the_same_number(round_name: str) -> None:
    patterns = load_round(round_name).accuracy_patterns
    assert patterns["F1_HIERARCHICAL"] == CHECKER_F1_PATTERN
    scores = ProductMetadataScores(f1=0.75, brand_score=0, is_secondhand_f1=0, total_samples=1, unparsable=0)
    parsed = parse_accuracy_txt(scores.accuracy_txt(), "accuracy.txt", patterns)
    assert parsed.values["F1_HIERARCHICAL"].number == 0.75
    assert parsed.hash == hashlib.sha256(b'{"f1": 0.75}').hexdigest()
