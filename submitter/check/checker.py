"""`check_tree`: the checker's one entry point, from a path to findings and per-result verdicts."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from msgspec import Struct

import submitter.check.rules  # noqa: F401  (registers every rule)
from submitter.check.context import (
    PERFORMANCE_RULES,
    RESULT_RULES,
    TREE_RULES,
    PerformanceRun,
    ResultContext,
    SystemKey,
    TreeContext,
    system_json_path,
)
from submitter.check.detect import Detection, detect_tree_round
from submitter.check.load import (
    EntryFiles,
    FileIndex,
    JsonFile,
    TreeReader,
    index_files,
    load_entry,
    open_model_mapping,
)
from submitter.check.rules.system import system_findings
from submitter.check.summary import ResultRow, summarise
from submitter.check.tree import discover, locate
from submitter.fileio import YAML_ALIAS_FIX, YamlAliasError, load_yaml_text
from submitter.rounds.models import RoundRules
from submitter.rounds.registry import load_round
from submitter.rule_registry import Finding, Severity


class CheckReport(Struct, frozen=True):
    rules: RoundRules
    detection: Detection | None
    findings: list[Finding]
    results: list[ResultRow]
    index: FileIndex  # every file of the tree, for `package` to scan and archive
    strict: bool = False
    # What was read and judged, for documents built on the check (the review): each result's context,
    # in the order of `results`, and each system's description.
    contexts: tuple[ResultContext, ...] = ()
    systems: Mapping[SystemKey, JsonFile | None] = {}

    @property
    def errors(self) -> int:
        return sum(finding.severity is Severity.ERROR for finding in self.findings)

    @property
    def entries(self) -> tuple[EntryFiles, ...]:
        """Each result's files, in the order of `results`."""
        return tuple(context.files for context in self.contexts)


def check_tree(
    path: Path, round_name: str | None = None, submitter: str | None = None, strict: bool = False
) -> CheckReport:
    """Check a tree. `strict` holds the warnings (form: wording, hygiene, extra files) as errors too."""
    scope = locate(path, submitter)
    index = index_files(scope)
    entries = discover(scope)
    reader = TreeReader(scope.root, index)
    detection = detect_tree_round(reader, entries) if round_name is None else None
    rules = load_round(detection.round if detection else round_name)  # type: ignore[arg-type]

    mappings = {
        (folder.parent.name, folder.name): open_model_mapping(reader, rules, folder.parent.name, folder.name)
        for folder in scope.submitter_dirs()
    }
    loaded = [
        load_entry(reader, entry, rules, _mapping(mappings.get((entry.division, entry.submitter))))
        for entry in entries
    ]
    system_keys = sorted({entry.system_key for entry in entries})
    systems = {key: reader.json(system_json_path(rules, *key)) for key in system_keys}
    nameplates = _nameplates(reader, rules, system_keys, loaded)
    tree = TreeContext(
        scope=scope,
        rules=rules,
        detection=detection,
        index=index,
        entries=tuple(loaded),
        systems=systems,
        unreadable=reader.problems,
        model_mappings=mappings,
        nameplates=nameplates,
    )
    contexts = [
        ResultContext(
            files=files,
            rules=rules,
            index=index,
            system=_data(systems.get(files.entry.system_key)),
            nameplate_file=nameplates.get(files.entry.system_key),
        )
        for files in loaded
    ]
    findings = [*TREE_RULES.run(tree), *system_findings(tree)]
    for context in contexts:
        findings.extend(RESULT_RULES.run(context))
        for run in _performance_runs(context):
            findings.extend(PERFORMANCE_RULES.run(run))
    if strict:
        findings = [finding.with_severity(Severity.ERROR) for finding in findings]
    return CheckReport(
        rules, detection, findings, summarise(contexts, findings), index, strict, tuple(contexts), systems
    )


def _performance_runs(context: ResultContext) -> list[PerformanceRun]:
    """The result's own run, and the performance runs of its TEST01/TEST04 audits (closed divisions)."""
    runs = [PerformanceRun(context.files.performance_log, context.perf_log_path, context)]
    if not context.closed or context.endpoints:
        return runs
    for test, audit in context.files.audits.items():
        rules = context.rules.compliance[test]
        if rules.performance_run and audit.performance_log is not None:
            path = f"{audit.folder}/{rules.performance_run}/mlperf_log_detail.txt"
            runs.append(PerformanceRun(audit.performance_log, path, context, audit=test))
    return runs


def _mapping(loaded: JsonFile | None) -> dict[str, str]:
    data = loaded.data if loaded is not None else None
    return data if isinstance(data, dict) else {}


def _data(loaded: JsonFile | None) -> Any:
    return loaded.data if loaded is not None and isinstance(loaded.data, dict) else None


def _nameplates(
    reader: TreeReader, rules: RoundRules, keys: list[SystemKey], loaded: list[EntryFiles]
) -> Mapping[SystemKey, JsonFile | None]:
    """The nameplate power YAML of systems with power results, in rounds that have one (v6.1)."""
    template = rules.layout.nameplate_power
    with_power = {files.entry.system_key for files in loaded if files.power_files is not None}
    if template is None or not with_power:
        return {}
    found: dict[SystemKey, JsonFile | None] = {}
    for key in keys:
        path = template.format(division=key[0], submitter=key[1], system=key[2])
        text = reader.text(path) if key in with_power else None
        found[key] = None if text is None else _yaml(path, text)
    return found


def _yaml(path: str, text: str) -> JsonFile:
    import yaml  # only power results of v6.1 need it

    try:
        return JsonFile(path, load_yaml_text(text))
    except YamlAliasError as exc:  # what it stands for holds itself, or is vast: no walk of it would end
        return JsonFile(path, problem=f"cannot be read: {exc}", fix=YAML_ALIAS_FIX)
    except yaml.YAMLError as exc:
        return JsonFile(
            path, problem=f"is not valid YAML ({type(exc).__name__})", fix="correct the YAML syntax"
        )
    except RecursionError:
        return JsonFile(path, problem="is nested too deeply to read")
    except ValueError as exc:  # PyYAML's int() of a number past Python's 4300 digits, or a 13th month
        return JsonFile(path, problem=f"is not valid YAML ({str(exc).partition(';')[0]})")
