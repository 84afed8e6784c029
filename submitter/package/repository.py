"""The repository rules MLCommons enforces on an upload, taken from the checker rather than written twice,
and the tree as it lies on disk, which is what `package` scans and archives.

`submitter check` registers the rules in `submitter.check.rules.hygiene` (names with dots or spaces,
symlinks, files over the round's limit, `__pycache__`, empty folders, stray files, submitter's own work
files); here the same functions run as errors on an index of the tree.

That index comes from `read_tree`, a walk that follows no symbolic link. `check` follows links, as the
official checker does; `package` does not: a link never survives the upload (HYG-SYMLINK), and what a
link leads to outside the tree (a home folder, /proc/self/cwd, /dev/zero) is nobody's to read, scan or
archive. Each such link is a finding of its own, naming where it leads.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from submitter.check import load
from submitter.check.context import TREE_RULES, TreeContext
from submitter.check.load import FileIndex, LinkState
from submitter.check.rules import hygiene
from submitter.check.tree import Scope
from submitter.regular_files import kind_of
from submitter.rounds.models import RoundRules
from submitter.rule_registry import Finding, RuleSet, Severity

# `check` warns about these (they are form, not a run's fault); an upload takes none of them: errors here.
REPOSITORY_RULES: RuleSet[TreeContext] = RuleSet("repository rules")
for _rule in TREE_RULES:
    if _rule.check.__module__ == hygiene.__name__:
        REPOSITORY_RULES.rule(_rule.id, Severity.ERROR, _rule.summary)(_rule.check)
REPOSITORY_RULE_IDS: frozenset[str] = frozenset(rule.id for rule in REPOSITORY_RULES)
LINK_RULE = "HYG-SYMLINK"  # a link out of the tree is one, with a finding that says where it leads

# What a link into these shows depends on the process that reads it (/proc/self/cwd is the reader's
# working folder), or never ends (/dev/zero): outside any tree, wherever it happens to resolve.
SYSTEM_FOLDERS = ("/proc", "/sys", "/dev")


def repository_findings(scope: Scope, index: FileIndex, rules: RoundRules) -> list[Finding]:
    tree = TreeContext(
        scope=scope,
        rules=rules,
        detection=None,
        index=index,
        entries=(),
        systems={},
        unreadable={},
        model_mappings={},
        nameplates={},
    )
    return REPOSITORY_RULES.run(tree)


def packaged_folders(scope: Scope) -> list[Path]:
    """The folders whose content goes into the archive: the tree, for findings about what lies outside."""
    packaged = [scope.root / division for division in scope.divisions]
    if scope.submitter is not None:
        return [top / scope.submitter for top in packaged]
    if len(scope.divisions) > 1:
        packaged.append(scope.root)  # the whole tree, with the documents beside its divisions
    return packaged


@dataclass(frozen=True)
class OutsideLink:
    """A symbolic link in the tree that leads out of it: never followed by `package`."""

    path: str  # as findings print it
    target: str  # what the link says
    lands: str  # where it ends, every link on the way followed
    what: str  # what lies there, in words ("a folder", "a regular file", "nothing: the link is broken")
    through: str | None  # the system folder it goes through (/proc, /sys, /dev), if any
    loops: bool  # it leads to a folder holding the link: a loop, which no walk follows
    walked_by_check: bool  # a folder that `check`, following links, would walk

    def finding(self, check_skipped: bool) -> Finding:
        if self.through is not None:
            where = (
                f"{self.target}, into {self.through} (the system's files, never a tree's: they change with "
            )
            where += "the process that reads them, or never end)"
        elif self.lands != self.target:
            where = f"{self.target}, that is {self.lands} ({self.what})"
        else:
            where = f"{self.target} ({self.what})"
        if self.loops:
            message = f"is {LinkState.LOOP.value}, to {where}"
        else:
            message = f"is {LinkState.OK.value} to {where}, outside the tree"
        message += "; package follows no link out of the tree"
        if check_skipped and self.walked_by_check:
            message += (
                "; check was not run: it follows links as the official checker does, and would walk there"
            )
        return Finding(
            rule=LINK_RULE,
            severity=Severity.ERROR,
            path=self.path,
            message=message,
            fix=(
                "replace the link with a copy of what the upload must hold (cp -r --remove-destination "
                "TARGET LINK), or remove it; an upload holds no links"
            ),
        )


@dataclass(frozen=True)
class TreeOnDisk:
    """The tree as it lies: every file, folder and link, no link followed; and the links that leave it."""

    index: FileIndex
    outside: tuple[OutsideLink, ...]
    unlisted: dict[str, tuple[str, str]]  # folder -> (why it could not be listed, how to fix that)

    @property
    def leads_check_outside(self) -> bool:
        """Whether `check`'s walk, which follows links, would walk a folder outside the tree."""
        return any(link.walked_by_check for link in self.outside)


