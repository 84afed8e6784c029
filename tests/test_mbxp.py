"""MBXP scoring with mxeval's semantics: real compilers and interpreters in the sandbox, on small problems
written in the dataset's test-code shapes (mxeval's data/mbxp: compare() helpers, numbered test cases,
python's check(candidate)). The answers look like Mixtral's: the code again, then "```" and prose."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from harness.benchmarks.mixtral_8x7b.mbxp import (
    LanguageCounts,
    MbxpProblem,
    MbxpSettings,
    MissingToolchain,
    missing_toolchains,
    problem_from_sample,
    program_text,
    score_mbxp,
    solution_text,
    split_mbxp_id,
)

PYTHON_TEST = """

METADATA = {}


def check(candidate):
    assert candidate([1, 2, 3]) == 14
    assert candidate([]) == 0
    assert candidate([-2, 5]) == 29

"""

CPP_TEST = """
template <typename T> bool compare(T a, T b){ \n    return a == b; \n}

int main(int argc, char* argv[]) {
    int x0 = sumOfSquares(vector<int>{1, 2, 3});
    if (!(compare(x0, 14))) {
        throw runtime_error("Exception -- test case 0 did not pass.");
    }

    int x1 = sumOfSquares(vector<int>{-2, 5});
    if (!(compare(x1, 29))) {
        throw runtime_error("Exception -- test case 1 did not pass.");
    }

    return 0;
}"""

JAVASCRIPT_TEST = """
const _ = require("lodash")

function compare(object1, object2){
    return _.isEqual(object1, object2)
}

var arg00 = [1, 2, 3];
var x0 = sumOfSquares(arg00);
var v0 = 14;
if(!compare(x0, v0)){
    throw 'Error at 1th assert statement. Value = ' + JSON.stringify(x0)
}

var arg10 = [-2, 5];
var x1 = sumOfSquares(arg10);
var v1 = 29;
if(!compare(x1, v1)){
    throw 'Error at 2th assert statement. Value = ' + JSON.stringify(x1)
}
"""

TYPESCRIPT_TEST = """
import * as assert from 'assert'

let actual_1 = sum_of_squares([1, 2, 3]);
let expected_1 = 14;
assert.deepEqual(actual_1, expected_1, "Exception --- test case 0 failed to pass");

let actual_2 = sum_of_squares([-2, 5]);
let expected_2 = 29;
assert.deepEqual(actual_2, expected_2, "Exception --- test case 1 failed to pass");

"""

PHP_TEST = """

function compare($x, $y) {
    return $x == $y;
}

$arg00 = [1, 2, 3];
$x0 = sumOfSquares($arg00);
$v0 = 14;
if (!compare($x0, $v0)) {
    throw new Exception("Error at 1th assert statement.");
}
$arg10 = [-2, 5];
$x1 = sumOfSquares($arg10);
$v1 = 29;
if (!compare($x1, $v1)) {
    throw new Exception("Error at 2th assert statement.");
}
"""

RUBY_TEST = """

arg00 = [1, 2, 3]
x0 = sum_of_squares(arg00)
v0 = 14
if x0 != v0
    raise StandardError, "Error at test case 1"
end

arg10 = [-2, 5]
x1 = sum_of_squares(arg10)
v1 = 29
if x1 != v1
    raise StandardError, "Error at test case 2"
end

