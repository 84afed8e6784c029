"""Replica scaling on one host: a run of N replicas beside a run of one replica of the same group, by their
steady rates (run.json's harness.steady, the middle half of their answers), so that a shortened one-replica
trial compares with a longer run of all of them (bench/gpu_topology.sh's BASELINE, BASELINE_SAMPLES and
SAMPLES).

    python bench/replica_scaling.py ONE.run.json ALL.run.json

prints one line, e.g. `2 replicas of TP=2: 9.20 samples/s steady, one alone 4.75: 0.968 of 2 times one`.
Exit status 1 where a run did not complete or has no steady rate, or the two are not one benchmark's replicas
of one group; 2 where a file cannot be read.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pydantic import ValidationError

from submitter.fileformats.run_record import RunRecord


def read(path: Path) -> RunRecord:
    return RunRecord.model_validate(json.loads(path.read_text(encoding="utf-8")))


def scaling(one: RunRecord, every: RunRecord) -> str:
    """The line for a run of one replica and a run of all; ValueError where they do not compare."""
    group = every.engine.tensor_parallel_size
    if (one.benchmark, one.engine.tensor_parallel_size) != (every.benchmark, group):
        raise ValueError(
            f"not one group's replicas: {one.benchmark} TP={one.engine.tensor_parallel_size} beside "
            f"{every.benchmark} TP={group}"
        )
    if one.engine.replicas != 1:
        raise ValueError(f"the first run has {one.engine.replicas} replicas; give one replica's run first")
    for name, record in (("the one replica's run", one), ("the replicas' run", every)):
        if record.status != "completed":
            # The middle half of the answers a stopped run got is not the middle half of its test.
            during = f" during its {record.interrupted_during}" if record.interrupted_during else ""
            raise ValueError(
                f"{name} did not complete ({record.status}{during}, exit status {record.exit_status}): "
                "compare only whole runs; give it the time to finish, or fewer samples"
            )
    alone = one.harness.steady if one.harness else None
    together = every.harness.steady if every.harness else None
    if alone is None or together is None:
        raise ValueError("a run has no steady rate (fewer than 8 answers, or written before harness.steady)")
    replicas = every.engine.replicas
    ratio = together.samples_per_second / (replicas * alone.samples_per_second)
    return (
        f"{replicas} replicas of TP={group}: {together.samples_per_second:,.2f} samples/s steady, one alone "
        f"{alone.samples_per_second:,.2f}: {ratio:.3f} of {replicas} times one"
    )


def main(arguments: list[str]) -> int:
    if len(arguments) != 2:
        print("usage: python bench/replica_scaling.py ONE.run.json ALL.run.json", file=sys.stderr)
        return 2
    records = []
    for argument in arguments:
        try:
            records.append(read(Path(argument)))
        except (OSError, json.JSONDecodeError, ValidationError) as exc:
            print(f"error: {argument} is not a run.json this version can read ({exc})", file=sys.stderr)
            return 2
    try:
        print(scaling(*records))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
