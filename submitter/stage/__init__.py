"""`submitter stage`: a fresh submission tree in the round's layout, from the best run of each step.

    result = stage(StageRequest(systems=[...], submitter="RedHat", division="closed", round="v6.1", out=...))

Raw runs are only read: files are copied, accuracy logs truncated in the copy, and every original's
sha256 goes into a manifest beside the tree (`<out>-staging/manifest.json`, with the full accuracy
logs under `<out>-staging/accuracy-logs/`). The tree is built in a temporary folder next to `out` and
moved into place only when complete, so a failure or Ctrl-C never leaves half a tree nor destroys the
previous one. The result carries `submitter check`'s report on the new tree.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from harness.loadgen_settings import Mode
from submitter.check.checker import CheckReport, check_tree
from submitter.errors import SubmitterError, UsageProblem
from submitter.fileio import write_text_atomic
from submitter.rounds.models import RoundRules
from submitter.rounds.registry import load_round
from submitter.stage import documents
from submitter.stage.selection import ChosenRun, Eligibility, choose_runs
from submitter.stage.sources import write_sources
from submitter.stage.truncation import accuracy_txt_with_hash, truncated_log
from submitter.systems.descriptor import SystemDescriptor

ACCURACY_LOG = "mlperf_log_accuracy.json"
ACCURACY_TXT = "accuracy.txt"
VERIFY_FILE = "verify_accuracy.txt"


@dataclass(frozen=True)
class StageRequest:
    systems: tuple[SystemDescriptor, ...]
    submitter: str
    division: str
    round: str
    out: Path
    runs_root: Path = Path("runs")
    force: bool = False
    accept: Eligibility = field(default_factory=Eligibility)


@dataclass
class StageResult:
    out: Path
    staging_dir: Path
    chosen: list[ChosenRun]
    notes: list[str] = field(default_factory=list)
    files: int = 0
    check: CheckReport | None = None


def staging_dir_for(out: Path) -> Path:
    return out.parent / f"{out.name}-staging"


class _Builder:
    """Writes one tree into `root`; remembers each copied original for the manifest."""

    def __init__(self, request: StageRequest, rules: RoundRules, root: Path, backup: Path) -> None:
        self.request, self.rules, self.root, self.backup = request, rules, root, backup
        self.manifest: list[dict[str, object]] = []

    def path(self, template: str, system: SystemDescriptor | None = None, **names: str) -> Path:
        values = {"division": self.request.division, "submitter": self.request.submitter, **names}
        if system is not None:
            values["system"] = system.system_desc_id
        return self.root / template.format(**values)

    def copy(self, source: Path, target: Path) -> None:
        data = source.read_bytes()
        self.write_bytes(target, data)
        self._remember(source, target, data)

    def _remember(self, source: Path, target: Path, original: bytes, **extra: object) -> None:
        """The manifest entry of a staged file: the original's path, sha256 and size."""
        self.manifest.append(
            {
                "file": str(target.relative_to(self.root)),
                "source": str(source.resolve()),
                "sha256": hashlib.sha256(original).hexdigest(),
                "bytes": len(original),
                **extra,
            }
        )

    def write_bytes(self, target: Path, data: bytes) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    def write_text(self, target: Path, text: str) -> None:
        self.write_bytes(target, text.encode("utf-8"))

    def loadgen_logs(self, run: ChosenRun, folder: Path, names: tuple[str, ...]) -> None:
        for name in names:
            if name not in (ACCURACY_LOG, ACCURACY_TXT):
                self.copy(run.run_dir / name, folder / name)

    def accuracy(self, run: ChosenRun, folder: Path, backup_name: str) -> None:
        """accuracy/: the logs, and the accuracy log truncated with its hash in accuracy.txt."""
        self.loadgen_logs(run, folder, self.rules.files.accuracy_required)
        full_log = (run.run_dir / ACCURACY_LOG).read_bytes()
        accuracy_txt = (run.run_dir / ACCURACY_TXT).read_bytes()
        self.write_text(folder / ACCURACY_TXT, accuracy_txt_with_hash(accuracy_txt.decode("utf-8"), full_log))
        self._remember(run.run_dir / ACCURACY_TXT, folder / ACCURACY_TXT, accuracy_txt, hash_appended=True)
        self.write_text(folder / ACCURACY_LOG, truncated_log(full_log.decode("utf-8")))
        self._remember(
            run.run_dir / ACCURACY_LOG, folder / ACCURACY_LOG, full_log, truncated=True, full_copy=backup_name
        )
        self.write_bytes(self.backup / backup_name, full_log)

    def audit(self, run: ChosenRun, folder: Path) -> None:
        """TEST06/: the verification and the audit's accuracy log, as run_verification.py leaves them."""
        test = run.step.mode
        self.copy(run.run_dir / VERIFY_FILE, folder / test / VERIFY_FILE)
        self.copy(run.run_dir / ACCURACY_LOG, folder / test / "accuracy" / ACCURACY_LOG)


def _check_identity(request: StageRequest) -> None:
    for system in request.systems:
        for key, asked in (("submitter", request.submitter), ("division", request.division)):
            described = system.system.get(key)
            if described != asked:
                raise UsageProblem(
                    f"systems/{system.id}.json says {key} {described!r}, but --{key} is {asked!r}; the "
                    "checker requires the system description to match the tree, so change one of them"
                )