"""

PROSE = "\n```\n\nThis function squares every number and adds the squares up."


def cpp_answer(term: str) -> str:
    return (
        "#include <bits/stdc++.h>\nusing namespace std;\n\nint sumOfSquares(vector<int> numbers) {\n"
        f"    int total = 0;\n    for (int n : numbers) {{\n        total += {term};\n    }}\n"
        "    return total;\n}" + PROSE
    )


def javascript_answer(term: str) -> str:
    return (
        f"function sumOfSquares(numbers) {{\n    return numbers.reduce((total, n) => total + {term}, 0);\n}}"
        + PROSE
    )


def typescript_answer(term: str) -> str:
    return (
        "const sum_of_squares = function (numbers: Array<number>) : number  {\n"
        f"    return numbers.reduce((total, n) => total + {term}, 0);\n}}" + PROSE
    )


def php_answer(term: str) -> str:
    return (
        "<?php\n\nfunction sumOfSquares($numbers){\n    $total = 0;\n    foreach ($numbers as $n) {\n"
        f"        $total += {term};\n    }}\n    return $total;\n}}" + PROSE
    )


def ruby_answer(term: str) -> str:
    return f"def sum_of_squares(numbers)\n  numbers.sum {{ |n| {term} }}\nend" + PROSE


def python_answer(term: str) -> str:
    return f"def sum_of_squares(numbers):\n    return sum({term} for n in numbers)" + PROSE


@dataclass(frozen=True)
class Case:
    problem: MbxpProblem
    passes: bool


def case(language: str, entry_point: str, answer: str, test: str, passes: bool) -> Case:
    return Case(MbxpProblem(language, entry_point, answer, test), passes)


LANGUAGE_CASES = {
    "cpp right": case("cpp", "sumOfSquares", cpp_answer("n * n"), CPP_TEST, True),
    "cpp wrong": case("cpp", "sumOfSquares", cpp_answer("n"), CPP_TEST, False),
    "cpp does not compile": case("cpp", "sumOfSquares", cpp_answer("n * n +"), CPP_TEST, False),
    "javascript right": case("javascript", "sumOfSquares", javascript_answer("n * n"), JAVASCRIPT_TEST, True),
    "javascript wrong": case("javascript", "sumOfSquares", javascript_answer("n"), JAVASCRIPT_TEST, False),
    "typescript right": case(
        "typescript", "sum_of_squares", typescript_answer("n * n"), TYPESCRIPT_TEST, True
    ),
    "typescript wrong": case("typescript", "sum_of_squares", typescript_answer("n"), TYPESCRIPT_TEST, False),
    # mxeval runs the program only when tsc exits 2: a program without a single diagnostic (exit 0) fails.
    "typescript clean compile": case(
        "typescript",
        "sum_of_squares",
        typescript_answer("n * n"),
        "\nif (sum_of_squares([1, 2, 3]) !== 14) { throw new Error('wrong'); }\n",
        False,
    ),
    "php right": case("php", "sumOfSquares", php_answer("$n * $n"), PHP_TEST, True),
    "php wrong": case("php", "sumOfSquares", php_answer("$n"), PHP_TEST, False),
    "ruby right": case("ruby", "sum_of_squares", ruby_answer("n * n"), RUBY_TEST, True),
    "ruby wrong": case("ruby", "sum_of_squares", ruby_answer("n"), RUBY_TEST, False),
    "python right": case("python", "sum_of_squares", python_answer("n * n"), PYTHON_TEST, True),
    "python wrong": case("python", "sum_of_squares", python_answer("n"), PYTHON_TEST, False),
}
ABSENT_HERE = missing_toolchains()


def language_params() -> list[object]:
    """Each case, skipped only where its own language's toolchain is missing here."""
    return [
        pytest.param(
            language_case,
            id=name,
            marks=pytest.mark.skipif(
                language_case.problem.language in ABSENT_HERE,
                reason=f"not found here: {', '.join(ABSENT_HERE.get(language_case.problem.language, ()))}",
            ),
        )
        for name, language_case in LANGUAGE_CASES.items()
    ]


def python_problem(answer: str) -> MbxpProblem:
    return MbxpProblem("python", "sum_of_squares", answer, PYTHON_TEST)


def test_the_id_splits_at_its_first_underscore():
    assert split_mbxp_id("cpp_minCost") == ("cpp", "minCost")
    assert split_mbxp_id("python_remove_Occ") == ("python", "remove_Occ")
    with pytest.raises(ValueError):
        split_mbxp_id("nounderscore")


def test_a_problem_comes_from_a_dataset_row():
    problem = problem_from_sample("ruby_sum_of_squares", "answer", RUBY_TEST)
    assert problem == MbxpProblem("ruby", "sum_of_squares", "answer", RUBY_TEST)


def test_the_answer_is_cut_at_the_first_fence_and_underscores_are_unescaped():
    problem = MbxpProblem("ruby", "a_b", "  def a\\_b\nend\n```\nthen ``` more", "")
    assert solution_text(problem) == "  def a_b\nend\n"


