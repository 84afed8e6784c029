"""`package_tree`: the checker, the repository rules and a leak scan over a submission tree, then the archive.

Nothing is written unless all three pass: `submitter check` with the round's rules (any error blocks;
with `strict` any warning), `repository` holds the checker's hygiene rules as errors (dot files, spaces,
symlinks, files over 50 MB, reviews and staging folders, …), `leaks` scans every path and text file for
host names, addresses, user names, tokens and keys. Only then `archive` writes NAME.tar.gz, its sha256
file and NAME.manifest.json. The input tree is only read, as it lies on disk (`repository.read_tree`):
no link is followed, so nothing outside the tree is read, scanned or archived; a link out of the tree is
an error, and where `check` would follow one into a folder outside, `check` is not run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from submitter.check.checker import CheckReport, check_tree
from submitter.check.detect import detect_tree_round
from submitter.check.load import FileIndex, TreeReader
from submitter.check.printable import printable, printable_finding
from submitter.check.rules.hygiene import BYTES_PER_MB
from submitter.check.tree import Scope, discover, locate
from submitter.errors import UsageProblem
from submitter.fileio import ensure_writable
from submitter.package import leaks
from submitter.package.allow import AllowEntry, AllowList
from submitter.package.archive import ArchivePaths, UnreadableInput, WrittenArchive, write_archive
from submitter.package.leaks import LEAK_RULES, LeakScan, Sensitive, scan_tree
from submitter.package.repository import (
    LINK_RULE,
    REPOSITORY_RULE_IDS,
    REPOSITORY_RULES,
    TreeOnDisk,
    packaged_folders,
    read_tree,
    repository_findings,
)
from submitter.rounds.registry import load_round
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
UNREADABLE_RULE = "STRUCT-UNREADABLE"  # the checker's: a file that cannot be read, or is no regular file


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

    @property
    def allowable(self) -> int:
        """Blocking findings an --allow entry could lift: only the leak rules' can be allowed."""
        leak_rules = {leak_rule.id for leak_rule in LEAK_RULES}
        return sum(
            finding.rule in leak_rules and _blocks(finding, self.check.strict) for finding in self.findings
        )


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
    on_disk = read_tree(scope)
    index = on_disk.index
    if on_disk.leads_check_outside:
        check = _unchecked(scope, index, request.round_name, request.strict)
    else:
        check = check_tree(request.path, request.round_name, strict=request.strict)
    sensitive = request.sensitive or Sensitive.of_this_machine(request.deny)
    # What is not a regular file (a FIFO would block a read forever) is never opened: it is reported.
    files = {
        path: size for path, size in {**index.files, **index.root_files}.items() if path not in index.special
    }
    # A file over the round's limit blocks the package (HYG-FILE-SIZE) and is not read: it may be sparse.
    max_bytes = check.rules.tree.max_file_mb * BYTES_PER_MB
    scan = scan_tree(scope.root, files, _every_path(index), sensitive, request.allow, max_bytes)
    findings = [
        # The hygiene rules warn in `check`; here they are errors, as the repository rules report them.
        *(finding for finding in check.findings if finding.rule not in REPOSITORY_RULE_IDS),
        *_repository_findings(scope, on_disk, check),
        *scan.findings,
        *_unread_files(scan),
    ]
    blocked = any(_blocks(finding, request.strict) for finding in findings)
    written = None
    if not blocked and not request.dry_run:
        try:
            written = write_archive(scope.root, sorted(files), index.dirs, paths, request.force)
        except UnreadableInput as exc:  # read a moment ago, and now not: a finding like any other
            findings.append(
                Finding(
                    rule=UNREADABLE_RULE,
                    severity=Severity.ERROR,
                    path=exc.path,
                    message=exc.message,
                    fix=exc.fix,
                )
            )
            blocked = True
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


def _blocks(finding: Finding, strict: bool) -> bool:
    return finding.severity is Severity.ERROR or (strict and finding.severity is Severity.WARNING)