@dataclass
class _Walk:
    packaged: list[str]  # the real paths of the packaged folders
    files: dict[str, int] = field(default_factory=dict)
    dirs: set[str] = field(default_factory=set)
    symlinks: dict[str, LinkState] = field(default_factory=dict)
    listing: dict[str, tuple[str, ...]] = field(default_factory=dict)
    empty: set[str] = field(default_factory=set)
    root_files: dict[str, int] = field(default_factory=dict)
    special: dict[str, str] = field(default_factory=dict)
    unwalked: dict[str, str] = field(default_factory=dict)
    outside: list[OutsideLink] = field(default_factory=list)
    unlisted: dict[str, tuple[str, str]] = field(default_factory=dict)
    walked: int = 0

    def entry(self, entry: os.DirEntry[str], path: str, folder: str, names: list[str] | None) -> bool:
        """Record one entry (its name in `names` when it is a file); True when it is a folder to walk."""
        if entry.is_symlink():
            # Beside the divisions (no `names`), `check` reads links to files only: it walks none there.
            self.symlinks[path] = self.link(entry.path, path, folder, walked_by_check=names is not None)
            return False
        if entry.is_dir(follow_symlinks=False):
            return True
        try:
            status = entry.stat(follow_symlinks=False)
        except OSError:  # gone since it was listed
            return False
        if stat.S_ISREG(status.st_mode):
            self.files[path] = status.st_size
        else:
            self.files[path], self.special[path] = 0, kind_of(status.st_mode)
        if names is not None:
            names.append(entry.name)
        return False

    def link(self, link: str, path: str, folder: str, walked_by_check: bool) -> LinkState:
        """The link's state as `check` names it; a link out of the tree is noted in `outside` too."""
        try:
            target = os.readlink(link)
        except OSError:
            target = "?"
        lands = os.path.realpath(link)
        try:
            status: os.stat_result | None = os.stat(link)
            state = LinkState.OK
        except OSError as exc:
            status, state = None, LinkState.LOOP if exc.errno == errno.ELOOP else LinkState.BROKEN
        is_folder = status is not None and stat.S_ISDIR(status.st_mode)
        loops = is_folder and _within(os.path.realpath(folder), lands)
        written = os.path.normpath(os.path.join(folder, target))
        # Through /proc, /sys or /dev as written, unless the tree itself lies there (a tree in /dev/shm).
        through = next((system for system in SYSTEM_FOLDERS if _within(written, system)), None)
        if through is not None and any(_within(written, top) for top in self.packaged):
            through = None
        inside = any(_within(lands, top) for top in self.packaged)
        if through is not None or not inside:
            what = "nothing: the link is broken" if status is None else kind_of(status.st_mode)
            walked = walked_by_check and is_folder and not loops and not inside
            self.outside.append(OutsideLink(path, target, lands, what, through, loops, walked))
        return LinkState.LOOP if loops else state

    def index(self) -> FileIndex:
        return FileIndex(
            files=self.files,
            dirs=frozenset(self.dirs),
            symlinks=self.symlinks,
            listing=self.listing,
            empty_dirs=frozenset(self.empty),
            root_files=self.root_files,
            special=self.special,
            unwalked=self.unwalked,
        )


def _unlisted(exc: OSError) -> tuple[str, str]:
    name = errno.errorcode.get(exc.errno or 0)
    reason = f"{exc.strerror or exc} ({name})" if name else str(exc.strerror or exc)
    if exc.errno in (errno.EACCES, errno.EPERM):
        fix = "give the user who packages permission to list it (chmod a+rx FOLDER), or remove it"
    else:
        fix = "make it readable, or remove it from the tree"
    return f"is a folder that cannot be listed: {reason}, so nothing in it was read", fix


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def read_tree(scope: Scope) -> TreeOnDisk:
    """Walk the packaged folders without following any link, at most the checker's budget of entries."""
    walk = _Walk([os.path.realpath(folder) for folder in packaged_folders(scope)])
    tops = [scope.root / division for division in scope.divisions if (scope.root / division).is_dir()]
    if scope.submitter is not None:
        tops = [top / scope.submitter for top in tops if (top / scope.submitter).is_dir()]
    for top in tops:
        relative = top.relative_to(scope.root).as_posix()
        walk.dirs.add(relative)
        if not _walk_folder(walk, str(top), relative):
            break
    if scope.submitter is None and len(scope.divisions) > 1:
        # Beside the divisions, only files are packaged (and links, refused); folders there are not.
        try:
            beside = sorted(os.scandir(scope.root), key=lambda entry: entry.name)
        except OSError:  # `locate` listed it a moment ago; gone or closed since: nothing beside
            beside = []
        for entry in beside:
            if entry.is_symlink() or not entry.is_dir(follow_symlinks=False):
                walk.entry(entry, entry.name, str(scope.root), None)
        walk.root_files = {name: walk.files.pop(name) for name in list(walk.files) if "/" not in name}
    return TreeOnDisk(walk.index(), tuple(walk.outside), walk.unlisted)


def _walk_folder(walk: _Walk, top: str, relative: str) -> bool:
    """Depth first from `top`, iteratively (folders may nest thousands deep); False once over the budget."""
    stack = [(top, relative)]
    while stack:
        folder, relative = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError as exc:  # what it holds is unknown, never "nothing": neither scanned nor packaged
            walk.unlisted[relative] = _unlisted(exc)
            continue
        walk.walked += len(entries)
        if walk.walked > load.MAX_WALKED_ENTRIES:
            walk.unwalked[relative] = (
                f"holds more than {load.MAX_WALKED_ENTRIES:,} files and folders with what lies below it, so "
                "the rest was not read"
            )
            return False
        if not entries:
            walk.empty.add(relative)
        names: list[str] = []
        below = []
        for entry in entries:
            path = f"{relative}/{entry.name}"
            if walk.entry(entry, path, folder, names):
                walk.dirs.add(path)
                below.append((entry.path, path))
        walk.listing[relative] = tuple(names)
        stack.extend(reversed(below))  # the first folder on top: walked in `check`'s order
    return True
