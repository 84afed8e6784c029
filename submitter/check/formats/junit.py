"""JUnit XML, as CI systems read test reports (GitLab, Jenkins, GitHub test reporters).

The mapping:
- one `<testsuite>` for the check (inside `<testsuites>`), named after the tree and the round, with the
  round, --strict and the selection as properties;
- one `<testcase>` per result: classname `division/submitter/system`, name `benchmark/scenario`. It fails
  (one `<failure>`, the format's rule: a case fails once) when reported errors concern it: the failure's
  message counts them and names their rules, its text holds one finding per line;
- a result INVALID only by ignored rules is `<skipped>` with the rules in its message: neither a pass that
  would hide the verdict nor a failure the selection asked not to count;
- reported warnings never fail a case (unless --strict made them errors): they are the case's
  `<system-out>`, one finding per line;
- one more `<testcase>` (classname `submission tree`, name `tree`) holds the reported findings that concern
  no result (layout, hygiene, systems without results), failing and reporting as a result's case does.

A finding that concerns several results (a system description's error) is in each of their cases, as it
invalidates each. Paths are from the current directory, as in the other formats for CI.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence

import msgspec

from submitter.check.formats.base import CheckOutput, ResultOutcome
from submitter.check.printable import printable
from submitter.rule_registry import Finding, Severity

TREE_CLASSNAME = "submission tree"
TREE_CASE = "tree"


def format_junit(output: CheckOutput) -> str:
    suite = _suite(output)
    root = ET.Element("testsuites", name="submitter check")
    for attribute in ("tests", "failures", "errors", "skipped", "time"):
        root.set(attribute, suite.get(attribute, "0"))
    root.append(suite)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True)


def _suite(output: CheckOutput) -> ET.Element:
    report = output.report
    suite = ET.Element(
        "testsuite", name=xml_safe(f"submitter check {output.tree_argument} ({report.rules.name})")
    )
    properties = ET.SubElement(suite, "properties")
    for name, value in _properties(output):
        ET.SubElement(properties, "property", name=name, value=value)
    cases = [_result_case(result, output) for result in output.results]
    cases.append(_tree_case(output))
    suite.extend(cases)
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(sum(case.find("failure") is not None for case in cases)))
    suite.set("errors", "0")  # JUnit's errors are crashes of a test; a checker's crash is exit 2, no report
    suite.set("skipped", str(sum(case.find("skipped") is not None for case in cases)))
    suite.set("time", f"{output.seconds:.3f}")
    return suite


def _properties(output: CheckOutput) -> list[tuple[str, str]]:
    found = [("round", output.report.rules.name), ("strict", str(output.report.strict).lower())]
    for layer in output.layers:
        if layer.select is not None:
            found.append((f"select ({layer.source})", ",".join(layer.select)))
        if layer.ignore:
            found.append((f"ignore ({layer.source})", ",".join(layer.ignore)))
    return found


def _result_case(result: ResultOutcome, output: CheckOutput) -> ET.Element:
    row = result.row
    case = ET.Element(
        "testcase",
        classname=xml_safe(f"{row.division}/{row.submitter}/{row.system}"),
        name=xml_safe(f"{row.benchmark}/{row.scenario}"),
        file=xml_safe(output.location(result.scope.results_dir)),
    )
    if result.errors:
        _fail(case, result.errors, output)
    elif result.ignored_rules:
        ET.SubElement(
            case,
            "skipped",
            message=f"INVALID only by ignored rules: {', '.join(result.ignored_rules)} (not reported)",
        )
    _warnings(case, result.warnings, output)
    return case


def _tree_case(output: CheckOutput) -> ET.Element:
    case = ET.Element(
        "testcase", classname=TREE_CLASSNAME, name=TREE_CASE, file=xml_safe(output.location("."))
    )
    findings = output.tree_findings
    errors = [finding for finding in findings if finding.severity is Severity.ERROR]
    if errors:
        _fail(case, errors, output)
    _warnings(case, [finding for finding in findings if finding.severity is Severity.WARNING], output)
    return case


def _fail(case: ET.Element, errors: Sequence[Finding], output: CheckOutput) -> None:
    rules = list(dict.fromkeys(finding.rule for finding in errors))
    failure = ET.SubElement(
        case, "failure", message=f"{len(errors)} error(s): {', '.join(rules)}", type=rules[0]
    )
    failure.text = _lines(errors, output)


def _warnings(case: ET.Element, warnings: Sequence[Finding], output: CheckOutput) -> None:
    if warnings:
        ET.SubElement(case, "system-out").text = _lines(warnings, output)


def _lines(findings: Sequence[Finding], output: CheckOutput) -> str:
    """One finding per line, its file from the current directory, as `check` prints it."""
    return "\n".join(_render(finding, output) for finding in findings)


def _render(finding: Finding, output: CheckOutput) -> str:
    return xml_safe(msgspec.structs.replace(finding, path=output.location(finding.path)).render())


# Characters XML 1.0 cannot hold at all, even escaped: shown as \xNN instead. Lone surrogates, which stand
# for a file name's undecodable bytes, are escaped first, as every format escapes them.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def xml_safe(text: str) -> str:
    return _NOT_XML.sub(lambda match: f"\\x{ord(match.group()):02x}", printable(text))