def _notes(system: SystemDescriptor, runs: list[ChosenRun], rules: RoundRules) -> list[str]:
    notes = []
    commits = sorted({run.record.git.commit or "unknown" for run in runs})
    if len(commits) > 1:
        notes.append(f"the runs come from {len(commits)} commits ({', '.join(c[:12] for c in commits)})")
    if any(run.record.git.dirty for run in runs):
        notes.append("a run was made from a checkout with uncommitted changes; the sources are its commit")
    rounds = sorted({run.record.round for run in runs} - {rules.name})
    if rounds:
        notes.append(f"runs were made for round {', '.join(rounds)} and staged for {rules.name}")
    return notes


def _sources_commit(runs: list[ChosenRun]) -> str:
    performance = [run for run in runs if run.step.mode is Mode.PERFORMANCE] or runs
    commit = max(performance, key=lambda run: run.record.started_utc).record.git.commit
    if commit is None:
        raise SubmitterError(
            "the runs' run.json name no git commit (they were made outside a git checkout), so the "
            "sources that made them cannot be staged; run them again from a checkout"
        )
    return commit


def _build(
    request: StageRequest, rules: RoundRules, chosen: dict[str, list[ChosenRun]], root: Path, backup: Path
) -> tuple[list[str], int]:
    builder = _Builder(request, rules, root, backup)
    layout = rules.layout
    all_notes: list[str] = []
    calibration_rows = []
    for system in request.systems:
        runs = chosen[system.id]
        notes = _notes(system, runs, rules)
        all_notes += [f"{system.id}: {note}" for note in notes]
        builder.write_text(
            builder.path(layout.system_json, system), json.dumps(system.official(), indent=2) + "\n"
        )
        by_scenario: dict[tuple[str, str], list[ChosenRun]] = defaultdict(list)
        for run in runs:
            by_scenario[(run.step.benchmark, run.step.scenario)].append(run)
        values = {name: documents.measurements(system, name, rules) for name in system.benchmarks}
        calibration_rows.append((system, values))
        for (benchmark, scenario), scenario_runs in by_scenario.items():
            names = {"benchmark": benchmark, "scenario": scenario}
            measurements_dir = builder.path(layout.measurements_dir, system, **names)
            measurements_name = layout.measurements_file.format(system=system.system_desc_id)
            builder.write_text(
                measurements_dir / measurements_name, json.dumps(values[benchmark], indent=2) + "\n"
            )
            builder.write_text(
                measurements_dir / "README.md",
                documents.scenario_readme(
                    system,
                    scenario_runs,
                    submitter=request.submitter,
                    division=request.division,
                    rules=rules,
                    sources_dir=Path(layout.code_dir).name,
                    notes=notes,
                ),
            )
            for run in scenario_runs:
                if run.step.mode is Mode.PERFORMANCE:
                    builder.copy(run.run_dir / "user.conf", measurements_dir / "user.conf")
                    performance_dir = builder.path(layout.performance_dir, system, **names)
                    builder.loadgen_logs(run, performance_dir, rules.files.performance_required)
                elif run.step.mode is Mode.ACCURACY:
                    backup_name = f"{system.system_desc_id}/{benchmark}/{scenario}/{ACCURACY_LOG}"
                    builder.accuracy(run, builder.path(layout.accuracy_dir, system, **names), backup_name)
                else:
                    builder.audit(run, builder.path(layout.compliance_dir, system, **names))
    everything = [run for runs in chosen.values() for run in runs]
    files = write_sources(_sources_commit(everything), builder.path(layout.code_dir))
    builder.write_text(
        builder.path("{division}/{submitter}/documentation/" + rules.tree.calibration_file),
        documents.calibration(request.submitter, calibration_rows),
    )
    write_text_atomic(
        backup.parent / "manifest.json",
        json.dumps(
            {"tree": str(request.out.resolve()), "round": rules.name, "files": builder.manifest}, indent=2
        )
        + "\n",
    )
    return all_notes, files + len(builder.manifest)


def _replace(built: Path, final: Path, force: bool) -> None:
    """Move a finished folder into place; the previous one (with --force) goes only after that."""
    if final.exists() and not force:
        raise UsageProblem(f"{final} exists; pass --force to replace it with a fresh tree")
    retired = final.with_name(f".{final.name}.old-{os.getpid()}")
    if final.exists():
        final.rename(retired)
    built.rename(final)
    shutil.rmtree(retired, ignore_errors=True)


def stage(request: StageRequest) -> StageResult:
    rules = load_round(request.round)
    _check_identity(request)
    out, staging = request.out, staging_dir_for(request.out)
    if (out.exists() or staging.exists()) and not request.force:
        raise UsageProblem(f"{out} (or {staging}) exists; pass --force to replace it with a fresh tree")
    chosen: dict[str, list[ChosenRun]] = {}
    problems: list[str] = []
    for system in request.systems:
        chosen[system.id], missing = choose_runs(system, rules, request.runs_root, request.accept)
        problems += missing
    if problems:
        raise SubmitterError("nothing was staged:\n" + "\n".join(f"- {problem}" for problem in problems))

    out.parent.mkdir(parents=True, exist_ok=True)
    work = out.parent / f".{out.name}.staging-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    try:
        notes, files = _build(request, rules, chosen, work / "tree", work / "staging" / "accuracy-logs")
        _replace(work / "tree", out, request.force)
        _replace(work / "staging", staging, request.force)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result = StageResult(out, staging, [run for runs in chosen.values() for run in runs], notes, files)
    result.check = check_tree(out, rules.name)
    return result
