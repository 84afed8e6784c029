"""`submitter package`: repository rules and a leak scan over a submission tree, then the upload archive."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from submitter.cli.output import echo_findings, echo_json
from submitter.package.packaging import PackageReport, PackageRequest, package_tree, parse_allow_list
from submitter.rounds.registry import available_rounds
from submitter.rule_registry import findings_as_json
from submitter.workspace import DIST

JSON_SCHEMA_VERSION = 1


@click.command("package")
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=DIST,
    show_default=True,
    help="Folder for NAME.tar.gz, NAME.tar.gz.sha256 and NAME.manifest.json (created if missing).",
)
@click.option("--name", help="The archive's name without .tar.gz (default: the folder's name).")
@click.option(
    "--round",
    "round_name",
    type=click.Choice(available_rounds()),
    help="The round whose repository rules apply; detected from the logs and layout when omitted.",
)
@click.option(
    "--deny",
    multiple=True,
    metavar="TEXT",
    help="A word that must not leave (host, project, customer); repeatable. Matched whole, any case.",
)
@click.option(
    "--allow",
    "allow_entries",
    multiple=True,
    metavar="'RULE [GLOB [TEXT]]'",
    help="Allow leak findings of RULE, only in paths matching GLOB, only of TEXT; repeatable.",
)
@click.option(
    "--allow-file",
    "allow_files",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="A file of allow entries, one a line ('#' starts a comment line); repeatable.",
)
@click.option("--strict", is_flag=True, help="Warnings block the package too.")
@click.option("--force", is_flag=True, help="Replace an archive of the same name.")
@click.option("--dry-run", is_flag=True, help="Check and scan only; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
def package(
    path: Path,
    out_dir: Path,
    name: str | None,
    round_name: str | None,
    deny: tuple[str, ...],
    allow_entries: tuple[str, ...],
    allow_files: tuple[Path, ...],
    strict: bool,
    force: bool,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Check and scan the submission tree at PATH (a root holding closed/ open/ network/, a division,
    or a submitter folder such as closed/RedHat), then write NAME.tar.gz with its sha256 file and
    manifest. `submitter check` runs first: any error it finds (any warning with --strict), a repository
    rule or a leak stops the package. Exit 1, writing nothing, when an error is found."""
    request = PackageRequest(
        path=path,
        out_dir=out_dir,
        name=name,
        round_name=round_name,
        allow=parse_allow_list(allow_entries, allow_files),
        deny=deny,
        strict=strict,
        force=force,
        dry_run=dry_run,
    )
    report = package_tree(request)
    if report.check.detection is not None:
        click.echo(f"round {report.check.rules.name} detected: {report.check.detection.reason}", err=True)
    for note in report.not_scanned:
        click.echo(f"note: {note}", err=True)
    for entry in report.unused_allows:
        click.echo(f"note: the allow entry {str(entry)!r} ({entry.origin}) allowed nothing", err=True)
    if as_json:
        echo_json(_as_json(report))
    else:
        _echo(report)
    if report.blocked:
        invalid = sum(not row.valid for row in report.check.results)
        verdicts = f"; {invalid} result(s) invalid, `submitter check {path}` shows them" if invalid else ""
        allow = (
            ", or allow a false positive of a leak rule (--allow 'RULE_ID PATH_GLOB TEXT')"
            if report.allowable
            else ""  # no remaining finding is a leak rule's, and no other rule can be allowed
        )
        click.echo(f"nothing written: fix the findings above{verdicts}{allow}", err=True)
        sys.exit(1)
    if dry_run:
        click.echo("dry run: nothing written", err=True)


def _echo(report: PackageReport) -> None:
    echo_findings(report.findings, files_checked=None)
    binary = f", {len(report.binary_files)} binary file(s) not scanned" if report.binary_files else ""
    too_large = len(report.too_large_files)
    over = f", {too_large} file(s) over the size limit not scanned" if too_large else ""
    click.echo(f"{report.scanned_files} text file(s) scanned{binary}{over}")
    if report.warnings and report.written is not None:
        click.echo(f"{report.warnings} warning(s): read them before uploading (--strict makes them block)")
    written = report.written
    if written is not None:
        click.echo(
            f"packaged {len(written.files)} file(s), {written.total_bytes:,} bytes: {written.paths.archive}\n"
            f"sha256 {written.sha256} ({written.paths.checksum})\n"
            f"manifest {written.paths.manifest}"
        )


def _as_json(report: PackageReport) -> dict[str, object]:
    written = report.written
    return {
        "schema_version": JSON_SCHEMA_VERSION,
        "round": report.check.rules.name,
        "detected": None if report.check.detection is None else report.check.detection.reason,
        "findings": findings_as_json(report.findings),
        "errors": report.errors,
        "warnings": report.warnings,
        "scanned_files": report.scanned_files,
        "binary_files": report.binary_files,
        "too_large_files": report.too_large_files,
        "unused_allow_entries": [str(entry) for entry in report.unused_allows],
        "archive": None if written is None else str(written.paths.archive),
        "sha256": None if written is None else written.sha256,
        "sha256_file": None if written is None else str(written.paths.checksum),
        "manifest": None if written is None else str(written.paths.manifest),
        "file_count": None if written is None else len(written.files),
        "total_bytes": None if written is None else written.total_bytes,
    }
