"""`submitter stage`: a fresh submission tree in the round's layout, from the best run of each step.

    result = stage(StageRequest(systems=[...], round="v6.1", out=...))  # submitter, division: the systems'

Raw runs are only read: files are copied, accuracy logs truncated in the copy, and every original's
sha256 goes into a manifest beside the tree (`<out>-staging/manifest.json`, with the full accuracy
logs under `<out>-staging/accuracy-logs/`). The tree is built in a temporary folder next to `out`,
`.<out>.staging-<pid>/`, and moved into place only when complete, so a failure or Ctrl-C never leaves
half a tree nor destroys the previous one. What a `kill -9` leaves there is put right by the next stage
of the same `out` once the killed process is gone: the previous tree moved back, or the folder removed.
The result carries `submitter check`'s report on the new tree.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from compliance.registry import audit_test
from harness.loadgen_settings import Smoke
from submitter.check.checker import CheckReport, check_tree
from submitter.errors import SubmitterError, UsageProblem
from submitter.fileformats.run_mode import Mode
from submitter.fileio import (
    CannotWrite,
    ensure_writable,
    left_by_gone_process,
    note,
    os_error_reason,
    write_text_atomic,
)
from submitter.interrupts import signals_held
from submitter.rounds.models import RoundRules
from submitter.rounds.registry import load_round
from submitter.stage import documents
from submitter.stage.selection import ChosenRun, Eligibility, choose_runs
from submitter.stage.sources import write_sources
from submitter.stage.truncation import accuracy_txt_with_hash, truncated_log
from submitter.systems.descriptor import SystemDescriptor
from submitter.workspace import RUNS, STAGING_MANIFEST, STAGING_SUFFIX

ACCURACY_LOG = "mlperf_log_accuracy.json"
ACCURACY_TXT = "accuracy.txt"
DIVISIONS = ("closed", "open")


@dataclass(frozen=True)
class StageRequest:
    systems: tuple[SystemDescriptor, ...]
    round: str
    out: Path
    runs_root: Path = RUNS
    force: bool = False
    accept: Eligibility = field(default_factory=Eligibility)
    benchmarks: tuple[str, ...] = ()  # only these; empty: every benchmark the systems set up in the round
    # The submitter folder and the division; None takes the descriptors' (their official `system` block).
    submitter: str | None = field(default=None, kw_only=True)
    division: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True)
class Identity:
    """Who the tree is staged for: the submitter folder's name and the division."""

    submitter: str
    division: str


@dataclass
class StageResult:
    out: Path
    staging_dir: Path
    chosen: list[ChosenRun]
    notes: list[str] = field(default_factory=list)
    files: int = 0
    check: CheckReport | None = None
    identity: Identity | None = None
    trial_findings: int = 0  # the check's errors that --smoke trials cause by design


def staging_dir_for(out: Path) -> Path:
    return out.parent / f"{out.name}{STAGING_SUFFIX}"


class _Builder:
    """Writes one tree into `root`; remembers each copied original for the manifest."""

    def __init__(
        self, request: StageRequest, identity: Identity, rules: RoundRules, root: Path, backup: Path
    ) -> None:
        self.request, self.identity, self.rules = request, identity, rules
        self.root, self.backup = root, backup
        self.manifest: list[dict[str, object]] = []

    def path(self, template: str, system: SystemDescriptor | None = None, **names: str) -> Path:
        values = {"division": self.identity.division, "submitter": self.identity.submitter, **names}
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
        """<TEST>/: the verification and the audit's accuracy log, as run_verification.py leaves them."""
        test = run.step.mode.audit_test
        assert test is not None  # only audit runs are staged here
        plugin = audit_test(test)
        self.copy(run.run_dir / plugin.VERIFY_FILE, folder / test / plugin.VERIFY_FILE)
        self.copy(run.run_dir / ACCURACY_LOG, folder / test / "accuracy" / ACCURACY_LOG)
        for name, staged in plugin.STAGED_FILES:
            if (run.run_dir / name).is_file():
                self.copy(run.run_dir / name, folder / test / staged)


