"""GitHub Actions workflow commands: `::error file=…,line=…,title=RULE-ID::message` per finding, which the
runner turns into annotations on the files of the pull request.

Paths are from the current directory (the job's working directory is the repository's root); a finding
without a line leaves `line` out. Values are escaped as the runner unescapes them (actions/toolkit's
command.ts): data `%` `\\r` `\\n`; properties also `:` and `,`. A result INVALID only by ignored rules gets a
`::notice` on its folder, so a narrowed run does not look clean.
"""

from __future__ import annotations

from collections.abc import Mapping

from submitter.check.formats.base import CheckOutput, ResultOutcome, finding_text
from submitter.check.printable import printable
from submitter.rule_registry import Finding


def escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def workflow_command(command: str, properties: Mapping[str, str], message: str) -> str:
    listed = ",".join(f"{name}={escape_property(value)}" for name, value in properties.items())
    return f"::{command} {listed}::{escape_data(message)}"


def format_github(output: CheckOutput) -> str:
    lines = [_annotation(finding, output) for finding in output.reported]
    lines.extend(_hidden_verdict(result, output) for result in output.hidden_invalid)
    return printable("\n".join(lines))


def _annotation(finding: Finding, output: CheckOutput) -> str:
    properties = {"file": output.location(finding.path)}
    if finding.line:
        properties["line"] = str(finding.line)
    properties["title"] = finding.rule
    return workflow_command(str(finding.severity), properties, finding_text(finding))


def _hidden_verdict(result: ResultOutcome, output: CheckOutput) -> str:
    rules = ", ".join(result.ignored_rules)
    return workflow_command(
        "notice",
        {"file": output.location(result.scope.results_dir), "title": "INVALID (ignored rules)"},
        f"{result.scope.id} is INVALID by rules this run does not report: {rules}",
    )