def _unchecked(scope: Scope, index: FileIndex, round_name: str | None, strict: bool) -> CheckReport:
    """The report of a check that was not run: its round (named, or detected from the tree as it lies),
    no findings, no verdicts. A link leads `check`'s walk out of the tree; the link's finding says so."""
    detection = None
    if round_name is None:
        detection = detect_tree_round(TreeReader(scope.root, index), discover(scope))
        round_name = detection.round
    return CheckReport(
        rules=load_round(round_name), detection=detection, findings=[], results=[], index=index, strict=strict
    )


def _repository_findings(scope: Scope, on_disk: TreeOnDisk, check: CheckReport) -> list[Finding]:
    """The hygiene rules on the tree as it lies; a link out of it named with where it leads, and what the
    walk found unreadable where `check` did not say so (it did not run, or walked otherwise)."""
    outside = {link.path: link.finding(on_disk.leads_check_outside) for link in on_disk.outside}
    findings = [
        outside.get(finding.path, finding) if finding.rule == LINK_RULE else finding
        for finding in repository_findings(scope, on_disk.index, check.rules)
    ]
    reported = {finding.path for finding in check.findings if finding.rule == UNREADABLE_RULE}
    special = "replace it with a regular file, or remove it (a pipe, socket or device cannot be uploaded)"
    too_many = "remove what the upload does not need (a copied virtual environment, a data set)"
    # Where `check` ran and stopped its own walk, it said so (about the folder where it stopped).
    check_stopped = not on_disk.leads_check_outside and bool(check.index.unwalked)
    unreadable = {
        **{path: (f"is {kind}, not a regular file", special) for path, kind in on_disk.index.special.items()},
        **{
            path: (message, too_many) for path, message in on_disk.index.unwalked.items() if not check_stopped
        },
        **on_disk.unlisted,
    }
    findings += [
        Finding(rule=UNREADABLE_RULE, severity=Severity.ERROR, path=path, message=message, fix=fix)
        for path, (message, fix) in sorted(unreadable.items())
        if path not in reported
    ]
    return findings


def _unread_files(scan: LeakScan) -> list[Finding]:
    """Files the scan could not read, or was not to: each blocks the package, since none was scanned."""
    findings = [
        Finding(
            rule=UNREADABLE_RULE,
            severity=Severity.ERROR,
            path=path,
            message=f"became {kind} while it was being packaged",
            fix="leave the tree alone while it is packaged; a pipe, socket or device cannot be uploaded",
        )
        for path, kind in sorted(scan.not_regular.items())
    ]
    findings += [
        Finding(rule=UNREADABLE_RULE, severity=Severity.ERROR, path=path, message=message, fix=fix)
        for path, (message, fix) in sorted(scan.unreadable.items())
    ]
    if scan.over_budget:
        budget_gib = leaks.MAX_SCANNED_BYTES / (1 << 30)
        findings.append(
            Finding(
                rule=UNREADABLE_RULE,
                severity=Severity.ERROR,
                path=scan.over_budget[0],
                message=(
                    f"was not scanned, nor were the {len(scan.over_budget) - 1} file(s) after it: the leak "
                    f"scan reads at most {budget_gib:g} GiB of a tree, and had read {scan.scanned_bytes:,} "
                    "bytes (a published submitter folder holds less than 0.5 GB)"
                ),
                fix=(
                    "package the tree by parts (one submitter folder at a time), or leave out what the "
                    "upload does not need"
                ),
            )
        )
    return findings


def archive_name(request: PackageRequest) -> str:
    name = request.path.resolve().name if request.name is None else request.name
    if not ARCHIVE_NAME.fullmatch(name):
        raise UsageProblem(
            f"{name!r} cannot name an archive; pass --name with letters, digits, '.', '_' or '-'"
        )
    return name


def _every_path(index: FileIndex) -> list[str]:
    return sorted({*index.files, *index.dirs, *index.symlinks, *index.root_files})


def _refuse_output_inside(scope: Scope, out_dir: Path) -> None:
    """Writing into the tree would change what is being packaged (and package the archive next time)."""
    out = out_dir.resolve()
    for top in packaged_folders(scope):
        if out == top or top in out.parents:
            raise UsageProblem(
                f"--out {out_dir} lies inside the tree being packaged; write the archive elsewhere"
            )
