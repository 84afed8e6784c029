"""Finding what to check in a submission tree, and where each result's files are.

`locate` turns the user's PATH (a submission root, a division or one submitter directory) into a
scope; `discover` walks `<division>/<submitter>/results/<system>/<benchmark>/<scenario>` into
`ResultEntry`s the way the official checker walks it: every sub-directory is an entry, symbolic links
to directories included. Nothing here judges the tree: the rules do.
"""

from __future__ import annotations

import os
from pathlib import Path

from msgspec import Struct

from submitter.errors import UsageProblem
from submitter.rounds.models import Layout

DIVISIONS = ("closed", "open", "network")


class Scope(Struct, frozen=True):
    root: Path  # the folder holding closed/ open/ network/
    divisions: tuple[str, ...]
    submitter: str | None  # only this submitter, if given

    def submitter_dirs(self) -> list[Path]:
        found = []
        for division in self.divisions:
            for child in subdirs(self.root / division):
                if self.submitter is None or child.name == self.submitter:
                    found.append(child)
        return found


def locate(path: Path, submitter: str | None = None) -> Scope:
    if not path.exists():
        raise UsageProblem(
            f"{path}: no such directory; name a submission root, a division or a submitter folder"
        )
    if not path.is_dir():
        raise UsageProblem(f"{path} is a file; name a submission root, a division or a submitter folder")
    path = path.resolve()
    if any((path / division).is_dir() for division in DIVISIONS):
        return Scope(path, tuple(sorted(DIVISIONS)), submitter)
    if path.name in DIVISIONS:
        return Scope(path.parent, (path.name,), submitter)
    if path.parent.name in DIVISIONS:
        if submitter is not None and submitter != path.name:
            raise UsageProblem(f"--submitter {submitter} does not match the submitter folder {path.name}")
        return Scope(path.parent.parent, (path.parent.name,), path.name)
    raise UsageProblem(
        f"{path} is not a submission tree: expected a folder holding closed/, open/ or network/, "
        "a division folder, or a submitter folder inside one (for example closed/RedHat)"
    )


class ResultEntry(Struct, frozen=True):
    """One scenario directory of one benchmark of one system."""

    root: Path
    division: str
    submitter: str
    system: str
    benchmark: str  # the directory name, as written
    scenario: str  # the directory name, as written

    @property
    def id(self) -> str:
        return f"{self.division}/{self.submitter}/{self.system}/{self.benchmark}/{self.scenario}"

    @property
    def system_key(self) -> tuple[str, str, str]:
        return self.division, self.submitter, self.system

    def where(self, template: str) -> Path:
        """A path of the layout (a template such as `{division}/{submitter}/…`) for this entry."""
        return self.root / template.format(
            division=self.division,
            submitter=self.submitter,
            system=self.system,
            benchmark=self.benchmark,
            scenario=self.scenario,
        )

    def relative(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

    def performance_log(self, layout: Layout) -> Path:
        return self.where(layout.performance_dir) / "mlperf_log_detail.txt"


def discover(scope: Scope) -> list[ResultEntry]:
    """Every scenario directory under every submitter in scope (files beside them are ignored)."""
    entries = []
    for submitter_dir in scope.submitter_dirs():
        for system_dir in subdirs(submitter_dir / "results"):
            for benchmark_dir in subdirs(system_dir):
                for scenario_dir in subdirs(benchmark_dir):
                    entries.append(
                        ResultEntry(
                            scope.root,
                            submitter_dir.parent.name,
                            submitter_dir.name,
                            system_dir.name,
                            benchmark_dir.name,
                            scenario_dir.name,
                        )
                    )
    return entries


def subdirs(folder: Path) -> list[Path]:
    """The folders in `folder`, links to folders included, sorted by name; none when it cannot be listed."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [folder / name for name in names if os.path.isdir(folder / name)]
