"""mixtral-8x7b's dataset: `09292024_mixtral_15k_mintoken2_v1.pkl`, a pickled DataFrame of 15,000
samples, 5,000 each from OpenOrca, GSM8K and MBXP (`dataset` column).

The reference re-tokenises the `input` text; `tok_input` is that text's ids (the tokenizer's BOS first),
so the harness sends `tok_input`. The evaluator reads `dataset`, `gt_output` (the reference answer, the
GSM8K number, or the MBXP test code) and `id` ("{language}_{entry point}" for MBXP).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from harness.benchmarks.tokenized_dataset import check_values, read_dataset, token_prompts
from harness.prompts import Prompts
from submitter.fileformats.dataframe_pickle import write_dataframe

DATASET_SUFFIX = ".pkl"
WHAT = "mixtral-8x7b dataset"
COLUMNS = (
    "dataset",
    "id",
    "question",
    "input",
    "ref_output",
    "gt_output",
    "tok_input",
    "tok_ref_output",
    "stop_sequence",
    "tok_stop_sequence",
    "tok_input_len",
    "tok_ref_output_len",
)
READ_COLUMNS = ("dataset", "id", "gt_output", "tok_input")
OPEN_ORCA, GSM8K, MBXP = "OpenOrca", "GSM8K", "MBXP"
# The Mixtral ids of "\n```\n", where the reference cuts a code answer (SUT.py, dataset.py postProcess).
CODE_STOP_IDS = [13, 13940, 28832, 13]
_TRAILING_IDS = (2, 0)  # </s>, and the padding id
SUBSETS = (OPEN_ORCA, GSM8K, MBXP)


@dataclass(frozen=True)
class Reference:
    subset: str  # OpenOrca, GSM8K or MBXP
    id: str
    answer: str  # gt_output


def load_samples(path: Path, *, limit: int | None = None, max_input_tokens: int | None = None) -> Prompts:
    frame = read_dataset(path, READ_COLUMNS, WHAT, limit)
    check_values(frame, "dataset", SUBSETS, path, WHAT)
    prompts = token_prompts(frame, path, WHAT, max_input_tokens, output_length_column="tok_ref_output_len")
    code = frozenset(index for index, subset in enumerate(frame["dataset"]) if subset == MBXP)
    return replace(prompts, finish=partial(finish_answer, code))


def finish_answer(code_samples: frozenset[int], index: int, token_ids: Sequence[int]) -> Sequence[int]:
    """What the reference's SUT does to an answer before LoadGen sees it: trailing EOS and padding (ids 2
    and 0) removed, and a code answer cut after the first closing fence (newline, "```", newline)."""
    end = len(token_ids)
    while end and token_ids[end - 1] in _TRAILING_IDS:
        end -= 1
    answer = token_ids[:end]
    if index in code_samples:
        for start in range(len(answer) - len(CODE_STOP_IDS) + 1):
            if list(answer[start : start + len(CODE_STOP_IDS)]) == CODE_STOP_IDS:
                return answer[: start + len(CODE_STOP_IDS)]
    return answer


def references(path: Path) -> list[Reference]:
    frame = read_dataset(path, READ_COLUMNS, WHAT)
    check_values(frame, "dataset", SUBSETS, path, WHAT)
    columns = zip(frame["dataset"], frame["id"], frame["gt_output"], strict=True)
    return [Reference(str(subset), str(name), str(answer)) for subset, name, answer in columns]


def write_dataset(path: Path, records: list[dict[str, object]]) -> None:
    write_dataframe(path, records, COLUMNS)
