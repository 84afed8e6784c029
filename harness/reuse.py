"""Whether a planned run was already done: a completed, valid run with exactly the plan's settings.

The run's own run.json decides (it is written last, so a killed run has none). Settings are compared
field by field, so a changed target_qps, engine argument, dataset or smoke flag means the run is
done again, and the reason names the field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.loadgen_settings import read_audit_config
from harness.record import RUN_RECORD, RunRecord, read_record
from harness.runner import RunPlan
from submitter.errors import SubmitterError


@dataclass(frozen=True)
class Earlier:
    """What the runs folder already holds for a planned run."""

    reusable: Path | None
    note: str  # why the plan runs it again; empty for a first run


def _normalised(value: Any) -> Any:
    return json.loads(json.dumps(value))


def plan_settings(plan: RunPlan) -> dict[str, Any]:
    engine = plan.engine
    return _normalised(
        {
            "round": plan.rules.name,
            "backend": engine.backend,
            "model": engine.model,
            "dummy_weights": engine.dummy_weights,
            "tensor_parallel_size": engine.tensor_parallel_size,
            "replicas": engine.replicas,
            "engine_args": engine.args,
            "environment": plan.setup.environment,
            "sampling": engine.generation.model_dump(),
            "loadgen_model": plan.target.model,
            "loadgen_scenario": plan.target.scenario,
            "user_conf": plan.user_conf,
            "overrides": plan.overrides,
            "audit": read_audit_config(plan.audit_config) if plan.audit_config else None,
            "dataset_sha256": plan.dataset_sha256,
            "dataset_samples": plan.dataset_size,
        }
    )


def record_settings(record: RunRecord) -> dict[str, Any]:
    engine, loadgen = record.engine, record.loadgen
    audit_file = Path(loadgen.audit_config) if loadgen.audit_config else None
    return _normalised(
        {
            "round": record.round,
            "backend": engine.backend,
            "model": engine.model,
            "dummy_weights": engine.dummy_weights,
            "tensor_parallel_size": engine.tensor_parallel_size,
            "replicas": engine.replicas,
            "engine_args": engine.args,
            "environment": engine.environment,
            "sampling": engine.sampling,
            "loadgen_model": loadgen.model,
            "loadgen_scenario": loadgen.scenario,
            "user_conf": loadgen.user_conf,
            "overrides": loadgen.overrides,
            "audit": (
                read_audit_config(audit_file) if audit_file and audit_file.is_file() else loadgen.audit_config
            ),
            "dataset_sha256": record.dataset.get("sha256"),
            "dataset_samples": record.dataset.get("samples"),
        }
    )


def differences(planned: dict[str, Any], recorded: dict[str, Any], prefix: str = "") -> list[str]:
    """`name: recorded -> planned` for every setting that differs, nested dictionaries by key."""
    found = []
    for key in sorted(planned.keys() | recorded.keys()):
        new, old = planned.get(key), recorded.get(key)
        if isinstance(new, dict) and isinstance(old, dict):
            found += differences(new, old, f"{prefix}{key}.")
        elif new != old:
            found.append(f"{prefix}{key}: {json.dumps(old)} -> {json.dumps(new)}")
    return found


def earlier_runs(plan: RunPlan) -> list[Path]:
    """Run directories of this system, benchmark, scenario and mode, newest first."""
    request = plan.request
    parent = request.runs_root / request.system.id / request.benchmark / request.scenario / request.mode
    if not parent.is_dir():
        return []
    runs = [path for path in parent.iterdir() if path.is_dir()]
    return sorted(runs, key=lambda path: path.name, reverse=True)


def find_earlier(plan: RunPlan) -> Earlier:
    """The newest valid run with the plan's settings, or why the plan must run (about the newest run)."""
    wanted = plan_settings(plan)
    reasons = []
    for run_dir in earlier_runs(plan):
        try:
            record = read_record(run_dir)
        except SubmitterError as exc:
            reasons.append(f"{run_dir.name}: {exc}")
            continue
        if record is None:
            reasons.append(f"{run_dir.name} was killed before it finished (no {RUN_RECORD})")
        elif record.status != "completed" or not record.valid:
            first = record.problems[0] if record.problems else record.status
            reasons.append(f"{run_dir.name} is not valid: {first}")
        elif changed := differences(wanted, record_settings(record)):
            reasons.append(f"{run_dir.name} ran with other settings: {'; '.join(changed[:3])}")
        else:
            return Earlier(run_dir, "a valid run with the same settings")
    return Earlier(None, reasons[0] if reasons else "")