def resolve_identity(request: StageRequest) -> Identity:
    """The submitter and division asked for, or else the descriptors' own; either way every descriptor
    must say the same, since the checker requires each system description to match the tree."""
    values: dict[str, str] = {}
    for key, asked in (("submitter", request.submitter), ("division", request.division)):
        values[key] = _described(request.systems, key) if asked is None else asked
        for system in request.systems:
            described = system.system.get(key)
            if described != values[key]:
                raise UsageProblem(
                    f"{system.shown} says {key} {described!r}, but --{key} is {asked!r}; the "
                    "checker requires the system description to match the tree, so change one of them"
                )
    if values["division"] not in DIVISIONS:
        raise UsageProblem(
            f"the division is {values['division']!r}, but stage builds {' or '.join(DIVISIONS)} trees; "
            "set the descriptors' division or pass --division"
        )
    return Identity(**values)


def _described(systems: tuple[SystemDescriptor, ...], key: str) -> str:
    """The one value of `key` that every descriptor's official system block holds."""
    found = {system.shown: system.system.get(key) for system in systems}
    values = set(found.values())
    if len(values) == 1 and isinstance(value := values.pop(), str) and value:
        return value
    listed = ", ".join(f"{shown}: {value!r}" for shown, value in found.items())
    raise UsageProblem(
        f"no single {key} in the descriptors ({listed}); set the same {key} in the `system` block of "
        f"each, or pass --{key}"
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
    request: StageRequest,
    identity: Identity,
    rules: RoundRules,
    chosen: dict[str, list[ChosenRun]],
    root: Path,
    backup: Path,
) -> tuple[list[str], int]:
    builder = _Builder(request, identity, rules, root, backup)
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
        staged = dict.fromkeys(run.step.benchmark for run in runs)
        values = {name: documents.measurements(system, name, rules) for name in staged}
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
                    submitter=identity.submitter,
                    division=identity.division,
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
        documents.calibration(identity.submitter, calibration_rows),
    )
    write_text_atomic(
        backup.parent / STAGING_MANIFEST,
        json.dumps(
            {"tree": str(request.out.resolve()), "round": rules.name, "files": builder.manifest}, indent=2
        )
        + "\n",
    )
    return all_notes, files + len(builder.manifest)


def _move_into_place(built: Path, final: Path, force: bool) -> Path:
    """Move a finished folder to `final`; the previous one (with --force) is moved aside, to the path
    returned, for the caller to remove once everything is in place. Call it under `signals_held()`."""
    if final.exists() and not force:
        raise UsageProblem(f"{final} exists; pass --force to replace it with a fresh tree")
    retired = _retired(final, os.getpid())
    if final.exists():
        final.rename(retired)
    try:
        built.rename(final)
    except OSError:  # the previous folder goes back where it was
        if retired.exists() and not final.exists():
            retired.rename(final)
        raise
    return retired


def _retired(final: Path, pid: int) -> Path:
    return final.with_name(f".{final.name}.old-{pid}")


def _work_dir(out: Path, pid: int) -> Path:
    return out.parent / f".{out.name}.staging-{pid}"


def _pid_folders(parent: Path, prefix: str) -> list[tuple[Path, int]]:
    """The entries of `parent` named `<prefix><pid>`, with their pid."""
    try:
        names = sorted(os.listdir(parent))
    except OSError:
        return []
    return [
        (parent / name, int(name[len(prefix) :]))
        for name in names
        if name.startswith(prefix) and name[len(prefix) :].isdigit()
    ]


def put_right_leftovers(out: Path) -> None:
    """Undo what a stage of `out` killed with SIGKILL left beside it, once its process is gone; a live
    stage's folders are never touched. Each action is named on stderr."""
    staging = staging_dir_for(out)
    for work, pid in _pid_folders(out.parent, f".{out.name}.staging-"):
        if not left_by_gone_process(work, pid):
            continue
        if not (work / "tree").exists() and (work / "staging" / STAGING_MANIFEST).is_file():
            # Killed between the two moves: the new tree is in place, its staging folder was next.
            with signals_held():
                retired = _move_into_place(work / "staging", staging, force=True)
            shutil.rmtree(retired, ignore_errors=True)
            note(f"moved into {staging} the staging folder of the tree a killed stage (pid {pid}) finished")
        else:
            note(f"removed {work}, the unfinished tree of a killed stage (pid {pid})")
        shutil.rmtree(work, ignore_errors=True)
    for final in (out, staging):
        for retired, pid in _pid_folders(final.parent, f".{final.name}.old-"):
            if not left_by_gone_process(retired, pid):
                continue
            if final.exists() or final.is_symlink():
                shutil.rmtree(retired, ignore_errors=True)
                note(f"removed {retired}, a tree a killed stage (pid {pid}) had replaced")
            else:
                retired.rename(final)
                note(f"restored {final}: a stage killed while replacing it (pid {pid}) had moved it aside")


