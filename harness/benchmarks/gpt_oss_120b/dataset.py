"""gpt-oss-120b's datasets: a folder laid out as the reference's download, one Parquet file per purpose
(`perf/perf_eval_ref.parquet`, `acc/acc_eval_ref.parquet`, `acc/acc_eval_compliance_gpqa.parquet`; the
round pack's `mode_datasets` say which run mode reads which).

Prompts are the token ids in `tok_input` (the reference's older name, taken first) or `input_tokens`:
Harmony conversations whose system message sets the reasoning effort, sent as they are. The evaluator
reads `dataset` (routed by name as the reference routes it) and `ground_truth` (for LiveCodeBench, the
problem's question_id). `tok_ref_output_len` exists in synthetic files only: the stand-in answer's length,
which a dummy-weight run generates.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from harness.benchmarks.reasoning_problems import code_records
from harness.benchmarks.reasoning_scoring import ground_truth_text, route_by_name
from harness.prompts import Prompts, answer_lengths, prompt_token_ids
from submitter.errors import UsageProblem
from submitter.evaluation.livecodebench import write_problems
from submitter.fileformats.dataframe_parquet import read_parquet_dataframe, write_parquet_dataframe

DATASET_SUFFIX = ""  # a folder of Parquet files
WHAT = "gpt-oss-120b dataset"
PROMPT_COLUMNS = ("tok_input", "input_tokens")
OUTPUT_LENGTH_COLUMN = "tok_ref_output_len"
# The evaluator a sub-dataset gets: the first of these its lower-cased name contains (the reference's order).
EVALUATOR_KEYS = ("gpqa", "mmlu_pro", "math500", "aime", "livecodebench", "mmlu")
# Synthetic records name the file they belong in (relative to the dataset folder) under this key.
FILE_KEY = "_file"
COLUMNS = ("dataset", "question", "ground_truth", "input_tokens", "num_tokens", OUTPUT_LENGTH_COLUMN)


@dataclass(frozen=True)
class Reference:
    dataset: str  # lower-cased, as the reference groups it
    ground_truth: str | None


def evaluator_key(dataset: object) -> str | None:
    return route_by_name(dataset, EVALUATOR_KEYS)


def load_samples(path: Path, *, limit: int | None = None, max_input_tokens: int | None = None) -> Prompts:
    frame = read_parquet_dataframe(path, (), WHAT)
    column = next((name for name in PROMPT_COLUMNS if name in frame.columns), None)
    if column is None:
        raise UsageProblem(
            f"{WHAT} {path} has neither {' nor '.join(PROMPT_COLUMNS)}, the tokenised prompts the reference "
            f"sends (it has {', '.join(map(str, frame.columns))}); this is not the benchmark's dataset"
        )
    if limit is not None:
        frame = frame.iloc[:limit]
    token_ids = prompt_token_ids(frame[column], f"{WHAT} {path}", max_input_tokens, column)
    output_lengths = None
    if OUTPUT_LENGTH_COLUMN in frame.columns:
        output_lengths = answer_lengths(frame[OUTPUT_LENGTH_COLUMN], f"{WHAT} {path}", OUTPUT_LENGTH_COLUMN)
    return Prompts(path, token_ids, output_lengths)


def references(path: Path) -> list[Reference]:
    """Each record's sub-dataset and ground truth; a sub-dataset no evaluator takes is an error, as in the
    reference."""
    frame = read_parquet_dataframe(path, ("dataset", "ground_truth"), WHAT)
    found = []
    for number, (dataset, truth) in enumerate(zip(frame["dataset"], frame["ground_truth"], strict=True)):
        if not isinstance(dataset, str) or not dataset or evaluator_key(dataset) is None:
            raise UsageProblem(
                f"{WHAT} {path}, record {number}: dataset is {dataset!r}, which no evaluator of the "
                f"reference takes (names containing {', '.join(EVALUATOR_KEYS)}); this is not an accuracy set"
            )
        found.append(Reference(dataset.lower(), ground_truth_text(truth)))
    return found


LIVECODEBENCH_RELEASE = "release_v6"  # eval_accuracy.py load_lcb_benchmark
LIVECODEBENCH_FOLDER = "code_generation_lite"


def write_dataset(folder: Path, records: list[dict[str, object]]) -> None:
    """Records into the files their `_file` names, in the folder (created), each written atomically, and
    the LiveCodeBench problems they ask into code_generation_lite/ beside them."""
    by_file: dict[str, list[dict[str, object]]] = defaultdict(list)
    for record in records:
        by_file[str(record[FILE_KEY])].append(record)
    for name, file_records in by_file.items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        write_parquet_dataframe(target, file_records, COLUMNS)
    problems = code_records(records)
    if problems:
        write_problems(folder / LIVECODEBENCH_FOLDER, LIVECODEBENCH_RELEASE, problems)
