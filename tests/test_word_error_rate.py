"""Whisper's word error rate as the speech2text reference computes it.

Every expected number is worked out by hand from the rules in submitter/evaluation/word_error_rate.py's
docstring (count the reference words after normalisation, find the units the in-step walk forms, count
the edits between them), not taken from running the reference.
"""

from __future__ import annotations

import re

import pytest

from submitter.evaluation.word_error_rate import (
    LABELS,
    WordErrorRate,
    answer_labels,
    labels_text,
    normalise,
    payload_labels,
    transcript_labels,
    word_error_rate,
    word_errors,
)

# The MLPerf submission checker's pattern for whisper's accuracy.txt.
CHECKER_ACCURACY = re.compile(r"Word Error Rate\:.*, accuracy=([0-9\.]+)%")
# The alphabet written out once more, independently of the module: index = position in this string.
ALPHABET = " abcdefghijklmnopqrstuvwxyz'0123456789$%+-"


def spelled(text: str) -> list[int]:
    return [ALPHABET.index(character) for character in text]


# --- labels ----------------------------------------------------------------------------------------------


def test_alphabet_is_the_references_42_labels_in_order() -> None:
    assert "".join(LABELS) == ALPHABET
    assert len(LABELS) == 42
    assert [LABELS.index(label) for label in " a'0-"] == [0, 1, 27, 28, 41]


def test_transcript_labels_drop_unknown_characters_and_keep_spaces() -> None:
    assert transcript_labels("ab c") == [1, 2, 0, 3]
    assert transcript_labels(" it's 25% off ") == spelled(" it's 25% off ")  # outer spaces stay
    # Accented letters and punctuation go.
    assert transcript_labels("caf\u00e9, na\u00efve!") == spelled("caf nave")


def test_transcript_labels_do_not_lower_case() -> None:
    # The manifest is lower-cased when the dataset is prepared; the evaluator itself drops capitals.
    assert transcript_labels("Hello World") == spelled("ello orld")


def test_answer_labels_lower_case_and_strip_whisper_text() -> None:
    assert answer_labels(" Hello, World!\n") == spelled("hello world")
    assert answer_labels("It's $3 + 5% - OK") == spelled("it's $3 + 5% - ok")


def test_answer_labels_join_words_separated_only_by_dropped_characters() -> None:
    assert answer_labels("one,two") == spelled("onetwo")
    assert answer_labels("one\ntwo") == spelled("onetwo")  # only the outer whitespace is stripped


def test_labels_text_spells_labels_and_rejects_unknown_ones() -> None:
    assert labels_text([8, 9, 0, 28, 41]) == "hi 0-"
    assert labels_text(answer_labels(" Twenty-five, please.")) == "twenty-five please"
    assert labels_text([]) == ""
    for label in (42, -1):
        with pytest.raises(ValueError, match=r"outside 0\.\.41"):
            labels_text([1, label])


def test_payload_labels_read_little_endian_int64() -> None:
    payload = b"".join(label.to_bytes(8, "little") for label in (8, 9, 0, 41))
    assert payload_labels(payload) == [8, 9, 0, 41]
    assert payload_labels(b"") == []
    with pytest.raises(ValueError, match="int64"):
        payload_labels(payload[:-4])  # int32 labels are not what the SUT logs


# --- normalisation ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hypothesis", "reference", "words"),
    [
        ("25 apples", "twenty five apples", 2),  # numbers in digits; the reference counts 2 words, not 3
        ("twenty-five apples", "25 apples", 2),
        ("the colour grey", "the color gray", 3),  # British spelling becomes American
        ("don't stop", "do not stop", 3),  # contractions are expanded
        ("Mr. Smith, hello!", "mister smith hello", 3),  # case, abbreviations and punctuation
        ("um the cat", "the cat", 2),  # fillers are dropped
        ("ten percent", "10%", 1),
    ],
)
def test_normalisation_makes_equivalent_texts_match(hypothesis: str, reference: str, words: int) -> None:
    assert word_errors(hypothesis, reference) == (0, words)


def test_normaliser_is_openai_whispers_without_later_additions() -> None:
    # whisper-normalizer 0.1.2 and later rewrite these; openai-whisper's (the reference's) does not.
    assert normalise("the cause of it kinda") == "the cause of it kinda"
    assert normalise("Twenty five dollars") == "$25"


# --- one sample ------------------------------------------------------------------------------------------


def test_identical_texts_have_no_errors() -> None:
    assert word_errors("the cat sat on the mat", "the cat sat on the mat") == (0, 6)


def test_one_substitution_in_five_words() -> None:
    assert word_errors("the cat sat on hats", "the cat sat on mats") == (1, 5)


@pytest.mark.parametrize(
    ("hypothesis", "errors"),
    [
        ("well the cat sat", 1),  # inserted at the start
        ("the cat sat down", 1),  # inserted at the end
        ("cat sat", 1),  # the first word deleted
        ("the cat", 1),  # the last word deleted
        ("well the cat", 2),  # inserted at the start and deleted at the end
    ],
)
def test_insertions_and_deletions_at_the_ends(hypothesis: str, errors: int) -> None:
    assert word_errors(hypothesis, "the cat sat") == (errors, 3)


