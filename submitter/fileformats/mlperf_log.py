"""LoadGen's detail log (`:::MLLOG {json}` lines) parsed once into a typed object.

Read as the official checker reads it: the first line must start with a marker (`:::MLLOG`, or
`:::ENDPTS` for logs of MLCommons' endpoints load generator), a marker line must hold JSON with a
key, and other lines are skipped. Parsing never raises: what the official checker would crash on
becomes a `LogProblem` (fatal), a skipped line a stray line, so one garbled line costs a finding.

A number is what LoadGen writes: an integer of at most 64 bits or a double. An integer past the range of a
double (about 1.8e308, 309 digits and more) cannot be LoadGen's, and the float() every reader of a result
or a latency makes of it raises OverflowError; the record that holds one is a problem of its line, and a
later repeat of a key, which readers skip, is named as a skipped record.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import msgspec
from msgspec import Struct

from submitter.fileio import json_error_reason

MLLOG_PREFIX = ":::MLLOG "
EMPTY = "is empty"  # the problem of a log with nothing in it
MARKERS = (":::MLLOG", ":::ENDPTS")
NOT_A_RECORD = "is not valid JSON with a key"
# int() converts no longer integer (Python 3.11's guard; 0 turns it off): a value with a run of more digits
# is decoded when the log is read, so that it becomes a finding rather than an error when a rule reads it.
_MAX_DIGITS = sys.get_int_max_str_digits()
_LONG_DIGITS = re.compile(rb"\d{%d}" % (_MAX_DIGITS + 1))
# The fewest digits of an integer past the largest double; values without such a run are never decoded.
_DOUBLE_DIGITS = len(str(int(sys.float_info.max)))
_DOUBLE_RUN = re.compile(rb"\d{%d}" % _DOUBLE_DIGITS)


class LogRecord(Struct, frozen=True):
    key: str
    line: int
    is_error: bool = False
    is_warning: bool = False
    decoded: Any = None
    # The value's JSON, decoded when asked for: logs carry lists of thousands of sample indices nobody reads.
    encoded: msgspec.Raw | None = None

    @property
    def value(self) -> Any:
        return self.decoded if self.encoded is None else _decode_value(self.encoded)


class LogProblem(Struct, frozen=True):
    line: int
    message: str
    key: str | None = None  # the record's key, where the problem is its value


class DetailLog(Struct, frozen=True):
    """The first value of every key (as the official checker reads it), errors, warnings, unreadable lines."""

    path: str
    records: dict[str, LogRecord] = {}
    errors: tuple[LogRecord, ...] = ()
    warnings: tuple[LogRecord, ...] = ()
    problems: tuple[LogProblem, ...] = ()  # lines the official checker stops at
    stray_lines: tuple[int, ...] = ()  # lines without a marker, which it skips
    # Later records of a key (which readers skip: the first counts) holding what LoadGen never writes.
    skipped: tuple[LogProblem, ...] = ()

    def get(self, key: str, default: Any = None) -> Any:
        record = self.records.get(key)
        return default if record is None else record.value

    def line_of(self, key: str) -> int | None:
        record = self.records.get(key)
        return None if record is None or not record.line else record.line

    def __contains__(self, key: str) -> bool:
        return key in self.records


def parse_detail_log(text: str, path: str) -> DetailLog:
    records: dict[str, LogRecord] = {}
    errors: list[LogRecord] = []
    warnings: list[LogRecord] = []
    problems: list[LogProblem] = []
    skipped: list[LogProblem] = []
    stray: list[int] = []
    if not text.strip():
        return DetailLog(path, problems=(LogProblem(0, EMPTY),))
    lines = text.split("\n")
    marker = next((m for m in MARKERS if lines[0].startswith(m)), None)
    if marker is None:
        problems.append(LogProblem(1, "does not start with a :::MLLOG record"))
        marker = MARKERS[0]
    for number, line in enumerate(lines, start=1):
        line = line.rstrip()
        if not line.startswith(marker):
            if line and number > 1:
                stray.append(number)
            continue
        record = _record(line[len(marker) :], number)
        if isinstance(record, str):
            problems.append(LogProblem(number, f"holds a :::MLLOG record that {record}"))
            continue
        beyond = _past_a_double(record)
        if beyond is not None:
            (skipped if record.key in records else problems).append(beyond)
            continue
        records.setdefault(record.key, record)
        if record.is_error:
            errors.append(record)
        if record.is_warning:
            warnings.append(record)
    return DetailLog(
        path, records, tuple(errors), tuple(warnings), tuple(problems), tuple(stray), tuple(skipped)
    )


class _Payload(Struct):
    """A record's JSON as msgspec reads it: several times faster than json.loads, the value left encoded."""

    key: Any
    value: msgspec.Raw = msgspec.Raw()  # empty when the record has no value
    metadata: Any = None


