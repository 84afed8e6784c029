"""Which run goes into the tree for each (system, benchmark, scenario, mode): the best eligible one.

Eligible: completed and valid, full length (no --smoke overrides, the whole dataset), and submittable;
`Eligibility` widens that for demos and rehearsals (the README then says why the run is not official). Best:
the highest metric for performance runs, the newest for accuracy and audit runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from compliance.registry import audit_test
from harness.matrix import Step, required_steps
from submitter.errors import SubmitterError
from submitter.fileformats.run_mode import Mode
from submitter.fileformats.run_record import RUN_RECORD, SMOKE_NOT_SUBMITTABLE, RunRecord, read_record
from submitter.rounds.models import RoundRules
from submitter.systems.descriptor import SystemDescriptor


@dataclass(frozen=True)
class ChosenRun:
    step: Step
    run_dir: Path
    record: RunRecord
    trial: bool = False  # a --smoke run: shortened on purpose, so the check fails where it falls short

    @property
    def metric(self) -> float | None:
        outcome = self.record.loadgen.outcome
        return outcome.metric_value if outcome else None


def _evidence(mode: Mode) -> tuple[str, str] | None:
    """The file a mode's evaluation leaves in the run, and how to make it."""
    if mode is Mode.ACCURACY:
        return "accuracy.txt", "score it with `submitter accuracy {run_dir} --model DIR`"
    if mode.audit_test:
        verify_file = audit_test(mode.audit_test).VERIFY_FILE
        return verify_file, f"run it again (submitter verifies every {mode.audit_test} run)"
    return None


@dataclass(frozen=True)
class Rejection:
    reason: str  # why the run cannot be staged
    remedy: str  # what makes it, or another run, stageable


@dataclass(frozen=True)
class Eligibility:
    """What staging accepts besides complete, valid, submittable runs (both are for rehearsals and demos)."""

    not_submittable: bool = False  # the demo engine, dummy weights
    trials: bool = False  # --smoke runs: the check will then fail where they fall short

    def why_not(
        self, system_id: str, run_dir: Path, record: RunRecord, dataset_size: int
    ) -> Rejection | None:
        again = f"run `submitter run-all --system {system_id}`"
        if record.status != "completed" or not record.valid:
            return Rejection(f"not valid ({record.problems[0] if record.problems else record.status})", again)
        evidence = _evidence(record.mode)
        if evidence and not (run_dir / evidence[0]).is_file():
            return Rejection(f"has no {evidence[0]}", evidence[1].format(run_dir=run_dir))
        # Every flag the run needs is named at once, not one per attempt.
        reasons, flags = [], []
        trial = is_trial(record, dataset_size) and not self.trials
        if trial:
            reasons.append(
                f"a --smoke trial ({record.dataset.get('samples')} samples, LoadGen settings overridden)"
            )
            flags.append("--allow-trials")
        not_submittable = [reason for reason in record.not_submittable if reason != SMOKE_NOT_SUBMITTABLE]
        if not_submittable and not self.not_submittable:
            reasons.append(f"not submittable: {'; '.join(not_submittable)}")
            flags.append("--allow-not-submittable")
        if not flags:
            return None
        remedy = f"stage it with {' and '.join(flags)} to rehearse"
        if not_submittable and not self.not_submittable:
            remedy += " (its README then says it is not an official result)"
        return Rejection(
            "; ".join(reasons), f"{again} without --smoke for a submission, or {remedy}" if trial else remedy
        )


def is_trial(record: RunRecord, dataset_size: int) -> bool:
    """A --smoke run: LoadGen settings overridden, or fewer records than the benchmark's data set."""
    return bool(record.loadgen.overrides) or record.dataset.get("samples") != dataset_size


def _records(folder: Path) -> tuple[list[tuple[Path, RunRecord]], list[tuple[Path, Rejection]]]:
    """The finished runs in `folder`, and those whose run.json cannot be read (never candidates)."""
    found, unreadable = [], []
    for record_path in sorted(folder.glob(f"*/{RUN_RECORD}")):
        try:
            record = read_record(record_path.parent)
        except SubmitterError as exc:
            remedy = "run it again (`submitter run-all` does), or remove the folder"
            unreadable.append((record_path.parent, Rejection(str(exc), remedy)))
            continue
        if record is not None:
            found.append((record_path.parent, record))
    return found, unreadable


def choose_runs(
    system: SystemDescriptor,
    rules: RoundRules,
    runs_root: Path,
    accept: Eligibility,
    benchmarks: tuple[str, ...] = (),
) -> tuple[list[ChosenRun], list[str]]:
    """The chosen run of every step the round requires (of `benchmarks`, if named), and a problem line
    for each step without one."""
    chosen, problems = [], []
    for step in required_steps(system, rules, benchmarks):
        folder = runs_root / system.id / step.benchmark / step.scenario / step.mode
        size = rules.benchmark(step.benchmark).dataset.size
        eligible: list[ChosenRun] = []
        runs, unreadable = _records(folder)
        newest = unreadable[-1] if unreadable else None
        for run_dir, record in runs:
            rejection = accept.why_not(system.id, run_dir, record, size)
            if rejection is None:
                eligible.append(ChosenRun(step, run_dir, record, trial=is_trial(record, size)))
            else:
                newest = (run_dir, rejection)
        if not eligible:
            problems.append(_no_eligible_run(system.id, step, folder, len(runs) + len(unreadable), newest))
            continue
        # Runs of the staged round first: another round's seeds fail its checks (staging notes those).
        eligible = [run for run in eligible if run.record.round == rules.name] or eligible
        if step.mode is Mode.PERFORMANCE:
            chosen.append(max(eligible, key=lambda run: run.metric or 0.0))
        else:
            chosen.append(max(eligible, key=lambda run: run.record.started_utc))
    return chosen, problems


def _no_eligible_run(
    system_id: str, step: Step, folder: Path, count: int, newest: tuple[Path, Rejection] | None
) -> str:
    if newest is None:
        return f"{system_id} {step}: no run in {folder}; run `submitter run-all --system {system_id}`"
    run_dir, rejection = newest
    return (
        f"{system_id} {step}: no eligible run in {folder}; of {count} run(s) there, the newest is "
        f"{run_dir.name}: {rejection.reason}; {rejection.remedy}"
    )
