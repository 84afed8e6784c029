"""`submitter stage`: build the submission tree from the runs, then check it."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from submitter.cli.output import echo_findings, echo_json, echo_table, runnable_descriptor
from submitter.errors import UsageProblem
from submitter.rounds.registry import available_rounds
from submitter.rule_registry import findings_as_json
from submitter.stage.selection import Eligibility
from submitter.stage.staging import DIVISIONS, StageRequest, StageResult, stage
from submitter.workspace import RUNS, SUBMISSION


def _as_whom(result: StageResult) -> str:
    identity = result.identity
    return f" for {identity.submitter} ({identity.division} division)" if identity else ""


@click.command("stage")
@click.option("--system", "system_ids", multiple=True, required=True, help="Descriptor id (repeatable).")
@click.option(
    "--submitter",
    "submitter_name",
    help="Organisation: the submitter folder name (default: the descriptors' system.submitter).",
)
@click.option("--division", type=click.Choice(DIVISIONS), help="Default: the descriptors' system.division.")
@click.option(
    "--round", "round_name", type=click.Choice(available_rounds()), help="Default: the systems' round."
)
@click.option("--benchmark", "benchmarks", multiple=True, help="Only this benchmark (repeatable).")
@click.option(
    "--out",
    default=SUBMISSION,
    show_default=True,
    type=click.Path(path_type=Path),
    help="Tree root to create; its staging folder goes beside it (OUT-staging).",
)
@click.option("--runs-dir", type=click.Path(path_type=Path), default=RUNS, show_default=True)
@click.option("--force", is_flag=True, help="Replace an existing tree at --out.")
@click.option(
    "--allow-not-submittable",
    is_flag=True,
    help="Accept runs marked not submittable (demo engine, dummy weights); their READMEs say so.",
)
@click.option(
    "--allow-trials",
    is_flag=True,
    help="Accept --smoke runs too, to rehearse staging; the check then fails where they fall short.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the staged runs and the check as JSON.")
def stage_command(
    system_ids: tuple[str, ...],
    submitter_name: str | None,
    division: str | None,
    round_name: str | None,
    benchmarks: tuple[str, ...],
    out: Path,
    runs_dir: Path,
    force: bool,
    allow_not_submittable: bool,
    allow_trials: bool,
    as_json: bool,
) -> None:
    """Copy the best valid run of every required (system, benchmark, scenario, mode) into a fresh tree
    at OUT in the round's layout, write its documents, and check it. Exit 0 only when the check passes."""
    systems = tuple(runnable_descriptor(system_id, round_name) for system_id in system_ids)
    rounds = sorted({system.round for system in systems})
    if round_name is None and len(rounds) > 1:
        raise UsageProblem(f"the systems are set up for rounds {', '.join(rounds)}; pass --round")
    result = stage(
        StageRequest(
            systems=systems,
            submitter=submitter_name,
            division=division,
            round=round_name or rounds[0],
            out=out,
            runs_root=runs_dir,
            force=force,
            accept=Eligibility(not_submittable=allow_not_submittable, trials=allow_trials),
            benchmarks=benchmarks,
        )
    )
    report = result.check
    assert report is not None
    if as_json:
        echo_json(
            {
                "tree": str(result.out),
                "staging": str(result.staging_dir),
                "submitter": result.identity.submitter if result.identity else None,
                "division": result.identity.division if result.identity else None,
                "round": report.rules.name,
                "runs": [
                    {"system": run.record.system, "step": run.step.key, "run_dir": str(run.run_dir)}
                    for run in result.chosen
                ],
                "notes": result.notes,
                "check": {"errors": report.errors, "findings": findings_as_json(report.findings)},
            }
        )
    else:
        echo_table(
            [(run.record.system, str(run.step), str(run.run_dir)) for run in result.chosen],
            headers=("system", "run", "staged from"),
        )
        for note in result.notes:
            click.echo(f"note: {note}")
        echo_findings(report.findings, files_checked=None)
    verdict = "passes" if not report.errors else f"FAILS with {report.errors} error(s)"
    if result.trial_findings:
        verdict += f", {result.trial_findings} of them made by --smoke trials on purpose"
    click.echo(
        f"staged {result.files} files{_as_whom(result)} into {result.out} (originals' sha256 and full "
        f"accuracy logs in {result.staging_dir}); submitter check --round {report.rules.name}: {verdict}",
        err=True,
    )
    if report.errors:
        sys.exit(1)
