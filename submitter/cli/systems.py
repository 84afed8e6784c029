"""`submitter systems`: list, show, validate, export the schema of, and probe system descriptions."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from submitter.cli.output import echo_findings, echo_json, echo_table
from submitter.errors import SubmitterError, UsageProblem
from submitter.fileio import ensure_writable, write_text_atomic
from submitter.rule_registry import Severity, findings_as_json
from submitter.systems.catalog import descriptor_path, find_descriptors
from submitter.systems.official_description import SystemDescription
from submitter.systems.probe import collect_facts, draft_descriptor
from submitter.systems.validate import display_path, load_descriptor, validate_file


@click.group()
def systems() -> None:
    """Describe benchmark systems once. Descriptors are found by id in the folders named in
    $SUBMITTER_SYSTEMS_PATH, then in the systems/ folder of the submitter checkout you are in, then among
    those installed with submitter."""


@systems.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout.")
def list_systems(as_json: bool) -> None:
    """The descriptors submitter can find, one line each."""
    rows, broken = [], []
    for system_id, path in find_descriptors().items():
        try:
            descriptor = load_descriptor(path)
        except SubmitterError as exc:
            broken.append(str(exc))
            continue
        system = descriptor.system
        rows.append(
            {
                "id": system_id,
                "system_desc_id": descriptor.system_desc_id,
                "round": descriptor.round,
                "division": system.get("division"),
                "submitter": system.get("submitter"),
                "accelerators": f"{system.get('accelerators_per_node')}x "
                f"{system.get('accelerator_model_name')}",
                "benchmarks": list(descriptor.benchmarks),
                "path": display_path(path),
            }
        )
    if as_json:
        echo_json(rows)
    else:
        echo_table(
            [
                (
                    r["id"],
                    r["system_desc_id"],
                    r["round"],
                    r["division"],
                    r["accelerators"],
                    ", ".join(r["benchmarks"]),
                    r["path"],
                )
                for r in rows
            ],
            headers=("id", "system_desc_id", "round", "division", "accelerators", "benchmarks", "file"),
        )
    for problem in broken:
        click.echo(f"error: {problem}", err=True)
    if broken:
        sys.exit(1)


@systems.command("show")
@click.argument("system_id", metavar="ID")
@click.option(
    "--official",
    is_flag=True,
    help="Print only the official system description, as it goes into a submission tree.",
)
def show_system(system_id: str, official: bool) -> None:
    """Print the descriptor with id ID as JSON (stderr names the file it was read from)."""
    path = descriptor_path(system_id)
    descriptor = load_descriptor(path)
    click.echo(f"{system_id}: {display_path(path)}", err=True)
    echo_json(descriptor.official() if official else descriptor.model_dump(mode="json"))


@systems.command("validate")
@click.argument("targets", nargs=-1, metavar="[ID | PATH]...")
@click.option("--all", "check_all", is_flag=True, help="Validate every descriptor submitter can find.")
@click.option("--strict", is_flag=True, help="Fail on warnings too (unknown facts, unknown keys).")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON on stdout.")
def validate_systems(targets: tuple[str, ...], check_all: bool, strict: bool, as_json: bool) -> None:
    """Check descriptors (by ID or path) or official system JSON files (by PATH; a folder means
    every .json in it) against the schema and the lint. Exit 1 on errors."""
    if not targets and not check_all:
        raise UsageProblem(
            "name a system id or a path to validate, or pass --all (try: submitter systems validate --all)"
        )
    paths = [path for target in targets for path in _resolve_target(target)]
    if check_all:
        paths += [path for path in find_descriptors().values() if path not in paths]
    findings = [finding for path in paths for finding in validate_file(path)]
    if as_json:
        echo_json({"files": [display_path(p) for p in paths], "findings": findings_as_json(findings)})
    else:
        echo_findings(findings, files_checked=len(paths))
    failing = {Severity.ERROR, Severity.WARNING} if strict else {Severity.ERROR}
    if any(finding.severity in failing for finding in findings):
        sys.exit(1)


def _resolve_target(target: str) -> list[Path]:
    path = Path(target)
    if path.is_dir():
        found = sorted(path.glob("*.json"))
        if not found:
            raise UsageProblem(f"{target} is a folder without .json files; name a system file or id")
        return found
    if path.exists() or path.suffix == ".json" or "/" in target:
        if not path.exists():
            raise UsageProblem(f"{target}: no such file; check the path")
        return [path]
    return [descriptor_path(target)]


@systems.command("schema")
def schema() -> None:
    """Print the JSON schema of the official system description."""
    echo_json(SystemDescription.json_schema())


@systems.command("probe")
@click.option(
    "--id", "system_id", default="my_system", show_default=True, help="Id for the drafted descriptor."
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the draft here instead of stdout (refuses to overwrite; its folder must exist).",
)
def probe(system_id: str, output: Path | None) -> None:
    """Draft a descriptor from this machine (lscpu, /proc/meminfo, os-release, nvidia-smi, installed
    versions) and list what could not be detected."""
    if output is not None:  # refused before probing, which runs nvidia-smi and friends
        if output.exists():
            raise UsageProblem(f"{output} exists; choose another --output or remove it first")
        ensure_writable(output)
    draft = draft_descriptor(collect_facts(), system_id)
    text = json.dumps(draft.descriptor, indent=2, ensure_ascii=False) + "\n"
    if output is None:
        click.echo(text, nl=False)
    else:
        write_text_atomic(output, text)
        click.echo(f"wrote {output}", err=True)
    click.echo(
        f"not detected, fill in by hand ({len(draft.undetected)}): {', '.join(draft.undetected)}", err=True
    )
