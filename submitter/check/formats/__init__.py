"""The formats `submitter check` writes its report in, one module each, found by name in `FORMATS`.

A format is a function from a `CheckOutput` (formats/base.py: the report, the findings selection reports,
each result's standing, where files are from the current directory) to the text to print or write. The
registry names each by "module:function" and imports it only when used, so `check` pays for the format it
writes and no other (xml.etree for junit, for example). Adding a format: a module here and a line below;
the command's `--format` choices and the configuration file's `format` key follow.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from submitter.check.formats.base import CheckOutput

Formatter = Callable[["CheckOutput"], str]


class Format(NamedTuple):
    target: str  # "module:function"
    summary: str


FORMATS: dict[str, Format] = {
    "text": Format(
        "submitter.check.formats.text:format_text", "one line per finding, a count, and the results table"
    ),
    "json": Format("submitter.check.formats.json_report:format_json", "one JSON document (schema_version 2)"),
    "github": Format(
        "submitter.check.formats.github:format_github",
        "GitHub Actions workflow commands: an annotation per finding",
    ),
    "junit": Format(
        "submitter.check.formats.junit:format_junit",
        "JUnit XML: a test case per result, failing with its errors",
    ),
    "sarif": Format("submitter.check.formats.sarif:format_sarif", "SARIF 2.1.0, for code scanning"),
}
DEFAULT_FORMAT = "text"


def formatter(name: str) -> Formatter:
    module, _, function = FORMATS[name].target.partition(":")
    found: Formatter = getattr(importlib.import_module(module), function)
    return found