def test_only_python_answers_are_left_stripped():
    assert solution_text(MbxpProblem("python", "f", "\n  def f(): pass", "")) == "def f(): pass"
    assert solution_text(MbxpProblem("php", "f", "\n  <?php", "")) == "\n  <?php"


def test_the_programs_are_joined_as_mxeval_joins_them():
    assert (
        program_text(MbxpProblem("cpp", "f", "int f() {}\n```", "int main() {}"))
        == "int f() {}\nint main() {}"
    )
    python = MbxpProblem("python", "my_f", "def my_f(): pass", "def check(candidate): pass")
    assert program_text(python) == "def my_f(): pass\ndef check(candidate): pass\ncheck(my_f)"


@pytest.mark.parametrize("language_case", language_params())
def test_each_language_passes_the_right_answer_and_fails_the_wrong_one(language_case):
    result = score_mbxp([language_case.problem], workers=1)
    assert result.scored == 1
    assert result.passed == int(language_case.passes), result.outcomes[0].detail
    assert result.network_isolated


def test_fence_truncation_and_unescaping_decide_a_real_run():
    """Without the cut, the prose after the fence is a syntax error; without unescaping, so is `sum\\_of`."""
    answer = "\n\n  def sum\\_of\\_squares(numbers):\n    return sum(n * n for n in numbers)" + PROSE
    result = score_mbxp([python_problem(answer)])
    assert result.passed == 1, result.outcomes[0].detail


def test_python_runs_the_way_mxeval_runs_it():
    """exec() in a fresh namespace: `__main__` blocks are skipped; leaving early or reading stdin fails."""
    right = python_answer("n * n").split("\n```")[0]
    answers = {
        "main block": right + "\n\nif __name__ == '__main__':\n    raise ValueError('not run by mxeval')\n",
        "sys.exit(0)": right + "\n\nimport sys\nsys.exit(0)\n",
        "os._exit(0)": right + "\n\nimport os\nos._exit(0)\n",
        "stdin": "import sys\nsys.stdin.read()\n" + right,
    }
    result = score_mbxp([python_problem(answer) for answer in answers.values()], workers=2)
    assert [outcome.passed for outcome in result.outcomes] == [True, False, False, False]


def test_a_missing_toolchain_is_named_and_not_scored_as_zero(tmp_path):
    settings = MbxpSettings(path=str(tmp_path), node_module_folders=(str(tmp_path),))
    problems = [
        python_problem(python_answer("n * n")),
        python_problem(python_answer("n")),
        LANGUAGE_CASES["cpp right"].problem,
        LANGUAGE_CASES["ruby right"].problem,
        LANGUAGE_CASES["ruby wrong"].problem,
        MbxpProblem("java", "sumOfSquares", "class Main {}", ""),
    ]
    result = score_mbxp(problems, workers=2, settings=settings)
    assert (result.passed, result.scored, result.score) == (1, 2, 50.0)
    assert result.per_language == {"python": LanguageCounts(problems=2, passed=1)}
    assert result.missing_toolchains == {
        "cpp": MissingToolchain(missing=("g++",), problems=1),
        "ruby": MissingToolchain(missing=("ruby",), problems=2),
    }
    assert result.not_scored_languages == {"java": 1}


def test_every_language_but_python_needs_its_toolchain_on_the_path(tmp_path):
    settings = MbxpSettings(path=str(tmp_path), node_module_folders=(str(tmp_path),))
    assert missing_toolchains(settings) == {
        "cpp": ("g++",),
        "php": ("php",),
        "javascript": ("node", "lodash (node module)"),
        "ruby": ("ruby",),
        "typescript": ("tsc", "node"),
    }


def test_the_score_is_unrounded_and_counted_per_language():
    problems = [python_problem(python_answer("n * n"))] + [python_problem(python_answer("n"))] * 2
    result = score_mbxp(problems, workers=3)
    assert result.score == 100 * 1 / 3
    assert result.per_language == {"python": LanguageCounts(problems=3, passed=1)}
    assert [outcome.passed for outcome in result.outcomes] == [True, False, False]


def test_nothing_to_score_scores_zero():
    result = score_mbxp([MbxpProblem("go", "f", "", "")])
    assert (result.scored, result.score, result.not_scored_languages) == (0, 0.0, {"go": 1})
