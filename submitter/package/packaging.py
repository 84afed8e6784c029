"""`package_tree`: the checker, the repository rules and a leak scan over a submission tree, then the archive.

Nothing is written unless all three pass: `submitter check` with the round's rules (any error blocks;
with `strict` any warning), `repository` holds the checker's hygiene rules as errors (dot files, spaces,
symlinks, files over 50 MB, reviews and staging folders, …), `leaks` scans every path and text file for
host names, addresses, user names, tokens and keys. Only then `archive` writes NAME.tar.gz, its sha256
file and NAME.manifest.json. The input tree is only read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from submitter.check.checker import CheckReport, check_tree
from submitter.check.load import FileIndex
from submitter.check.printable import printable, printable_finding
from submitter.check.rules.hygiene import BYTES_PER_MB
from submitter.check.tree import Scope, locate
from submitter.errors import UsageProblem
from submitter.fileio import ensure_writable
from submitter.package.allow import AllowEntry, AllowList
from submitter.package.archive import ArchivePaths, WrittenArchive, write_archive
from submitter.package.leaks import LEAK_RULES, Sensitive, scan_tree
from submitter.package.repository import REPOSITORY_RULE_IDS, REPOSITORY_RULES, repository_findings
from submitter.rule_registry import Finding, Severity

__all__ = [
    "LEAK_RULES",
    "REPOSITORY_RULES",
    "AllowList",
    "PackageReport",
    "PackageRequest",
    "Sensitive",
    "package_tree",
    "parse_allow_list",
]

ARCHIVE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


@dataclass(frozen=True)
class PackageRequest:
    path: Path  # a submission root, a division folder or a submitter folder
    out_dir: Path = Path(".")
    name: str | None = None  # the archive's name without .tar.gz; the folder's name when None
    round_name: str | None = None  # detected from the tree when None
    allow: AllowList = field(default_factory=AllowList)
    sensitive: Sensitive | None = None  # this machine's host and user names when None
    deny: tuple[str, ...] = ()
    strict: bool = False  # warnings block the package too
    force: bool = False  # replace an archive of the same name
    dry_run: bool = False  # check and scan only


@dataclass(frozen=True)
class PackageReport:
    check: CheckReport  # the checker's report: its round, detection and verdicts
    findings: list[Finding]  # the checker's, the repository rules' and the leak scan's
    scanned_files: int
    binary_files: list[str]
    too_large_files: list[str]  # not scanned: over the round's limit (an error of their own)
    not_scanned: tuple[str, ...]  # names of this machine or user too short to scan for
    unused_allows: list[AllowEntry]
    paths: ArchivePaths
    blocked: bool  # errors were found (or warnings, with strict): nothing may be written
    written: WrittenArchive | None  # None when blocked or on a dry run

    @property
    def errors(self) -> int:
        return sum(finding.severity is Severity.ERROR for finding in self.findings)

    @property
    def warnings(self) -> int:
        return sum(finding.severity is Severity.WARNING for finding in self.findings)


def parse_allow_list(options: tuple[str, ...], files: tuple[Path, ...]) -> AllowList:
    return AllowList.parse(
        options, files, (rule.id for rule in LEAK_RULES), (rule.id for rule in REPOSITORY_RULES)
    )


def package_tree(request: PackageRequest) -> PackageReport:
    scope = locate(request.path)
    paths = ArchivePaths.of(request.out_dir, archive_name(request))
    _refuse_output_inside(scope, request.out_dir)
    if not request.dry_run:
        # Found before the check and scan, not after them; the folder is made only to write into it.
        ensure_writable(request.out_dir, folder=True, make_parents=True)
    if not request.force and not request.dry_run and (existing := paths.existing()):
        raise UsageProblem(f"{existing[0]} exists; pass --force to replace it, or --name another name")
    check = check_tree(request.path, request.round_name, strict=request.strict)
    index = check.index
    sensitive = request.sensitive or Sensitive.of_this_machine(request.deny)
    # What is not a regular file (a FIFO would block a read forever) is never opened: check reports it.
    files = {
        path: size for path, size in {**index.files, **index.root_files}.items() if path not in index.special
    }
    # A file over the round's limit blocks the package (HYG-FILE-SIZE) and is not read: it may be sparse.
    max_bytes = check.rules.tree.max_file_mb * BYTES_PER_MB
    scan = scan_tree(scope.root, files, _every_path(index), sensitive, request.allow, max_bytes)
    findings = [
        # The hygiene rules warn in `check`; here they are errors, as the repository rules report them.
        *(finding for finding in check.findings if finding.rule not in REPOSITORY_RULE_IDS),
        *repository_findings(scope, index, check.rules),
        *scan.findings,
        *_changed_while_packaging(scan.not_regular),
    ]
    blocked = any(
        finding.severity is Severity.ERROR or (request.strict and finding.severity is Severity.WARNING)
        for finding in findings
    )
    written = None
    if not blocked and not request.dry_run:
        written = write_archive(scope.root, sorted(files), index.dirs, paths, request.force)
    return PackageReport(
        check=check,
        findings=[printable_finding(finding) for finding in findings],
        scanned_files=scan.scanned_files,
        binary_files=[printable(path) for path in scan.binary_files],
        too_large_files=[printable(path) for path in scan.too_large],
        not_scanned=sensitive.not_scanned,
        unused_allows=request.allow.unused(),
        paths=paths,
        blocked=blocked,
        written=written,
    )


def archive_name(request: PackageRequest) -> str:
    name = request.path.resolve().name if request.name is None else request.name
    if not ARCHIVE_NAME.fullmatch(name):
        raise UsageProblem(
            f"{name!r} cannot name an archive; pass --name with letters, digits, '.', '_' or '-'"
        )
    return name


def _changed_while_packaging(not_regular: dict[str, str]) -> list[Finding]:
    """Files the walk found regular that are something else when the scan opens them."""
    return [
        Finding(
            rule="STRUCT-UNREADABLE",
            severity=Severity.ERROR,
            path=path,
            message=f"became {kind} while it was being packaged",
            fix="leave the tree alone while it is packaged; a pipe, socket or device cannot be uploaded",
        )
        for path, kind in sorted(not_regular.items())
    ]


def _every_path(index: FileIndex) -> list[str]:
    return sorted({*index.files, *index.dirs, *index.symlinks, *index.root_files})


def _refuse_output_inside(scope: Scope, out_dir: Path) -> None:
    """Writing into the tree would change what is being packaged (and package the archive next time)."""
    out = out_dir.resolve()
    packaged = [scope.root / division for division in scope.divisions]
    if scope.submitter is not None:
        packaged = [top / scope.submitter for top in packaged]
    elif len(scope.divisions) > 1:
        packaged.append(scope.root)  # the whole tree, with the documents beside its divisions
    for top in packaged:
        if out == top or top in out.parents:
            raise UsageProblem(
                f"--out {out_dir} lies inside the tree being packaged; write the archive elsewhere"
            )
