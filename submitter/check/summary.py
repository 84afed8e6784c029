"""Per-result verdicts, the results table, and the official summary.csv (shared/spec/checker.md §12).

A row says what the official checker's writer says, value for value: the submitter folder's name, the
description's values as Python prints them, the benchmark folder's name beside the benchmark it
resolves to, notes joined only when there are software notes, `inferred` compared case-sensitively,
the metric in the scenario's units (ms for stream latencies), and a second row for a power result.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from msgspec import Struct

from submitter.check.context import PerformanceRun, ResultContext, system_json_path
from submitter.check.metric import performance_metric
from submitter.check.printable import printable
from submitter.check.rules.power import design_power_watts, result_power_metric
from submitter.rounds.models import Scenario
from submitter.rule_registry import Finding, Severity

CSV_COLUMNS = (
    "Organization",
    "Availability",
    "Division",
    "SystemType",
    "SystemName",
    "Platform",
    "Model",
    "MlperfModel",
    "Scenario",
    "Result",
    "Accuracy",
    "number_of_nodes",
    "host_processor_model_name",
    "host_processors_per_node",
    "host_processor_core_count",
    "accelerator_model_name",
    "accelerators_per_node",
    "total_accelerators",
    "Location",
    "framework",
    "operating_system",
    "notes",
    "compliance",
    "errors",
    "version",
    "inferred",
    "has_power",
    "Units",
    "weight_data_types",
    "design_power_watts",
    "PrivateID",
)


class ResultRow(Struct, frozen=True):
    division: str
    submitter: str
    system: str
    benchmark: str
    scenario: str
    metric: float | None
    units: str | None  # the unit of `metric` (summary.csv's rows keep the official label)
    valid: bool
    csv: tuple[dict[str, str], ...]  # the official summary rows of a valid result (two with power)

    def as_json(self) -> dict[str, Any]:
        return {
            "division": self.division,
            "submitter": self.submitter,
            "system": self.system,
            "benchmark": self.benchmark,
            "scenario": self.scenario,
            "metric": self.metric,
            "units": self.units,
            "verdict": "valid" if self.valid else "invalid",
        }


def summarise(contexts: Iterable[ResultContext], findings: Iterable[Finding]) -> list[ResultRow]:
    """A result is valid when no error belongs to it: an error about it, about a file in its folders, about
    its system's description, or about a folder that holds it (a missing code folder or a missing required
    scenario invalidates them all, as officially)."""
    errors = [finding for finding in findings if finding.severity is Severity.ERROR]
    failing_results = {finding.result for finding in errors if finding.result}
    failing_paths = {finding.path for finding in errors}
    rows = []
    for ctx in contexts:
        entry = ctx.entry
        metric = _metric(ctx)
        valid = entry.id not in failing_results and metric is not None and not _fails(ctx, failing_paths)
        # summary.csv names the official unit; everything else says what the number is (whisper's tokens).
        official = ctx.rules.units(ctx.bench, ctx.scenario) if ctx.scenario else None
        units = ctx.rules.result_units(ctx.bench, ctx.scenario) if ctx.scenario else None
        rows.append(
            ResultRow(
                entry.division,
                entry.submitter,
                entry.system,
                entry.benchmark,
                entry.scenario,
                metric,
                units,
                valid,
                _csv_rows(ctx, metric, official) if valid else (),
            )
        )
    return rows


def _fails(ctx: ResultContext, failing_paths: set[str]) -> bool:
    entry = ctx.entry
    own = {ctx.path, ctx.files.measurements_dir, ctx.files.compliance_dir}
    if system_json_path(ctx.rules, entry.division, entry.submitter, entry.system) in failing_paths:
        return True
    for path in failing_paths:
        if ctx.path.startswith(f"{path}/") or any(
            path == mine or path.startswith(f"{mine}/") for mine in own
        ):
            return True
    return False


def _metric(ctx: ResultContext) -> float | None:
    log = ctx.files.performance_log
    if log is None:
        return None
    run = PerformanceRun(log, ctx.perf_log_path, ctx)
    return performance_metric(
        log, ctx.rules, ctx.bench, run.logged_scenario, ctx.entry.scenario, ctx.endpoints, run.scenario_name
    ).value


def _csv_rows(ctx: ResultContext, metric: float | None, units: str | None) -> tuple[dict[str, str], ...]:
    entry, system = ctx.entry, ctx.system or {}
    log = ctx.files.performance_log
    measurements = ctx.files.measurements.data if ctx.files.measurements else None
    scenario = "server" if ctx.endpoints and entry.scenario.lower() == "online" else entry.scenario
    logged = log.get("effective_scenario") if log else None
    power = ctx.files.power_files is not None
    row = {
        "Organization": entry.submitter,
        "Availability": system.get("status"),
        "Division": entry.division,
        "SystemType": system.get("system_type"),
        "SystemName": system.get("system_name"),
        "Platform": entry.system,
        "Model": entry.benchmark,
        "MlperfModel": ctx.files.benchmark,
        "Scenario": scenario,
        "Result": metric,
        "Accuracy": _accuracy_text(ctx),
        "number_of_nodes": system.get("number_of_nodes"),
        "host_processor_model_name": system.get("host_processor_model_name"),
        "host_processors_per_node": system.get("host_processors_per_node"),
        "host_processor_core_count": system.get("host_processor_core_count"),
        "accelerator_model_name": system.get("accelerator_model_name"),
        "accelerators_per_node": system.get("accelerators_per_node"),
        "total_accelerators": _total_accelerators(system),
        "Location": str(entry.root / ctx.files.performance_dir),
        "framework": system.get("framework"),
        "operating_system": system.get("operating_system"),
        "notes": _notes(system),
        "compliance": entry.division,
        "errors": 0,
        "version": ctx.rules.checker_version_flag,
        "inferred": 1 if scenario != logged and (logged, scenario) != ("server", "interactive") else 0,
        "has_power": power,
        "Units": units or "",
        "weight_data_types": measurements.get("weight_data_types") if isinstance(measurements, dict) else "",
        "design_power_watts": design_power_watts(ctx),
        "PrivateID": "",
    }
    rows = [{column: f"{row[column]}" for column in CSV_COLUMNS}]
    if power:
        watts = result_power_metric(ctx)
        power_units = ctx.rules.results.power_units.get(Scenario.from_name(scenario)) if scenario else None
        rows.append({**rows[0], "Result": f"{watts}", "Units": power_units or ""})
    return tuple(rows)


def _total_accelerators(system: dict[str, Any]) -> str:
    try:
        return str(int(system.get("number_of_nodes")) * int(system.get("accelerators_per_node")))  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return ""


def _notes(system: dict[str, Any]) -> object:
    """hw_notes, then ". " and sw_notes when there are software notes (the official writer's join)."""
    notes = system.get("hw_notes", "")
    software = system.get("sw_notes")
    if software:
        notes = (f"{notes}. " if notes else "") + f"{software}"
    return notes


def _accuracy_text(ctx: ResultContext) -> str:
    """The official format: the JSON of {metric: value} without quotes and braces, commas as spaces."""
    if ctx.files.endpoints is not None:
        scores = ctx.files.endpoints.accuracy_scores
        shown: object = scores[0] if scores else None
    else:
        judgement = ctx.accuracy_judgement
        if judgement is None:
            return ""
        shown = judgement.reported
    text = json.dumps(shown).replace(",", " ").replace('"', "").replace("{", "").replace("}", "")
    return text.strip()


def csv_text(rows: Iterable[ResultRow]) -> str:
    lines = [",".join(CSV_COLUMNS)]
    for row in rows:
        for csv_row in row.csv:
            lines.append(",".join(csv_field(csv_row[column]) for column in CSV_COLUMNS))
    return printable("\n".join(lines) + "\n")  # folder names and descriptions may hold undecodable bytes


def csv_field(value: str) -> str:
    """A field as RFC 4180 writes it: quoted, as the official writer quotes every field, and a quote inside
    doubled, which the official writer leaves (published values hold none, so its rows are unchanged): a
    description holding a quote, a comma or a line break reads back as written."""
    return '"' + value.replace('"', '""') + '"'
