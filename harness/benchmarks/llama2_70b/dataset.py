"""llama2-70b's dataset: `open_orca_gpt4_tokenized_llama.sampled_24576.pkl`, a pickled DataFrame.

Columns as the reference's processorca.py writes them; the harness sends `tok_input` (the Llama 2
prompt template's ids, with token 29871 appended as the reference does) and the evaluator reads `output`.
"""

from __future__ import annotations

from pathlib import Path

from harness.benchmarks.tokenized_dataset import read_dataset, token_prompts
from harness.prompts import Prompts
from submitter.fileformats.dataframe_pickle import write_dataframe

DATASET_SUFFIX = ".pkl"
WHAT = "llama2-70b dataset"
COLUMNS = (
    "id",
    "system_prompt",
    "question",
    "output",
    "input",
    "tok_input",
    "tok_output",
    "origin",
    "tok_input_length",
    "tok_output_length",
)
# What the harness and the evaluator read; the other columns are the reference's provenance.
READ_COLUMNS = ("tok_input", "output")


def load_samples(path: Path, *, limit: int | None = None, max_input_tokens: int | None = None) -> Prompts:
    frame = read_dataset(path, READ_COLUMNS, WHAT, limit)
    return token_prompts(frame, path, WHAT, max_input_tokens, output_length_column="tok_output_length")


def reference_answers(path: Path) -> list[str]:
    return [str(text) for text in read_dataset(path, READ_COLUMNS, WHAT)["output"]]


def write_dataset(path: Path, records: list[dict[str, object]]) -> None:
    write_dataframe(path, records, COLUMNS)
