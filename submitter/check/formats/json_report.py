"""The JSON report: one document on stdout (`--format json`, or `--json`).

schema_version 2 as before; fields added since, none changed: `selection` (the layers of --select and
--ignore, from the configuration file and the command line), `not_reported` (how many findings the
selection left out; `findings` holds the reported ones), and per result `invalid_only_by_ignored_rules`
with the `ignored_rules` that alone make it invalid.
"""

from __future__ import annotations

import json
from typing import Any

from submitter.check.formats.base import CheckOutput, ResultOutcome
from submitter.check.printable import printable_data
from submitter.rule_registry import findings_as_json

# 2: results name their division and submitter, and findings name their result with both.
JSON_SCHEMA_VERSION = 2


def format_json(output: CheckOutput) -> str:
    return json.dumps(printable_data(json_document(output)), indent=2, ensure_ascii=False)


def json_document(output: CheckOutput) -> dict[str, Any]:
    report = output.report
    return {
        "schema_version": JSON_SCHEMA_VERSION,
        "round": report.rules.name,
        "strict": report.strict,
        "detected": None if report.detection is None else report.detection.reason,
        "selection": [
            {
                "source": layer.source,
                "select": None if layer.select is None else list(layer.select),
                "ignore": list(layer.ignore),
            }
            for layer in output.layers
        ],
        "findings": findings_as_json(output.reported),
        "not_reported": len(output.not_reported),
        "results": [_result(result) for result in output.results],
    }


def _result(result: ResultOutcome) -> dict[str, Any]:
    return {
        **result.row.as_json(),
        "invalid_only_by_ignored_rules": result.invalid_only_by_ignored_rules,
        "ignored_rules": list(result.ignored_rules),
    }
