"""llama3.1-405b's dataset: `mlperf_llama3.1_405b_dataset_8313_processed_fp16_eval.pkl`, a pickled
DataFrame. The harness sends `tok_input` (the chat template already applied); the evaluator reads
`gt_output` and `metric`, which names each sample's metric. `tok_ref_output_len` exists in synthetic files
only: the stand-in answer's length, which a dummy-weight run generates (without it, every sample would run
to the 2,000-token limit, about three times the benchmark's 685-token mean)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.benchmarks.llama3_1_405b.metrics import METRICS
from harness.benchmarks.tokenized_dataset import check_values, read_dataset, token_prompts
from harness.prompts import Prompts
from submitter.fileformats.dataframe_pickle import write_dataframe

DATASET_SUFFIX = ".pkl"
WHAT = "llama3.1-405b dataset"
REFERENCE_COLUMNS = ("input", "tok_input", "tok_input_len", "gt_output", "metric")
OUTPUT_LENGTH_COLUMN = "tok_ref_output_len"
COLUMNS = (*REFERENCE_COLUMNS, OUTPUT_LENGTH_COLUMN)
READ_COLUMNS = ("tok_input", "gt_output", "metric")


@dataclass(frozen=True)
class Reference:
    answer: str
    metric: str


def load_samples(path: Path, *, limit: int | None = None, max_input_tokens: int | None = None) -> Prompts:
    frame = read_dataset(path, READ_COLUMNS, WHAT, limit)
    check_values(frame, "metric", METRICS, path, WHAT)
    return token_prompts(frame, path, WHAT, max_input_tokens, output_length_column=OUTPUT_LENGTH_COLUMN)


def references(path: Path) -> list[Reference]:
    frame = read_dataset(path, READ_COLUMNS, WHAT)
    check_values(frame, "metric", METRICS, path, WHAT)
    return [
        Reference(str(answer), str(metric))
        for answer, metric in zip(frame["gt_output"], frame["metric"], strict=True)
    ]


def write_dataset(path: Path, records: list[dict[str, object]]) -> None:
    """Records in the reference's columns, and the answers' lengths where every record gives one."""
    if all(OUTPUT_LENGTH_COLUMN in record for record in records):
        write_dataframe(path, records, COLUMNS)
    else:
        write_dataframe(path, records, REFERENCE_COLUMNS)
