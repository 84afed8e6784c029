"""The detail-log parser reads every record as json.loads does, edge cases included, whatever decodes it."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from submitter.fileformats.mlperf_log import parse_detail_log

SHARED_LOGS = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "v5.1" / "closed" / "RedHat"

EDGE_RECORDS = [
    '{"key": "plain", "value": 1, "metadata": {"is_error": false}}',
    '{"key": "not_a_number", "value": NaN}',
    '{"key": "beyond_a_double", "value": 1e400}',
    '{"key": "huge_int", "value": 123456789012345678901234567890}',
    '{"key": "twice", "value": 1, "key": "renamed"}',
    '{"key": "surrogate", "value": "\\ud800"}',
    '{"key": "an_error", "value": "boom", "metadata": {"is_error": true, "is_warning": 1}}',
    '{"key": "empty_metadata", "value": 2, "metadata": []}',
    '{"key": "list_metadata", "value": 3, "metadata": [1]}',
    '{"key": "text_metadata", "value": 4, "metadata": "x"}',
    '{"key": null, "value": 5}',
    '{"value": "no key"}',
    "[1, 2]",
    '{"key": "cut", "val',
]


def reference_reading(payload: str) -> tuple[str, Any, bool, bool] | None:
    """What the official checker's reading of one record yields: json.loads, then the key and metadata."""
    try:
        data = json.loads(payload)
        metadata = data.get("metadata") or {}
        return (
            str(data["key"]),
            data.get("value"),
            bool(metadata.get("is_error")),
            bool(metadata.get("is_warning")),
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def _same(a: Any, b: Any) -> bool:
    return (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)) or a == b


@pytest.mark.parametrize("payload", EDGE_RECORDS)
def test_each_record_reads_as_json_loads_reads_it(payload):
    log = parse_detail_log(f":::MLLOG {payload}\n", "log")
    expected = reference_reading(payload)
    if expected is None:
        assert [p.line for p in log.problems] == [1] and not log.records
        return
    [record] = log.records.values()
    assert record.key == expected[0] and _same(record.value, expected[1])
    assert (record.is_error, record.is_warning) == expected[2:]
    assert (record in log.errors, record in log.warnings) == expected[2:]


def test_real_logs_read_record_for_record_as_json_loads_reads_them():
    logs = sorted(SHARED_LOGS.rglob("mlperf_log_detail.txt"))
    if not logs:
        pytest.skip("../shared/fixtures is not beside this checkout")
    for path in logs:
        text = path.read_text(encoding="utf-8")
        log = parse_detail_log(text, str(path))
        expected: dict[str, tuple[str, Any, bool, bool]] = {}
        for line in text.splitlines():
            if line.startswith(":::MLLOG "):
                reading = reference_reading(line[len(":::MLLOG ") :])
                assert reading is not None
                expected.setdefault(reading[0], reading)
        assert set(log.records) == set(expected)
        for key, record in log.records.items():
            assert _same(record.value, expected[key][1]), key
            assert (record.is_error, record.is_warning) == expected[key][2:]
