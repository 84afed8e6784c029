"""`run.json`: what a run was asked to do, where it ran, and what LoadGen made of it.

Written last and atomically: a run directory without run.json is a run that never finished (killed),
and `status` says how one that did finish ended.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.environment import GitState, Gpu
from harness.loadgen_settings import Mode
from harness.outcome import LoadGenOutcome
from harness.worker import WorkerResult
from submitter.errors import SubmitterError
from submitter.fileio import write_text_atomic
from submitter.rounds.models import Scenario

RUN_RECORD = "run.json"
RECORD_FORMAT = "submitter-run/1"


class EngineRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: str
    model: str
    dummy_weights: bool
    tensor_parallel_size: int
    replicas: int
    args: dict[str, Any]
    environment: dict[str, str]
    sampling: dict[str, Any]


class LoadGenRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str
    scenario: str
    user_conf: dict[str, int | float] = Field(description="the keys written to the run's user.conf")
    overrides: dict[str, int] = Field(description="TestSettings set after FromConfig (smoke runs only)")
    audit_config: str | None
    outcome: LoadGenOutcome | None = Field(description="read back from the detail log; null if none")


class RunRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: Literal["submitter-run/1"] = RECORD_FORMAT
    status: Literal["completed", "failed", "interrupted"]
    valid: bool = Field(description="finished, and did what its mode is for (VALID, logged, audited)")
    problems: list[str]
    submittable: bool
    not_submittable: list[str] = Field(description="why these results may not go into a submission")
    system: str
    system_desc_id: str
    round: str
    benchmark: str
    scenario: Scenario
    mode: Mode
    command_line: list[str]
    started_utc: str
    finished_utc: str
    wall_s: float
    exit_status: int | None
    error: str | None
    versions: dict[str, str]
    git: GitState
    gpus: list[Gpu]
    engine: EngineRecord
    dataset: dict[str, Any]
    loadgen: LoadGenRecord
    harness: WorkerResult | None
    test06: dict[str, Any] | None = Field(default=None, description="TEST06 verification of this run")
    accuracy: dict[str, Any] | None = Field(default=None, description="accuracy.txt's numbers and verdicts")

    @property
    def scores(self) -> dict[str, Any] | None:
        """accuracy.txt's numbers (rouge1 ... gen_num), when this accuracy run was scored."""
        return self.accuracy["result"] if self.accuracy and self.accuracy.get("evaluated") else None

    @property
    def unscored(self) -> str | None:
        """Why this accuracy run has no scores (its log is kept; `submitter accuracy` scores it later);
        None for a scored run or another mode. Such a run logged what it should, yet is not "valid"."""
        if self.accuracy is None or self.accuracy.get("evaluated", True):
            return None
        return str(self.accuracy.get("note") or "not evaluated")


def scores_text(scores: dict[str, Any]) -> str:
    """`rouge1 91.4786, rouge2 81.4322, ...`: accuracy.txt's numbers on one line."""
    return ", ".join(f"{key} {value}" for key, value in scores.items())


def write_record(run_dir: Path, record: RunRecord) -> None:
    write_text_atomic(run_dir / RUN_RECORD, record.model_dump_json(indent=2) + "\n")


def read_record(run_dir: Path) -> RunRecord | None:
    """The run's record, or None for a run that never finished."""
    path = run_dir / RUN_RECORD
    if not path.is_file():
        return None
    try:
        return RunRecord.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise SubmitterError(f"{path} is not a run record this version can read ({exc})") from None
