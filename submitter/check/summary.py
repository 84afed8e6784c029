"""Per-result verdicts, the results table, and the official summary.csv (shared/spec/checker.md §12)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from submitter.check.context import ResultContext, system_json_path
from submitter.rules import Finding, Severity

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


@dataclass(frozen=True)
class ResultRow:
    system: str
    benchmark: str
    scenario: str
    metric: float | None
    units: str | None
    valid: bool
    csv: dict[str, str] | None  # the official summary row, for valid results

    def as_json(self) -> dict[str, Any]:
        return {
            "system": self.system,
            "benchmark": self.benchmark,
            "scenario": self.scenario,
            "metric": self.metric,
            "units": self.units,
            "verdict": "valid" if self.valid else "invalid",
        }


def summarise(contexts: Iterable[ResultContext], findings: Iterable[Finding]) -> list[ResultRow]:
    """A result is valid when no error belongs to it, to its system, or to a folder that holds it
    (a missing code folder or a missing required scenario invalidates them all, as officially)."""
    failing_results = {f.result for f in findings if f.severity is Severity.ERROR and f.result}
    failing_paths = {f.path for f in findings if f.severity is Severity.ERROR}
    rows = []
    for ctx in contexts:
        entry, bench, scenario = ctx.files.entry, ctx.bench, ctx.scenario
        key = bench.result_keys.get(scenario) if bench and scenario else None
        log = ctx.files.performance_log
        metric = log.get(key) if log is not None and key else None
        metric = float(metric) if isinstance(metric, int | float) and not isinstance(metric, bool) else None
        system_path = system_json_path(ctx.rules, entry.division, entry.submitter, entry.system)
        valid = (
            entry.id not in failing_results
            and system_path not in failing_paths
            and not any(ctx.path == p or ctx.path.startswith(f"{p}/") for p in failing_paths)
            and metric is not None
        )
        units = bench.units.get(scenario) if bench and scenario else None
        rows.append(
            ResultRow(
                entry.system,
                entry.benchmark,
                entry.scenario,
                metric,
                units,
                valid,
                _csv_row(ctx, metric, units) if valid else None,
            )
        )
    return rows


def _csv_row(ctx: ResultContext, metric: float | None, units: str | None) -> dict[str, str]:
    entry, system = ctx.files.entry, ctx.system or {}
    log = ctx.files.performance_log
    nodes, accelerators = _int(system.get("number_of_nodes")), _int(system.get("accelerators_per_node"))
    measurements = ctx.files.measurements.data if ctx.files.measurements else None
    logged_scenario = log.get("effective_scenario") if log else None
    return {
        "Organization": _text(system.get("submitter")),
        "Availability": _text(system.get("status")),
        "Division": entry.division,
        "SystemType": _text(system.get("system_type")),
        "SystemName": _text(system.get("system_name")),
        "Platform": entry.system,
        "Model": entry.benchmark,
        "MlperfModel": entry.benchmark,
        "Scenario": entry.scenario,
        "Result": str(metric),
        "Accuracy": _accuracy_text(ctx),
        "number_of_nodes": _text(system.get("number_of_nodes")),
        "host_processor_model_name": _text(system.get("host_processor_model_name")),
        "host_processors_per_node": _text(system.get("host_processors_per_node")),
        "host_processor_core_count": _text(system.get("host_processor_core_count")),
        "accelerator_model_name": _text(system.get("accelerator_model_name")),
        "accelerators_per_node": _text(system.get("accelerators_per_node")),
        "total_accelerators": str(nodes * accelerators)
        if nodes is not None and accelerators is not None
        else "",
        "Location": str(entry.root / ctx.files.performance_dir),
        "framework": _text(system.get("framework")),
        "operating_system": _text(system.get("operating_system")),
        "notes": f"{_text(system.get('hw_notes'))}. {_text(system.get('sw_notes'))}",
        "compliance": entry.division,
        "errors": "0",
        "version": ctx.rules.checker_version_flag,
        # The official checker compares names case-sensitively, so Interactive rows (logged as Server) are 1.
        "inferred": "1" if logged_scenario != entry.scenario else "0",
        "has_power": "False",
        "Units": units or "",
        "weight_data_types": _text(measurements.get("weight_data_types"))
        if isinstance(measurements, dict)
        else "",
        "design_power_watts": ctx.rules.csv.design_power_watts,
        "PrivateID": "",
    }


def _accuracy_text(ctx: ResultContext) -> str:
    accuracy, bench = ctx.files.accuracy, ctx.bench
    if accuracy is None or bench is None:
        return ""
    metrics = dict.fromkeys(bound.metric for bound in (*bench.accuracy.targets, *bench.accuracy.upper_limits))
    shown = {metric: accuracy.values[metric].raw for metric in metrics if metric in accuracy.values}
    # The official format: the JSON of {metric: value} without quotes and braces, commas as spaces.
    return json.dumps(shown).replace(",", " ").replace('"', "").replace("{", "").replace("}", "")


def csv_text(rows: Iterable[ResultRow]) -> str:
    lines = [",".join(CSV_COLUMNS)]
    for row in rows:
        if row.csv is not None:
            lines.append(",".join(f'"{row.csv[column]}"' for column in CSV_COLUMNS))
    return "\n".join(lines) + "\n"


def _text(value: object) -> str:
    return "" if value is None else str(value)


def _int(value: object) -> int | None:
    try:
        return int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError, OverflowError):
        return None
