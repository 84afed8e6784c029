"""Reading a submission tree once: an index of every file, and each result's files parsed into types.

This is the only module of the checker that touches the disk. A file that cannot be read or parsed
is recorded as such (its rule reports it); nothing raises for bad content.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from submitter.check.accuracy_txt import AccuracyFile, parse_accuracy_txt
from submitter.check.mlperf_log import DetailLog, parse_detail_log
from submitter.check.tree import ResultEntry, Scope
from submitter.fileio import json_error_reason
from submitter.rounds.models import Layout


@dataclass(frozen=True)
class FileIndex:
    """Every file, folder and symlink under the scope, by path relative to the tree root."""

    files: Mapping[str, int]  # path -> size in bytes
    dirs: frozenset[str]
    symlinks: Mapping[str, bool]  # path -> whether its target exists
    root_files: tuple[str, ...] = ()  # files beside closed/ open/ network/, when the whole tree is checked

    def has_file(self, path: str) -> bool:
        return path in self.files

    def has_dir(self, path: str) -> bool:
        return path in self.dirs

    def files_in(self, folder: str) -> list[str]:
        prefix = f"{folder}/"
        return sorted(
            p[len(prefix) :] for p in self.files if p.startswith(prefix) and "/" not in p[len(prefix) :]
        )


def index_files(scope: Scope) -> FileIndex:
    files: dict[str, int] = {}
    dirs: set[str] = set()
    symlinks: dict[str, bool] = {}
    tops = [scope.root / division for division in scope.divisions if (scope.root / division).is_dir()]
    if scope.submitter is not None:
        tops = [top / scope.submitter for top in tops if (top / scope.submitter).is_dir()]
    for top in tops:
        dirs.add(_relative(top, scope.root))
        for folder, subfolders, names in os.walk(top, followlinks=False):
            base = Path(folder)
            for name in subfolders:
                target = base / name
                if target.is_symlink():
                    symlinks[_relative(target, scope.root)] = target.exists()
                else:
                    dirs.add(_relative(target, scope.root))
            for name in names:
                target = base / name
                if target.is_symlink():
                    symlinks[_relative(target, scope.root)] = target.exists()
                    continue
                try:
                    files[_relative(target, scope.root)] = target.stat().st_size
                except OSError:
                    symlinks[_relative(target, scope.root)] = False
    root_files: tuple[str, ...] = ()
    if scope.submitter is None and len(scope.divisions) > 1:
        root_files = tuple(sorted(child.name for child in scope.root.iterdir() if child.is_file()))
    return FileIndex(files, frozenset(dirs), symlinks, root_files)


def _relative(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


@dataclass(frozen=True)
class JsonFile:
    path: str
    data: Any = None
    problem: str | None = None  # why it could not be read; None when `data` holds the content


@dataclass(frozen=True)
class EntryFiles:
    """A result's files, where the round's layout puts them, parsed."""

    entry: ResultEntry
    results_dir: str
    performance_dir: str
    accuracy_dir: str
    measurements_dir: str
    compliance_dir: str
    performance_log: DetailLog | None
    accuracy_log: DetailLog | None
    accuracy: AccuracyFile | None
    measurements: JsonFile | None
    test06_verification: str | None


class TreeReader:
    """Reads files relative to the tree root, remembering why a file could not be read."""

    def __init__(self, root: Path, index: FileIndex) -> None:
        self.root = root
        self.index = index
        self.problems: dict[str, str] = {}
        self._texts: dict[str, str | None] = {}
        self._logs: dict[str, DetailLog | None] = {}

    def text(self, path: str) -> str | None:
        if path not in self._texts:
            self._texts[path] = self._read(path)
        return self._texts[path]

    def _read(self, path: str) -> str | None:
        if not self.index.has_file(path):
            return None
        try:
            return (self.root / path).read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            self.problems[path] = f"is not UTF-8 text (byte {exc.start})"
        except OSError as exc:
            self.problems[path] = f"cannot be read ({exc.strerror})"
        return None

    def json(self, path: str) -> JsonFile | None:
        text = self.text(path)
        if text is None:
            problem = self.problems.get(path)
            return JsonFile(path, problem=problem) if problem else None
        try:
            return JsonFile(path, json.loads(text))
        except json.JSONDecodeError as exc:
            return JsonFile(path, problem=json_error_reason(exc))

    def detail_log(self, path: str) -> DetailLog | None:
        """Parsed once: round detection and the result's own loading ask for the same log."""
        if path not in self._logs:
            text = self.text(path)
            self._logs[path] = None if text is None else parse_detail_log(text, path)
        return self._logs[path]


def measurements_file(
    index: FileIndex, folder: str, system: str, scenario: str, layout: Layout
) -> str | None:
    """The measurements JSON of a result, found the way the official checker finds it (checker.md §8)."""
    named = layout.measurements_file.format(system=system)
    if named == "measurements.json":
        path = f"{folder}/{named}"
        return path if index.has_file(path) else None
    candidates = [
        name
        for name in index.files_in(folder)
        if name.startswith(system) and (name.endswith(f"_{scenario}.json") or name.endswith(".json"))
    ]
    return f"{folder}/{candidates[0]}" if candidates else None


def load_entry(reader: TreeReader, entry: ResultEntry, layout: Layout) -> EntryFiles:
    def relative(template: str) -> str:
        return entry.relative(entry.where(template))

    performance_dir = relative(layout.performance_dir)
    accuracy_dir = relative(layout.accuracy_dir)
    measurements_dir = relative(layout.measurements_dir)
    compliance_dir = relative(layout.compliance_dir)
    accuracy_text = reader.text(f"{accuracy_dir}/accuracy.txt")
    measurements_path = measurements_file(
        reader.index, measurements_dir, entry.system, entry.scenario, layout
    )
    return EntryFiles(
        entry=entry,
        results_dir=relative(layout.results_dir),
        performance_dir=performance_dir,
        accuracy_dir=accuracy_dir,
        measurements_dir=measurements_dir,
        compliance_dir=compliance_dir,
        performance_log=reader.detail_log(f"{performance_dir}/mlperf_log_detail.txt"),
        accuracy_log=reader.detail_log(f"{accuracy_dir}/mlperf_log_detail.txt"),
        accuracy=None
        if accuracy_text is None
        else parse_accuracy_txt(accuracy_text, f"{accuracy_dir}/accuracy.txt"),
        measurements=reader.json(measurements_path) if measurements_path else None,
        test06_verification=reader.text(f"{compliance_dir}/TEST06/verify_accuracy.txt"),
    )