_DECODE = msgspec.json.Decoder(_Payload).decode


def _record(payload: str, number: int) -> LogRecord | str:
    """The line's record, or why it cannot be read."""
    try:
        data = _DECODE(payload)
    except msgspec.MsgspecError:
        # What msgspec refuses (NaN, numbers beyond a double, lone surrogates, not an object) goes the
        # official checker's way: json.loads decides.
        return _record_by_json(payload, number)
    except RecursionError as exc:  # msgspec follows nesting only as deep as Python's recursion limit
        return json_error_reason(exc)
    metadata = data.metadata or {}
    if not isinstance(metadata, dict):
        return NOT_A_RECORD  # json.loads' reading ends in AttributeError on `.get`, as below
    problem = _undecodable(data.value)
    if problem is not None:
        return problem
    return LogRecord(
        str(data.key),
        number,
        is_error=bool(metadata.get("is_error")),
        is_warning=bool(metadata.get("is_warning")),
        encoded=data.value,
    )


def _undecodable(encoded: msgspec.Raw) -> str | None:
    """Why a value left encoded could not be decoded when read: an integer longer than int() converts
    (json.loads raises ValueError, past 4300 digits by default). Decoded now only where one may be."""
    if not _MAX_DIGITS or len(encoded) <= _MAX_DIGITS or not _LONG_DIGITS.search(memoryview(encoded)):
        return None
    try:
        _decode_value(encoded)
    except ValueError as exc:
        return json_error_reason(exc)
    return None  # the digits were inside a string


def _past_a_double(record: LogRecord) -> LogProblem | None:
    """The problem of a record whose value is an integer past the range of a double (LoadGen writes
    none: its numbers are 64-bit integers or doubles). Decoded only where a long run of digits is."""
    encoded = record.encoded
    if encoded is not None and (len(encoded) < _DOUBLE_DIGITS or not _DOUBLE_RUN.search(memoryview(encoded))):
        return None
    value = record.value
    if isinstance(value, bool) or not isinstance(value, int) or abs(value) <= sys.float_info.max:
        return None
    message = (
        f"holds a :::MLLOG record whose {record.key} is an integer of {len(str(abs(value)))} digits, past "
        f"the largest number a double holds (about {sys.float_info.max:.1e}): LoadGen writes none, and "
        "no reader can take it as a number"
    )
    return LogProblem(record.line, message, record.key)


def _decode_value(encoded: msgspec.Raw) -> Any:
    if not encoded:
        return None  # as `data.get("value")` of a record without one
    try:
        return msgspec.json.decode(encoded)
    except msgspec.MsgspecError:
        return json.loads(bytes(encoded))  # numbers beyond a double: json.loads makes them inf


def _record_by_json(payload: str, number: int) -> LogRecord | str:
    try:
        data = json.loads(payload)
        key = data["key"]
        metadata = data.get("metadata") or {}
        return LogRecord(
            str(key),
            number,
            is_error=bool(metadata.get("is_error")),
            is_warning=bool(metadata.get("is_warning")),
            decoded=data.get("value"),
        )
    except json.JSONDecodeError:
        return NOT_A_RECORD
    except (ValueError, RecursionError) as exc:  # nesting, or an integer past int()'s digits limit
        return json_error_reason(exc)
    except (KeyError, TypeError, AttributeError):
        return NOT_A_RECORD
