"""LoadGen's detail log (`:::MLLOG {json}` lines) parsed once into a typed object.

A line that cannot be read becomes a `LogProblem` with its line number; parsing never raises, so one
garbled line costs a finding, not the run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

MLLOG_PREFIX = ":::MLLOG "


@dataclass(frozen=True)
class LogRecord:
    key: str
    value: Any
    line: int
    is_error: bool = False
    is_warning: bool = False


@dataclass(frozen=True)
class LogProblem:
    line: int
    message: str


@dataclass(frozen=True)
class DetailLog:
    """The first value of every key (as the official checker reads it), errors, warnings, unreadable lines."""

    path: str
    records: dict[str, LogRecord] = field(default_factory=dict)
    errors: tuple[LogRecord, ...] = ()
    warnings: tuple[LogRecord, ...] = ()
    problems: tuple[LogProblem, ...] = ()

    def get(self, key: str, default: Any = None) -> Any:
        record = self.records.get(key)
        return default if record is None else record.value

    def line_of(self, key: str) -> int | None:
        record = self.records.get(key)
        return None if record is None else record.line

    def __contains__(self, key: str) -> bool:
        return key in self.records


def parse_detail_log(text: str, path: str) -> DetailLog:
    records: dict[str, LogRecord] = {}
    errors: list[LogRecord] = []
    warnings: list[LogRecord] = []
    problems: list[LogProblem] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if not line.startswith(MLLOG_PREFIX):
            problems.append(LogProblem(number, "is not a :::MLLOG record"))
            continue
        try:
            payload = json.loads(line[len(MLLOG_PREFIX) :])
            key = payload["key"]
            metadata = payload.get("metadata") or {}
            record = LogRecord(
                str(key),
                payload.get("value"),
                number,
                is_error=bool(metadata.get("is_error")),
                is_warning=bool(metadata.get("is_warning")),
            )
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError):
            problems.append(LogProblem(number, "holds a :::MLLOG record that is not valid JSON with a key"))
            continue
        records.setdefault(record.key, record)
        if record.is_error:
            errors.append(record)
        if record.is_warning:
            warnings.append(record)
    return DetailLog(path, records, tuple(errors), tuple(warnings), tuple(problems))
