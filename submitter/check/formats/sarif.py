"""SARIF 2.1.0 (OASIS), the format code scanning reads (GitHub's `upload-sarif`, IDE viewers).

One run: the tool's driver names the rules that appear (id, short description, the level the rule has in
`check`); each reported finding is a result with its rule's id and index, its level (--strict makes every
finding an error, above a warning rule's default level), its message, and its file relative to the
current directory (a relative URI reference, percent-encoded) with the line when known. Results INVALID
only by ignored rules are listed in the run's property bag, as `invalidOnlyByIgnoredRules`.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from submitter import __version__
from submitter.check.formats.base import CheckOutput, finding_text
from submitter.check.printable import printable_data
from submitter.rule_registry import Finding

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
TOOL_NAME = "submitter"
# The project publishes no page of its own yet; the rules it checks are MLCommons' submission rules.
INFORMATION_URI = "https://github.com/mlcommons/inference_policies/blob/master/submission_rules.adoc"


def format_sarif(output: CheckOutput) -> str:
    return json.dumps(printable_data(sarif_log(output)), indent=2, ensure_ascii=False)


def sarif_log(output: CheckOutput) -> dict[str, Any]:
    rule_ids = list(dict.fromkeys(finding.rule for finding in output.reported))
    index = {rule_id: position for position, rule_id in enumerate(rule_ids)}
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": TOOL_NAME,
                "version": __version__,
                "informationUri": INFORMATION_URI,
                "rules": [_rule(rule_id, output) for rule_id in rule_ids],
            }
        },
        "results": [_result(finding, index[finding.rule], output) for finding in output.reported],
        "properties": {
            "round": output.report.rules.name,
            "strict": output.report.strict,
            "invalidOnlyByIgnoredRules": [
                {"result": result.scope.id, "rules": list(result.ignored_rules)}
                for result in output.hidden_invalid
            ],
        },
    }
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def _rule(rule_id: str, output: CheckOutput) -> dict[str, Any]:
    info = output.rules.get(rule_id)
    descriptor: dict[str, Any] = {"id": rule_id}
    if info is not None:
        descriptor["shortDescription"] = {"text": info.summary}
        descriptor["defaultConfiguration"] = {"level": str(info.severity)}
    return descriptor


def _result(finding: Finding, rule_index: int, output: CheckOutput) -> dict[str, Any]:
    # surrogateescape: a file name of undecodable bytes is encoded as those bytes, as the URI must.
    uri = quote(output.location(finding.path), errors="surrogateescape")
    physical: dict[str, Any] = {"artifactLocation": {"uri": uri}}
    if finding.line:
        physical["region"] = {"startLine": finding.line}
    return {
        "ruleId": finding.rule,
        "ruleIndex": rule_index,
        "level": str(finding.severity),
        "message": {"text": finding_text(finding)},
        "locations": [{"physicalLocation": physical}],
    }
