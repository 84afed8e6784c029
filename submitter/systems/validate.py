"""Validating system files: a descriptor (`systems/<id>.json`) or an official description from a tree.

Every problem becomes a finding; nothing here raises for bad content, so `validate --all` reports on
every file even when one of them is broken.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from submitter.errors import SubmitterError
from submitter.fileio import JsonFileError, read_json
from submitter.rule_registry import Finding, Severity
from submitter.systems.descriptor import DescriptorFile, SystemDescriptor
from submitter.systems.descriptor_rules import DESCRIPTOR_RULES
from submitter.systems.lint import SYSTEM_RULES, SystemFile


def display_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


# Keys only a descriptor has: no official system description uses them.
DESCRIPTOR_KEYS = frozenset(SystemDescriptor.model_fields)


def is_descriptor(data: Any) -> bool:
    """A descriptor, possibly a broken one: any key of its own (an official file holds none of them)."""
    return isinstance(data, dict) and not DESCRIPTOR_KEYS.isdisjoint(data)


def validate_file(path: Path) -> list[Finding]:
    shown = display_path(path)
    try:
        data = read_json(path)
    except JsonFileError as exc:
        return [
            Finding(
                rule="JSON-SYNTAX",
                severity=Severity.ERROR,
                path=shown,
                line=exc.line,
                message=exc.reason,
                fix=exc.fix,
            )
        ]
    if is_descriptor(data):
        return _validate_descriptor(path, shown, data)
    if not isinstance(data, dict):
        return [
            Finding(
                rule="SYS-SCHEMA",
                severity=Severity.ERROR,
                path=shown,
                message="must hold one JSON object",
                fix='write the description as {"key": value, ...}',
            )
        ]
    return SYSTEM_RULES.run(SystemFile(path=shown, system_id=path.stem, data=data))


def _validate_descriptor(path: Path, shown: str, data: dict[str, Any]) -> list[Finding]:
    try:
        descriptor = SystemDescriptor.model_validate(data)
    except ValidationError as exc:
        findings = [_schema_finding(shown, error) for error in exc.errors()]
        system = data.get("system")
        if isinstance(system, dict):
            system_id = str(data.get("system_desc_id") or path.stem)
            unfilled = frozenset(key for key, value in system.items() if value is None)
            findings += SYSTEM_RULES.run(SystemFile(shown, system_id, system, unfilled))
        return findings
    return [
        *DESCRIPTOR_RULES.run(DescriptorFile(path=shown, file_stem=path.stem, descriptor=descriptor)),
        *SYSTEM_RULES.run(descriptor.system_file(shown)),
    ]


def _schema_finding(shown: str, error: Any) -> Finding:
    field = ".".join(str(part) for part in error["loc"])
    if error["type"] == "missing":
        message, fix = "is missing", "add it (`submitter systems show demo_cpu` prints a complete descriptor)"
    elif error["type"] == "extra_forbidden":
        message, fix = "is not a descriptor key", "remove it or correct its spelling"
    else:
        message, fix = f"is {error['input']!r}: {error['msg']}", "correct the value"
    return Finding(
        rule="DESC-SCHEMA", severity=Severity.ERROR, path=shown, field=field, message=message, fix=fix
    )


def load_descriptor(path: Path) -> SystemDescriptor:
    """A descriptor to work with; raises one readable error when the file is not a valid descriptor."""
    data = read_json(path)
    if not is_descriptor(data):
        raise SubmitterError(
            f"{display_path(path)} is not a system descriptor (it has none of the keys "
            f"{', '.join(sorted(DESCRIPTOR_KEYS))}); an official system description is checked with "
            "`submitter systems validate PATH`"
        )
    try:
        return SystemDescriptor.model_validate(data).read_from(display_path(path))
    except ValidationError as exc:
        shown = display_path(path)
        findings = [_schema_finding(shown, error) for error in exc.errors()]
        problems = "; ".join(f"{finding.field} {finding.message}" for finding in findings)
        raise SubmitterError(
            f"{shown} is not a valid descriptor: {problems}. "
            f"`submitter systems validate {shown}` says how to fix each"
        ) from None
