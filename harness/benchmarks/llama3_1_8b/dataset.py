"""llama3.1-8b's dataset file, read once: the prompts' token ids (`tok_input`) and nothing else.

A dataset that is missing or malformed is an input error (UsageProblem, exit 2), as any input file is.

The file is a JSON array of records (`instruction`, `input`, `tok_input`, `output`). Prompts stay as the
token ids the dataset holds: they are never decoded and re-encoded. Each is kept as a compact int32 array.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

from harness.prompts import Prompts, prompt_token_ids
from submitter.errors import UsageProblem
from submitter.fileio import write_chunks_atomic

DATASET_SUFFIX = ".json"
# Records are encoded this many at a time: a full dataset is some 60 MB of JSON, never held as one string.
_RECORDS_PER_CHUNK = 256


def load_prompts(path: Path, *, limit: int | None = None, max_input_tokens: int | None = None) -> Prompts:
    """The first `limit` prompts (all by default); every problem names the record and how to fix it."""
    try:
        with path.open("rb") as stream:
            records = json.load(stream)
    except FileNotFoundError:
        raise UsageProblem(
            f"dataset {path} does not exist; pass --dataset with the benchmark's JSON file, "
            "or make one with `submitter data synth`"
        ) from None
    except IsADirectoryError:
        raise UsageProblem(f"dataset {path} is a directory; name the dataset's .json file") from None
    except PermissionError:
        raise UsageProblem(f"dataset {path} cannot be read (permission denied); make it readable") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageProblem(
            f"dataset {path} is not valid JSON ({exc}); download or generate it again"
        ) from None
    if not isinstance(records, list) or not records:
        raise UsageProblem(f"dataset {path} must be a non-empty JSON array of records with tok_input")
    selected = records if limit is None else records[:limit]
    prompts = (record.get("tok_input") if isinstance(record, dict) else None for record in selected)
    return Prompts(path, prompt_token_ids(prompts, f"dataset {path}", max_input_tokens))


def json_array_chunks(records: Sequence[object]) -> Iterator[bytes]:
    """The bytes of json.dumps(records, separators=(",", ":")), a few records at a time."""
    yield b"["
    for start in range(0, len(records), _RECORDS_PER_CHUNK):
        batch = records[start : start + _RECORDS_PER_CHUNK]
        text = ",".join(json.dumps(record, separators=(",", ":")) for record in batch)
        yield (text if start == 0 else "," + text).encode("utf-8")
    yield b"]"


def write_dataset(path: Path, records: list[dict[str, object]]) -> None:
    write_chunks_atomic(path, json_array_chunks(records))
