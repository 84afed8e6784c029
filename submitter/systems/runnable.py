"""The policy for every command that runs or stages a system: its descriptor is refused while the harness
setup has errors (an input error, exit 2); its warnings are handed back to be shown."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from submitter.errors import SubmitterError, UsageProblem
from submitter.rule_registry import Finding, Severity
from submitter.systems.catalog import descriptor_path
from submitter.systems.descriptor import DescriptorFile, SystemDescriptor
from submitter.systems.descriptor_rules import DESCRIPTOR_RULES
from submitter.systems.validate import display_path, load_descriptor, validate_file


@dataclass(frozen=True)
class RunnableDescriptor:
    descriptor: SystemDescriptor
    warnings: list[Finding]


def descriptor_file(system_id: str) -> Path:
    """The descriptor file a command names: a path ending in .json, or an id found in the catalog."""
    return Path(system_id) if system_id.endswith(".json") else descriptor_path(system_id)


def load_runnable_descriptor(system_id: str, round_name: str | None = None) -> RunnableDescriptor:
    """The descriptor named by id or path, refused while its harness setup has errors.

    `round_name` runs the system in another round than its descriptor's (a benchmark that round has and
    the descriptor's has not); the setup is then checked against that round. Whatever is wrong with the
    descriptor (not found, malformed, an unknown round) is an input error: UsageProblem, exit 2."""
    path = descriptor_file(system_id)
    try:
        descriptor = load_descriptor(path)
    except UsageProblem:
        raise
    except SubmitterError as exc:  # not a descriptor, or not a valid one
        raise UsageProblem(str(exc)) from None
    if round_name is not None and round_name != descriptor.round:
        descriptor = descriptor.model_copy(update={"round": round_name})
        entry = DescriptorFile(path=display_path(path), file_stem=path.stem, descriptor=descriptor)
        findings = DESCRIPTOR_RULES.run(entry)
    else:
        descriptor_rules = {rule.id for rule in DESCRIPTOR_RULES}
        findings = [finding for finding in validate_file(path) if finding.rule in descriptor_rules]
    errors = [finding.render() for finding in findings if finding.severity is Severity.ERROR]
    if errors:
        raise UsageProblem(f"{path} has errors; fix them before running:\n" + "\n".join(errors))
    return RunnableDescriptor(descriptor, findings)
