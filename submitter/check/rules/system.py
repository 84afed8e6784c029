"""System description rules for the systems of a tree (checker.md §7).

The official checks stay errors; the lint of `systems validate` that goes beyond them (placeholders,
memory type, counts written as text, accelerator count in the id, ...) reports as warnings here,
because published trees carry such descriptions and the official checker accepts them.
"""

from __future__ import annotations

from collections.abc import Iterator

from submitter.check.context import TREE_RULES, TreeContext, system_json_path
from submitter.rule_registry import Finding, Problem, Rule, Severity
from submitter.systems.lint import SYSTEM_RULES, SystemFile

rule = TREE_RULES.rule

# The lint rules that are the official checker's own checks (system_check.py and the summary writer).
OFFICIAL_SYSTEM_RULES = frozenset(
    {"SYS-MISSING", "SYS-EMPTY", "SYS-STATUS", "SYS-SYSTEM-TYPE", "SYS-COUNT", "SYS-NETWORK"}
)


def severity_in_check(rule: Rule[SystemFile]) -> Severity:
    """A system lint rule's severity in `check`: the official checks keep theirs, the rest warn."""
    return rule.severity if rule.id in OFFICIAL_SYSTEM_RULES else Severity.WARNING


@rule("SYS-FILE", Severity.ERROR, "every system with results has a readable description")
def system_files(tree: TreeContext) -> Iterator[Problem]:
    for (division, submitter, system), loaded in tree.systems.items():
        path = system_json_path(tree.rules, division, submitter, system)
        if loaded is None:
            yield Problem(
                path=path,
                message=f"is missing (results/{system} needs it; the official checker crashes)",
                fix="write the system description (submitter systems show ID --official)",
            )
        elif loaded.problem is not None:
            yield Problem(path=path, message=loaded.problem, fix=loaded.fix)
        elif not isinstance(loaded.data, dict):
            yield Problem(path=path, message="must hold one JSON object", fix='write {"key": value, ...}')


def system_findings(tree: TreeContext) -> list[Finding]:
    """The system lint on every description: official checks as errors, the rest as warnings."""
    findings = []
    for (division, submitter, system), loaded in tree.systems.items():
        if loaded is None or not isinstance(loaded.data, dict):
            continue
        path = system_json_path(tree.rules, division, submitter, system)
        described = SystemFile(path=path, system_id=system, data=loaded.data, rules=tree.rules.system)
        for finding in SYSTEM_RULES.run(described):
            findings.append(finding.with_severity(severity_in_check(SYSTEM_RULES[finding.rule])))
    return findings


@rule("SYS-DIRECTORY", Severity.ERROR, "division and submitter in the description match their directories")
def matches_directories(tree: TreeContext) -> Iterator[Problem]:
    for (division, submitter, system), loaded in tree.systems.items():
        if loaded is None or not isinstance(loaded.data, dict):
            continue
        path = system_json_path(tree.rules, division, submitter, system)
        for key, expected in (("division", division), ("submitter", submitter)):
            if key not in loaded.data:
                continue  # SYS-MISSING speaks for it
            found = loaded.data[key]
            if not isinstance(found, str) or found.lower() != expected.lower():
                yield Problem(
                    path=path,
                    field=key,
                    message=f"is {found!r} but the directory is {expected!r}",
                    fix=f'write "{expected}" or move the tree',
                )


@rule("SYS-HAS-RESULTS", Severity.WARNING, "every system description in systems/ has results")
def descriptions_have_results(tree: TreeContext) -> Iterator[Problem]:
    described = {key for key in tree.systems}
    for path in tree.index.files:
        if path.count("/") != 3 or not path.endswith(".json"):
            continue
        parts = path.split("/")
        if parts[2] == "systems":
            key = (parts[0], parts[1], parts[3].removesuffix(".json"))
            if key not in described:
                yield Problem(
                    path=path,
                    message="describes a system with no results/ directory (the older official checker "
                    "rejects it)",
                    fix="remove it, or add the system's results",
                )
