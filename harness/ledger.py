"""The ledger: `runs/ledger.jsonl`, one line per event of every run and every run-all plan.

It is a journal, appended and never rewritten, so a kill can at worst cut its last line (which readers
skip). What a run achieved is decided by the run's own run.json, written last: the ledger says what
was attempted, when, and where it went; `harness.reuse` reads run.json to decide what may be skipped.

    {"time": "...", "event": "run-started", "system": "demo_cpu", "step": "llama3.1-8b/Offline/performance",
     "run_dir": "demo_cpu/llama3.1-8b/Offline/performance/20261122T010203Z"}
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

LEDGER = "ledger.jsonl"

Event = Literal[
    "plan-started",  # run-all begins a plan; `detail` lists its steps
    "run-reused",  # run-all skips a step: a valid run with the same settings exists (`run_dir`)
    "run-started",
    "run-evaluating",  # LoadGen finished; the accuracy log is being scored or the audit verified
    "run-finished",  # `status`, `valid`, `detail` (the metric or the first problem) and `engine`
    "plan-finished",  # `detail`: how many steps were valid
    "plan-interrupted",
    "tune-started",  # tune-engine begins a search; `detail` lists its space
    "tune-trial",  # one configuration's score (`detail`) and its first run (`run_dir`)
    "tune-finished",  # `detail`: the best configuration against the descriptor's
]


class LedgerEvent(BaseModel):
    model_config = ConfigDict(extra="forbid")

    time: str
    event: Event
    system: str
    step: str | None = None
    run_dir: str | None = None
    status: str | None = None
    valid: bool | None = None
    detail: str | None = None
    # run-finished: "started (312.4 s)", or which run's engine this run shared ("kept from RUN, test 3")
    engine: str | None = None


def append_event(runs_root: Path, event: Event, system: str, **fields: object) -> None:
    """One line, written with a single O_APPEND write and synced, so concurrent writers never interleave."""
    record = LedgerEvent(
        time=datetime.now(UTC).isoformat(timespec="seconds"), event=event, system=system, **fields
    )
    runs_root.mkdir(parents=True, exist_ok=True)
    line = (record.model_dump_json(exclude_none=True) + "\n").encode("utf-8")
    descriptor = os.open(runs_root / LEDGER, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        os.write(descriptor, line)
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def read_events(runs_root: Path) -> list[LedgerEvent]:
    """Every readable event; a line cut short by a kill (or edited by hand into nonsense) is skipped."""
    path = runs_root / LEDGER
    if not path.is_file():
        return []
    events = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            events.append(LedgerEvent.model_validate(json.loads(line)))
        except (json.JSONDecodeError, ValidationError):
            continue
    return events
