"""LoadGen's accuracy log (`mlperf_log_accuracy.json`): records of hex-encoded int32 token ids, or, for
benchmarks whose responses are text, of the bytes the benchmark defines (`read_logged_payloads`)."""

from __future__ import annotations

import json
from array import array
from dataclasses import dataclass
from pathlib import Path

from submitter.errors import SubmitterError


@dataclass(frozen=True)
class LoggedResponse:
    qsl_idx: int
    token_ids: list[int]
    token_count: int
    first_tokens: list[int] | None  # token_data: what FirstTokenComplete reported (Server, Interactive)


def decode_int32(hex_data: str) -> list[int]:
    """LoadGen's hex payload as int32 ids (little-endian, as the harness sends them)."""
    raw = bytes.fromhex(hex_data)
    if len(raw) % 4:
        raise ValueError(f"{len(raw)} bytes is not a whole number of int32 ids")
    ids = array("i")
    ids.frombytes(raw)
    return ids.tolist()


@dataclass(frozen=True)
class LoggedPayload:
    qsl_idx: int
    data: bytes  # the response as the SUT sent it (whisper: int64 labels; qwen3-vl: UTF-8 text)


def read_logged_payloads(path: Path) -> list[LoggedPayload]:
    """Every record's raw response, in file order; a record that cannot be read names its position."""
    return payloads_of(read_log_records(path), path)


def payloads_of(records: list, path: Path) -> list[LoggedPayload]:
    """`read_log_records`'s records as raw responses; a record that cannot be read names its position."""
    payloads = []
    for position, record in enumerate(records):
        try:
            payloads.append(LoggedPayload(int(record["qsl_idx"]), bytes.fromhex(record["data"])))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise SubmitterError(f"{path}: record {position} cannot be read ({exc})") from None
    return payloads


def read_log_records(path: Path) -> list:
    """The log's records as JSON objects, in file order."""
    try:
        records = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SubmitterError(
            f"{path} does not exist; evaluate the directory of an accuracy or TEST06 run"
        ) from None
    except json.JSONDecodeError as exc:
        raise SubmitterError(
            f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}); was the run cut short?"
        ) from None
    if not isinstance(records, list):
        raise SubmitterError(f"{path} must hold a JSON array of LoadGen records")
    return records


def read_accuracy_log(path: Path) -> list[LoggedResponse]:
    """Every record in file order; a record that cannot be read names its position."""
    responses = []
    for position, record in enumerate(read_log_records(path)):
        try:
            first = record.get("token_data")
            responses.append(
                LoggedResponse(
                    qsl_idx=int(record["qsl_idx"]),
                    token_ids=decode_int32(record["data"]),
                    token_count=int(record["token_count"]),
                    first_tokens=decode_int32(first) if first is not None else None,
                )
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise SubmitterError(f"{path}: record {position} cannot be read ({exc})") from None
    return responses


def first_per_sample(responses: list[LoggedResponse]) -> list[LoggedResponse]:
    """The first record of each sample, in log order (a sample can be logged more than once)."""
    seen: set[int] = set()
    kept = []
    for response in responses:
        if response.qsl_idx not in seen:
            seen.add(response.qsl_idx)
            kept.append(response)
    return kept