def check_destinations(out: Path) -> None:
    """The tree, its staging folder and the folder they are built in can be written (missing folders
    are made): refused before any run is read. Raises CannotWrite (exit 2)."""
    ensure_writable(out, folder=True, make_parents=True)
    ensure_writable(staging_dir_for(out), folder=True, make_parents=True)
    ensure_writable(_work_dir(out, os.getpid()), folder=True, make_parents=True)


def _file_problem(exc: OSError, out: Path, runs_root: Path) -> SubmitterError:
    """A file-system failure on the way: reading a run (the runs are only read), or writing the tree."""
    name = Path(exc.filename).resolve() if exc.filename else None
    if name is not None and runs_root.resolve() in name.parents:
        return UsageProblem(
            f"cannot read {exc.filename}: {os_error_reason(exc)}; make the runs readable and stage again"
        )
    where = f" ({exc.filename})" if exc.filename else ""
    return CannotWrite(
        out,
        f"{os_error_reason(exc)}{where}",
        "free space or make the folder writable and stage again; the previous tree, if any, is unchanged",
    )


def stage(request: StageRequest) -> StageResult:
    rules = load_round(request.round)
    identity = resolve_identity(request)
    out, staging = request.out, staging_dir_for(request.out)
    put_right_leftovers(out)
    if (out.exists() or staging.exists()) and not request.force:
        raise UsageProblem(f"{out} (or {staging}) exists; pass --force to replace it with a fresh tree")
    check_destinations(out)
    chosen: dict[str, list[ChosenRun]] = {}
    problems: list[str] = []
    for system in request.systems:
        chosen[system.id], missing = choose_runs(
            system, rules, request.runs_root, request.accept, request.benchmarks
        )
        problems += missing
    if problems:
        raise SubmitterError("nothing was staged:\n" + "\n".join(f"- {problem}" for problem in problems))

    work = _work_dir(out, os.getpid())
    replaced: list[Path] = []
    try:
        shutil.rmtree(work, ignore_errors=True)  # an earlier process of this pid's, long gone
        work.mkdir(parents=True)
        notes, files = _build(
            request, identity, rules, chosen, work / "tree", work / "staging" / "accuracy-logs"
        )
        with signals_held():  # the tree and its staging folder move as one step: they stay a pair
            for built, final in ((work / "tree", out), (work / "staging", staging)):
                replaced.append(_move_into_place(built, final, request.force))
    except OSError as exc:
        raise _file_problem(exc, out, request.runs_root) from None
    finally:
        for previous in replaced:
            shutil.rmtree(previous, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    result = StageResult(out, staging, [run for runs in chosen.values() for run in runs], notes, files)
    result.identity = identity
    result.check, result.trial_findings = _trials_named(check_tree(out, rules.name), identity, chosen)
    return result


def _trials_named(
    report: CheckReport, identity: Identity, chosen: dict[str, list[ChosenRun]]
) -> tuple[CheckReport, int]:
    """The check's findings, with those a --smoke trial causes on purpose (fewer samples, a shorter run)
    saying so, and how many they are: the fix the checker gives ("remove it from user.conf") would send
    a user after settings that --smoke made, not they."""
    trials = {
        f"{identity.division}/{identity.submitter}/{run.record.system_desc_id}/{run.step.benchmark}/"
        f"{run.step.scenario}": system_id
        for system_id, runs in chosen.items()
        for run in runs
        if run.trial
    }
    findings, named = [], 0
    for finding in report.findings:
        if finding.result in trials and finding.field in Smoke.SHORTENED_FIELDS:
            finding = msgspec.structs.replace(finding, fix=_TRIAL_FIX.format(system=trials[finding.result]))
            named += 1
        findings.append(finding)
    return msgspec.structs.replace(report, findings=findings), named


_TRIAL_FIX = (
    "none for a rehearsal: --smoke shortened this run on purpose (staged with --allow-trials); for a "
    "result that passes, run `submitter run-all --system {system}` without --smoke and stage again"
)
