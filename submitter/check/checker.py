"""`check_tree`: the checker's one entry point, from a path to findings and per-result verdicts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import submitter.check.rules  # noqa: F401  (registers every rule)
from submitter.check.context import (
    RESULT_RULES,
    TREE_RULES,
    ResultContext,
    SystemKey,
    TreeContext,
    system_json_path,
)
from submitter.check.detect import Detection, detect_round, tree_layout
from submitter.check.load import JsonFile, TreeReader, index_files, load_entry
from submitter.check.rules.system import system_findings
from submitter.check.summary import ResultRow, summarise
from submitter.check.tree import ResultEntry, discover, locate
from submitter.rounds.models import RoundRules
from submitter.rounds.registry import load_round
from submitter.rules import Finding, Severity


@dataclass(frozen=True)
class CheckReport:
    rules: RoundRules
    detection: Detection | None
    findings: list[Finding]
    results: list[ResultRow]

    @property
    def errors(self) -> int:
        return sum(finding.severity is Severity.ERROR for finding in self.findings)


def check_tree(path: Path, round_name: str | None = None, submitter: str | None = None) -> CheckReport:
    scope = locate(path, submitter)
    index = index_files(scope)
    entries = discover(scope)
    reader = TreeReader(scope.root, index)
    detection = None
    if round_name is None:
        # Performance logs sit in the same place in every layout: they can be read before the round is known.
        any_layout = load_round("v6.1").layout
        logs = [reader.detail_log(entry.relative(entry.performance_log(any_layout))) for entry in entries]
        layout = tree_layout(index, scope.submitter_folders())
        detection = detect_round([log for log in logs if log is not None], layout)
        rules = load_round(detection.round)
    else:
        rules = load_round(round_name)

    loaded = [load_entry(reader, entry, rules.layout) for entry in entries]
    system_keys = sorted({(e.division, e.submitter, e.system) for e in entries})
    systems = {key: reader.json(system_json_path(rules, *key)) for key in system_keys}
    tree = TreeContext(
        scope=scope,
        rules=rules,
        detection=detection,
        index=index,
        entries=tuple(loaded),
        systems=systems,
        unreadable=reader.problems,
    )
    contexts = [
        ResultContext(files=files, rules=rules, index=index, system=_system_data(systems, files.entry))
        for files in loaded
    ]
    findings = [*TREE_RULES.run(tree), *system_findings(tree)]
    for context in contexts:
        findings.extend(RESULT_RULES.run(context))
    return CheckReport(rules, detection, findings, summarise(contexts, findings))


def _system_data(systems: Mapping[SystemKey, JsonFile | None], entry: ResultEntry) -> dict[str, Any] | None:
    loaded = systems.get((entry.division, entry.submitter, entry.system))
    return loaded.data if loaded is not None and isinstance(loaded.data, dict) else None