def test_empty_hypothesis_deletes_every_reference_word() -> None:
    assert word_errors("", "the cat sat") == (3, 3)


def test_empty_reference_counts_insertions_over_no_words() -> None:
    assert word_errors("the cat", "") == (2, 0)
    assert word_errors("", "") == (0, 0)


@pytest.mark.parametrize(
    ("hypothesis", "reference", "words"),
    [
        ("baseball game", "base ball game", 3),  # two reference words spell one hypothesis word
        ("base ball game", "baseball game", 2),  # and the other way round
        ("anybodyelse came", "any body else came", 4),  # three words
        ("we came any body else", "we came anybodyelse", 3),
    ],
)
def test_concatenations_of_up_to_three_words_match(hypothesis: str, reference: str, words: int) -> None:
    assert word_errors(hypothesis, reference) == (0, words)


def test_four_words_joined_do_not_match() -> None:
    # The walk pairs "no" with the joined word (a substitution); where, near and here are deletions.
    assert word_errors("nowherenearhere", "no where near here") == (4, 4)


def test_concatenations_are_only_seen_where_the_walk_pairs_words() -> None:
    # The inserted "well" shifts the walk: it pairs (the, well), (base, the), (ball, baseball), so no join
    # is found and the units the/base/ball against well/the/baseball are 3 edits apart, not 1.
    assert word_errors("well the baseball", "the base ball") == (3, 3)


def test_insertions_can_make_more_errors_than_words() -> None:
    # "dog" against "the" is a substitution; "cat" and "sat" are insertions.
    assert word_errors("the cat sat", "dog") == (3, 1)


# --- the corpus ------------------------------------------------------------------------------------------


def test_rate_is_summed_over_samples_not_averaged() -> None:
    nine_words = "the quick brown fox jumps over the lazy dog"
    hypotheses, references = ["dog", nine_words], ["cat", nine_words]
    rate = word_error_rate(hypotheses, references)
    # 1 error in 1 word and 0 in 9: 1/10, where the mean of the two ratios would be 1/2.
    assert (rate.errors, rate.words) == (1, 10)
    assert rate.wer == 1 / 10


def test_accuracy_and_printed_line_are_read_back_by_the_checker() -> None:
    rate = word_error_rate(["the cat sat on hats"], ["the cat sat on mats"])
    assert (rate.errors, rate.words, rate.wer, rate.accuracy) == (1, 5, 0.2, 80.0)
    assert rate.printed() == "Word Error Rate: 20.0%, accuracy=80.0%"
    assert CHECKER_ACCURACY.search(rate.printed()).group(1) == "80.0"


def test_printed_numbers_are_not_rounded() -> None:
    rate = WordErrorRate(errors=1, words=3)
    found = CHECKER_ACCURACY.search(rate.printed())
    assert found is not None
    assert float(found.group(1)) == rate.accuracy == (1 - 1 / 3) * 100
    # wer * 100, as the reference computes it, which is not 100 / 3 in the last digit.
    assert rate.printed().startswith(f"Word Error Rate: {(1 / 3) * 100}%")


def test_a_rate_above_one_prints_a_negative_accuracy_the_checker_cannot_read() -> None:
    rate = word_error_rate(["the cat sat"], ["dog"])
    assert rate.printed() == "Word Error Rate: 300.0%, accuracy=-200.0%"
    assert CHECKER_ACCURACY.search(rate.printed()) is None


def test_perfect_transcription() -> None:
    rate = word_error_rate([" The cat sat."], ["the cat sat"])
    assert rate.printed() == "Word Error Rate: 0.0%, accuracy=100.0%"


def test_samples_go_from_labels_to_rate() -> None:
    answers = [" Twenty-five apples, please.", " The colour is grey!"]
    transcripts = ["twenty five apples please", "the color is green"]
    logged = [b"".join(label.to_bytes(8, "little") for label in answer_labels(answer)) for answer in answers]
    hypotheses = [labels_text(payload_labels(payload)) for payload in logged]
    references = [labels_text(transcript_labels(transcript)) for transcript in transcripts]
    rate = word_error_rate(hypotheses, references)
    # "25 apples please" matches exactly (3 words); "the color is gray" against "green" is 1 error in 4.
    assert (rate.errors, rate.words) == (1, 7)


def test_unpaired_or_wordless_input_is_refused() -> None:
    with pytest.raises(ValueError, match="pair up"):
        word_error_rate(["a cat"], [])
    with pytest.raises(ValueError, match="no words"):
        word_error_rate(["the cat", ""], ["", "um"])  # "um" is a filler: normalised away
    with pytest.raises(ValueError, match="no words"):
        word_error_rate([], [])
    with pytest.raises(ValueError):
        WordErrorRate(errors=0, words=0)


def test_result_is_immutable() -> None:
    rate = WordErrorRate(errors=1, words=4)
    with pytest.raises(AttributeError):
        rate.errors = 0  # type: ignore[misc]
