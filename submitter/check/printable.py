"""Text taken from a tree, made safe to print and write: bytes that are not UTF-8 shown as `\\xNN`.

A file name that is not UTF-8 reaches Python as lone surrogates (os.fsdecode's surrogateescape: b"\\xff"
is "\\udcff"), and a JSON string may hold lone surrogates of its own ("\\ud800"). No UTF-8 writer takes
them, so every writer of what `check`, `report` and `package` found (the check formats, summary.csv, the
review, package's findings) passes the tree's text through here. Valid text is returned unchanged.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from submitter.rule_registry import Finding

_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPED_BYTES = range(0xDC80, 0xDD00)  # surrogateescape's stand-ins for the bytes 0x80 to 0xff


def printable(text: str) -> str:
    """`text` with each undecodable byte of a file name as \\xNN (as os.fsencode(text).decode("utf-8",
    "backslashreplace") writes it) and any other lone surrogate as \\uNNNN; `text` itself (an enum's
    member stays one) when it has none."""
    return _SURROGATE.sub(_escape, text) if _SURROGATE.search(text) else text


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code - 0xDC00:02x}" if code in _ESCAPED_BYTES else f"\\u{code:04x}"


def printable_finding(finding: Finding) -> Finding:
    return msgspec.structs.replace(
        finding,
        path=printable(finding.path),
        result=None if finding.result is None else printable(finding.result),
        field=None if finding.field is None else printable(finding.field),
        message=printable(finding.message),
        fix=printable(finding.fix),
    )


def printable_data(value: Any) -> Any:
    """A JSON-like value (dicts, lists, tuples, text, findings) with all its text printable."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, Finding):
        return printable_finding(value)
    if isinstance(value, dict):
        return {printable_data(key): printable_data(item) for key, item in value.items()}
    if isinstance(value, list):
        return [printable_data(item) for item in value]
    if isinstance(value, tuple):
        return tuple(printable_data(item) for item in value)
    return value
