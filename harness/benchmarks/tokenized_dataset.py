"""The pickled-DataFrame datasets of the LLM references (llama2-70b, mixtral-8x7b, llama3.1-405b): each
record's prompt as the token ids in `tok_input`, validated before a run.

Every problem is a UsageProblem (exit 2) that names the file, the record and how to fix it. Prompts stay
the ids the dataset holds: never decoded and re-encoded.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from harness.prompts import Prompts, answer_lengths, prompt_token_ids
from submitter.errors import UsageProblem
from submitter.fileformats.dataframe_pickle import read_dataframe

if TYPE_CHECKING:
    import pandas

PROMPT_COLUMN = "tok_input"


def read_dataset(path: Path, columns: Sequence[str], what: str, limit: int | None = None) -> pandas.DataFrame:
    """The first `limit` records (all by default) of a dataset with at least `columns`."""
    frame = read_dataframe(path, columns, what)
    return frame if limit is None else frame.iloc[:limit]


def check_values(frame: pandas.DataFrame, column: str, allowed: Iterable[str], path: Path, what: str) -> None:
    """Every record's `column` is one of `allowed` (a sub-dataset or metric name the evaluator routes on)."""
    known = set(allowed)
    for number, value in enumerate(frame[column]):
        if value not in known:
            raise UsageProblem(
                f"{what} {path}, record {number}: {column} is {value!r}, not one of "
                f"{', '.join(sorted(known))}; this is not the benchmark's dataset"
            )


def token_prompts(
    frame: pandas.DataFrame,
    path: Path,
    what: str,
    max_input_tokens: int | None,
    output_length_column: str | None = None,
) -> Prompts:
    """Each record's `tok_input` as a prompt, and its reference answer's length when the file has one."""
    token_ids = prompt_token_ids(frame[PROMPT_COLUMN], f"{what} {path}", max_input_tokens, PROMPT_COLUMN)
    output_lengths = None
    if output_length_column is not None and output_length_column in frame.columns:
        output_lengths = answer_lengths(frame[output_length_column], f"{what} {path}", output_length_column)
    return Prompts(path, token_ids, output_lengths)
