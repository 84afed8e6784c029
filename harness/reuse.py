"""Whether a planned run was already done: a completed, valid run with exactly the plan's settings.

The run's own run.json decides (it is written last, so a killed run has none). Settings are compared
field by field, so a changed target_qps, engine argument, dataset or smoke flag means the run is
done again, and the reason names the field. A run interrupted after its LoadGen test (while it was
scored or verified) with the plan's settings is finished rather than run again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.runner import RunPlan, runs_newest_first
from submitter.errors import SubmitterError
from submitter.fileformats.audit_config import read_audit_config
from submitter.fileformats.run_mode import Mode
from submitter.fileformats.run_record import RUN_RECORD, EngineRecord, LoadGenRecord, RunRecord, read_record


@dataclass(frozen=True)
class Earlier:
    """What the runs folder already holds for a planned run."""

    reusable: Path | None
    note: str  # why the plan runs it again; empty for a first run
    # A run whose LoadGen test finished but whose evaluation was interrupted: evaluate it, do not rerun it.
    unfinished: Path | None = None


def _settings(
    round_name: str,
    mode: Mode,
    engine: EngineRecord,
    loadgen: LoadGenRecord,
    audit: object,
    dataset: dict[str, Any],
) -> dict[str, Any]:
    """What decides a run's result, as plain JSON values, the same way for a plan and for a record."""
    user_conf = dict(loadgen.user_conf)
    if loadgen.scenario == "Offline" and mode is not Mode.PERFORMANCE:
        # Offline accuracy and audit runs issue their samples in one query: the rate changes nothing.
        user_conf.pop("target_qps", None)
    return json.loads(
        json.dumps(
            {
                "round": round_name,
                "engine": engine.model_dump(mode="json"),
                "loadgen": {
                    "model": loadgen.model,
                    "scenario": loadgen.scenario,
                    "user_conf": user_conf,
                    "overrides": loadgen.overrides,
                },
                "audit": audit,
                "dataset_sha256": dataset.get("sha256"),
                "dataset_samples": dataset.get("samples"),
            }
        )
    )


def plan_settings(plan: RunPlan) -> dict[str, Any]:
    loadgen = LoadGenRecord(
        model=plan.target.model,
        scenario=plan.target.scenario,
        user_conf=plan.user_conf,
        overrides=plan.overrides,
        audit_config=None,
        outcome=None,
    )
    audit = read_audit_config(plan.audit_config) if plan.audit_config else None
    dataset = {"sha256": plan.dataset_sha256, "samples": plan.dataset_size}
    return _settings(plan.rules.name, plan.request.mode, plan.engine_record(), loadgen, audit, dataset)


def record_settings(record: RunRecord) -> dict[str, Any]:
    audit_file = Path(record.loadgen.audit_config) if record.loadgen.audit_config else None
    # Compare the audit file's settings, not its path: the checkout may have moved.
    audit = (
        read_audit_config(audit_file) if audit_file and audit_file.is_file() else record.loadgen.audit_config
    )
    return _settings(record.round, record.mode, record.engine, record.loadgen, audit, record.dataset)


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


def find_earlier(plan: RunPlan) -> Earlier:
    """The newest valid run with the plan's settings, or why the plan must run (about the newest run)."""
    wanted = plan_settings(plan)
    reasons = []
    for run_dir in runs_newest_first(plan, plan.request.mode):
        try:
            record = read_record(run_dir)
        except SubmitterError as exc:
            reasons.append(f"{run_dir.name}: {exc}")
            continue
        if record is None:
            reasons.append(f"{run_dir.name} was killed before it finished (no {RUN_RECORD})")
        elif changed := differences(wanted, record_settings(record)):
            reasons.append(f"{run_dir.name} ran with other settings: {'; '.join(changed[:3])}")
        elif record.status == "interrupted" and record.interrupted_during == "evaluation":
            return Earlier(
                None, f"{run_dir.name}'s evaluation was interrupted: finish it", unfinished=run_dir
            )
        elif record.status != "completed" or not record.valid:
            first = record.problems[0] if record.problems else record.status
            reasons.append(f"{run_dir.name} is not valid: {first}")
        else:
            return Earlier(run_dir, "a valid run with the same settings")
    return Earlier(None, reasons[0] if reasons else "")
