"""Reading a submission tree once: an index of every file, and each result's files parsed into types.

This is the only module of the checker that touches the disk. A file that cannot be read or parsed
is recorded as such (its rule reports it); nothing raises for bad content. Symbolic links are
followed, as the official checker follows them (a `src` link to `code` is a code folder), and noted
so that the hygiene rules can name them. What is not a regular file (a FIFO, a socket, a device, or a
link to one) is noted by the walk and never opened: reading a FIFO would block forever.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from msgspec import Struct

from submitter.check.tree import ResultEntry, Scope
from submitter.fileformats.accuracy_txt import AccuracyFile, parse_accuracy_txt
from submitter.fileformats.mlperf_log import DetailLog, parse_detail_log
from submitter.fileio import json_error_fix, json_error_reason, load_json_text
from submitter.regular_files import NotARegularFile, TooLarge, kind_of, read_regular
from submitter.rounds.models import BenchmarkRules, Layout, RoundRules

ENDPOINTS_CONFIG_FILES = ("config.yaml", "config.yml")
# The most the checker reads of one file: five times the 50 MB a round allows a file of an upload
# (HYG-FILE-SIZE). A larger file cannot be uploaded, and reading it whole would cost gigabytes of memory.
READ_LIMIT = 256 * 1024 * 1024


class LinkState(StrEnum):
    OK = "a symbolic link"
    BROKEN = "a broken symbolic link"
    LOOP = "a symbolic link that loops back on itself"


class FileIndex(Struct, frozen=True):
    """Every file, folder and symlink under the scope, by path relative to the tree root."""

    files: Mapping[str, int]  # path -> size in bytes (files reached through links included)
    dirs: frozenset[str]
    symlinks: Mapping[str, LinkState]
    listing: Mapping[str, tuple[str, ...]]  # folder -> the names of the files in it, sorted
    empty_dirs: frozenset[str]  # folders with nothing in them at all
    root_files: Mapping[str, int] = {}  # files beside closed/ open/ network/ (-> size), for a whole tree
    # Files that are not regular files, path -> what they are ("a named pipe (FIFO)"); they are in
    # `files` too (size 0), so that rules looking for a file find it, and nothing opens them.
    special: Mapping[str, str] = {}
    unwalked: Mapping[str, str] = {}  # folder -> why the walk stopped there (far too many entries)
    unlisted: Mapping[str, str] = {}  # folder -> why it could not be listed (its mode, an error reading)

    def has_file(self, path: str) -> bool:
        return path in self.files

    def has_dir(self, path: str) -> bool:
        return path in self.dirs

    def files_in(self, folder: str) -> list[str]:
        return list(self.listing.get(folder, ()))


class _Walk:
    """What one walk of the tree collects."""

    def __init__(self) -> None:
        self.files: dict[str, int] = {}
        self.dirs: set[str] = set()
        self.symlinks: dict[str, LinkState] = {}
        self.listing: dict[str, tuple[str, ...]] = {}
        self.empty: set[str] = set()
        self.special: dict[str, str] = {}
        self.unwalked: dict[str, str] = {}  # folder -> why the walk stopped there
        self.unlisted: dict[str, str] = {}  # folder -> why it could not be listed
        self.walked = 0  # entries listed so far, against MAX_WALKED_ENTRIES
        self._identity: dict[str, tuple[int, int]] = {}

    def copy_folder(self, walked: str, link: str) -> None:
        """What a link to an already walked sibling folder holds: that folder's entries, renamed.

        The link and its target share their parent, so a walk through the link would meet the same
        entries and the same ancestry (loops included); copying spares a second walk of a large tree."""
        inside, cut = f"{walked}/", len(walked)
        self.files.update({link + p[cut:]: size for p, size in self.files.items() if p.startswith(inside)})
        self.dirs.update([link + p[cut:] for p in self.dirs if p.startswith(inside)])
        self.symlinks.update({link + p[cut:]: s for p, s in self.symlinks.items() if p.startswith(inside)})
        self.special.update({link + p[cut:]: k for p, k in self.special.items() if p.startswith(inside)})
        self.listing[link] = self.listing[walked]
        self.listing.update({link + p[cut:]: n for p, n in self.listing.items() if p.startswith(inside)})
        if walked in self.empty:
            self.empty.add(link)
        self.empty.update([link + p[cut:] for p in self.empty if p.startswith(inside)])

    def add_special(self, path: str, kind: str) -> None:
        self.files[path] = 0
        self.special[path] = kind

    def identities(self, folders: list[str]) -> set[tuple[int, int]]:
        """(device, inode) of each folder, each stat'ed once."""
        for folder in folders:
            if folder not in self._identity:
                try:
                    status = os.stat(folder)
                except OSError:  # gone since it was listed: it can be no link's target either
                    continue
                self._identity[folder] = (status.st_dev, status.st_ino)
        return {self._identity[folder] for folder in folders if folder in self._identity}


# A published tree holds a few thousand files; a walk past this many entries has followed a link out of
# the tree into something vast (a link to /usr, to /proc) and stops, with a finding, instead of running on.
MAX_WALKED_ENTRIES = 200_000


def index_files(scope: Scope) -> FileIndex:
    walk = _Walk()
    tops = [scope.root / division for division in scope.divisions if (scope.root / division).is_dir()]
    if scope.submitter is not None:
        tops = [top / scope.submitter for top in tops if (top / scope.submitter).is_dir()]
    for top in tops:
        relative = top.relative_to(scope.root).as_posix()
        walk.dirs.add(relative)
        # The folders above the walk: a link to one of them (`/`, `..`) loops back onto the tree itself.
        above = [str(folder) for folder in reversed(top.resolve().parents)]
        _walk(str(top), relative, above, walk)
    root_files: dict[str, int] = {}
    if scope.submitter is None and len(scope.divisions) > 1:
        root_files = _root_files(scope.root, walk)
    return FileIndex(
        walk.files,
        frozenset(walk.dirs),
        walk.symlinks,
        walk.listing,
        frozenset(walk.empty),
        root_files,
        walk.special,
        walk.unwalked,
        walk.unlisted,
    )


@dataclass
class _Folder:
    """A folder being walked: its remaining entries and the names of the files found so far."""

    relative: str
    entries: Iterator[os.DirEntry[str]]
    names: list[str] = field(default_factory=list)


def _walk(top: str, relative: str, ancestry: list[str], walk: _Walk) -> None:
    """Depth first, through links to folders, stopping where a link leads back into its own ancestry.

    Iterative, so that folders nested thousands deep cannot exhaust Python's recursion. `ancestry` holds
    the folders walked down to the current one; they are identified (stat) only when a link to a folder
    needs it, which keeps large code folders cheap to walk."""
    stack: list[_Folder] = []

    def enter(folder: str, relative: str) -> None:
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError as exc:  # mode 000, or past PATH_MAX: what it holds is unknown, never "nothing"
            walk.unlisted[relative] = unlisted(exc)
            return
        if not entries:
            walk.empty.add(relative)
        walk.walked += len(entries)
        ancestry.append(folder)
        stack.append(_Folder(relative, iter(entries)))

    enter(top, relative)
    while stack:
        current = stack[-1]
        entry = next(current.entries, None)
        if entry is None:
            stack.pop()
            ancestry.pop()
            walk.listing[current.relative] = tuple(current.names)
            continue
        if walk.walked > MAX_WALKED_ENTRIES:
            walk.unwalked[current.relative] = (
                f"holds more than {MAX_WALKED_ENTRIES:,} files and folders with what lies below it, so "
                "the rest was not read (a symbolic link out of the tree?)"
            )
            for folder in stack:  # what was found so far stays listed
                walk.listing[folder.relative] = tuple(folder.names)
            return
        path = f"{current.relative}/{entry.name}"
        if entry.is_symlink():
            state, target = _link(entry.path)
            walk.symlinks[path] = state
            if target is None:
                continue
            if stat.S_ISDIR(target.st_mode):
                if (target.st_dev, target.st_ino) in walk.identities(ancestry):
                    walk.symlinks[path] = LinkState.LOOP
                    continue
                walk.dirs.add(path)
                sibling = f"{current.relative}/{_link_text(entry.path)}"
                if sibling in walk.listing and sibling not in walk.symlinks:
                    walk.copy_folder(sibling, path)  # `src -> code`: the same folder, walked once
                else:
                    enter(entry.path, path)
            elif stat.S_ISREG(target.st_mode):
                walk.files[path] = target.st_size
                current.names.append(entry.name)
            else:
                walk.add_special(path, f"a symbolic link to {kind_of(target.st_mode)}")
                current.names.append(entry.name)
        elif entry.is_dir(follow_symlinks=False):
            walk.dirs.add(path)
            enter(entry.path, path)
        else:
            try:
                status = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(status.st_mode):
                walk.files[path] = status.st_size
            else:
                walk.add_special(path, kind_of(status.st_mode))
            current.names.append(entry.name)


def _root_files(root: Path, walk: _Walk) -> dict[str, int]:
    """The files beside the division folders (name -> size); a pipe or device there is special too."""
    files: dict[str, int] = {}
    for entry in sorted(os.scandir(root), key=lambda entry: entry.name):
        try:
            status = entry.stat()  # through a link: what it leads to is what would be read
        except OSError:
            continue
        if stat.S_ISREG(status.st_mode):
            files[entry.name] = status.st_size
        elif not stat.S_ISDIR(status.st_mode):
            files[entry.name] = 0
            walk.special[entry.name] = kind_of(status.st_mode)
    return files


def _link_text(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return "/"  # names no sibling


def _link(path: str) -> tuple[LinkState, os.stat_result | None]:
    try:
        return LinkState.OK, os.stat(path)
    except OSError as exc:
        return (LinkState.LOOP if exc.errno == errno.ELOOP else LinkState.BROKEN), None


class JsonFile(Struct, frozen=True):
    path: str
    data: Any = None
    problem: str | None = None  # why it could not be read; None when `data` holds the content
    fix: str = "restore the file as written by the tool that made it"  # how to mend `problem`


class TreeReader:
    """Reads files relative to the tree root, remembering why a file could not be read."""

    def __init__(self, root: Path, index: FileIndex) -> None:
        self.root = root
        self.index = index
        # Every file that is not a regular one is reported, read or not: no upload can hold it.
        self.problems: dict[str, str] = {path: not_regular(kind) for path, kind in index.special.items()}
        self.problems.update(index.unwalked)
        self.problems.update(index.unlisted)
        self._texts: dict[str, str | None] = {}
        self._logs: dict[str, DetailLog | None] = {}

    def text(self, path: str) -> str | None:
        if path not in self._texts:
            self._texts[path] = self._read(path)
        return self._texts[path]

    def data(self, path: str) -> bytes | None:
        if not self.index.has_file(path) or path in self.index.special:
            return None
        try:
            return read_regular(self.root / path, READ_LIMIT)
        except NotARegularFile as exc:  # it became one since the walk
            self.problems[path] = not_regular(exc.kind)
        except TooLarge as exc:
            self.problems[path] = f"is larger than {exc.limit:,} bytes, more than the checker reads"
        except OSError as exc:
            self.problems[path] = f"cannot be read ({exc.strerror})"
        return None

    def _read(self, path: str) -> str | None:
        raw = self.data(path)
        if raw is None:
            return None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            kind = "is binary data, not text" if b"\0" in raw[:8192] else "is not UTF-8 text"
            self.problems[path] = f"{kind} (byte {exc.start} cannot be read as UTF-8)"
            return None
        # Universal newlines, as Python's text files (the official checker's) read them.
        return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text

    def json(self, path: str) -> JsonFile | None:
        text = self.text(path)
        if text is None:
            problem = self.problems.get(path)
            return JsonFile(path, problem=problem) if problem else None
        try:
            return JsonFile(path, load_json_text(text))
        except (ValueError, RecursionError) as exc:  # syntax, nesting, an integer past int()'s digits
            return JsonFile(path, problem=json_error_reason(exc), fix=json_error_fix(exc))

    def detail_log(self, path: str) -> DetailLog | None:
        """Parsed once: round detection and the result's own loading ask for the same log."""
        if path not in self._logs:
            text = self.text(path)
            self._logs[path] = None if text is None else parse_detail_log(text, path)
        return self._logs[path]


def not_regular(kind: str) -> str:
    return f"is {kind}, not a regular file"


def unlisted(exc: OSError) -> str:
    return f"is a folder that cannot be listed ({exc.strerror or exc}), so nothing in it was checked"


class AuditFiles(Struct, frozen=True):
    """What one compliance test left in `<compliance dir>/<TEST>/`."""

    test: str
    folder: str
    exists: bool
    verification: str | None = None  # verify_accuracy.txt or verify_output_len.txt
    performance_verification: str | None = None  # verify_performance.txt
    performance_log: DetailLog | None = None
    baseline: str | None = None  # TEST01's accuracy files, read when its deterministic check did not pass
    compliance: str | None = None


class EntryFiles(Struct, frozen=True):
    """A result's files, where the round's layout puts them, parsed."""

    entry: ResultEntry
    benchmark: str  # the benchmark the folder holds, aliases and the open division's mapping resolved
    results_dir: str
    performance_dir: str
    accuracy_dir: str
    measurements_dir: str
    compliance_dir: str
    performance_log: DetailLog | None
    accuracy_log: DetailLog | None
    accuracy: AccuracyFile | None
    measurements: JsonFile | None
    measurements_path: str | None
    audits: Mapping[str, AuditFiles] = {}
    # Files of a power measurement under performance/, by path relative to it (None: not a power result).
    power_files: Mapping[str, bytes] | None = None
    endpoints: Any = None  # an endpoints-format result (submitter.check.endpoints.EndpointsResult)
    endpoints_audits: Mapping[str, Any] = {}  # audit name -> AuditOutcome
    user_conf: str | None = None  # the user.conf beside the measurements, as written

    @property
    def test06_verification(self) -> str | None:
        audit = self.audits.get("TEST06")
        return audit.verification if audit else None


def measurements_file(
    index: FileIndex, folder: str, system: str, scenario: str, layout: Layout
) -> str | None:
    """The measurements JSON of a result, found the way the official checker finds it (checker.md §8)."""
    named = layout.measurements_file.format(system=system)
    if named == "measurements.json":
        path = f"{folder}/{named}"
        return path if index.has_file(path) else None
    candidates = [
        name for name in index.files_in(folder) if name.startswith(system) and name.endswith(".json")
    ]
    return f"{folder}/{candidates[0]}" if candidates else None


def load_entry(
    reader: TreeReader,
    entry: ResultEntry,
    rules: RoundRules,
    open_mapping: Mapping[str, str] | None = None,
) -> EntryFiles:
    layout = rules.layout

    def relative(template: str) -> str:
        return entry.relative(entry.where(template))

    benchmark = rules.benchmark_name(entry.benchmark, dict(open_mapping or {}))
    bench = rules.benchmarks.get(benchmark)
    results_dir = relative(layout.results_dir)
    performance_dir = relative(layout.performance_dir)
    accuracy_dir = relative(layout.accuracy_dir)
    measurements_dir = relative(layout.measurements_dir)
    compliance_dir = relative(layout.compliance_dir)
    accuracy_text = reader.text(f"{accuracy_dir}/accuracy.txt")
    measurements_path = measurements_file(
        reader.index, measurements_dir, entry.system, entry.scenario, layout
    )
    performance_log = reader.detail_log(f"{performance_dir}/mlperf_log_detail.txt")
    accuracy_log = reader.detail_log(f"{accuracy_dir}/mlperf_log_detail.txt")
    endpoints, endpoints_audits = None, {}
    if performance_log is None and accuracy_log is None:
        endpoints = _endpoints(reader, results_dir)
        endpoints_audits = _endpoints_audits(reader, results_dir, rules, bench)
        performance_log, accuracy_log = endpoints.performance, endpoints.accuracy
    return EntryFiles(
        entry=entry,
        benchmark=benchmark,
        results_dir=results_dir,
        performance_dir=performance_dir,
        accuracy_dir=accuracy_dir,
        measurements_dir=measurements_dir,
        compliance_dir=compliance_dir,
        performance_log=performance_log,
        accuracy_log=accuracy_log,
        accuracy=None
        if accuracy_text is None
        else parse_accuracy_txt(accuracy_text, f"{accuracy_dir}/accuracy.txt", _patterns(rules, bench)),
        measurements=reader.json(measurements_path) if measurements_path else None,
        measurements_path=measurements_path,
        audits=_audits(reader, compliance_dir, rules, bench),
        power_files=_power_files(reader, results_dir, rules),
        endpoints=endpoints,
        endpoints_audits=endpoints_audits,
        user_conf=reader.text(f"{measurements_dir}/user.conf"),
    )


def _patterns(rules: RoundRules, bench: BenchmarkRules | None) -> dict[str, str]:
    """The patterns of the metrics the benchmark judges (all of the round's for an unknown benchmark)."""
    if bench is None:
        return rules.accuracy_patterns
    accuracy = bench.accuracy
    bounds = [*accuracy.targets, *accuracy.upper_limits]
    bounds += [bound for scenario in accuracy.targets_by_scenario.values() for bound in scenario]
    return {
        b.metric: rules.accuracy_patterns[b.metric] for b in bounds if b.metric in rules.accuracy_patterns
    }


def _audits(
    reader: TreeReader, compliance_dir: str, rules: RoundRules, bench: BenchmarkRules | None
) -> dict[str, AuditFiles]:
    audits = {}
    for test in bench.compliance_tests if bench else ():
        audit = rules.compliance.get(test)
        folder = f"{compliance_dir}/{test}"
        if audit is None:
            continue

        def text(name: str | None, folder: str = folder) -> str | None:
            return reader.text(f"{folder}/{name}") if name else None

        audits[test] = AuditFiles(
            test=test,
            folder=folder,
            exists=reader.index.has_dir(folder),
            verification=text(audit.verification_file),
            performance_verification=text(audit.performance_file),
            performance_log=reader.detail_log(f"{folder}/{audit.performance_run}/mlperf_log_detail.txt")
            if audit.performance_run
            else None,
            baseline=text(f"accuracy/{audit.baseline_file}" if audit.baseline_file else None),
            compliance=text(f"accuracy/{audit.compliance_file}" if audit.compliance_file else None),
        )
    return audits


def _power_files(reader: TreeReader, results_dir: str, rules: RoundRules) -> dict[str, bytes] | None:
    performance = f"{results_dir}/performance"
    if not reader.index.has_dir(f"{performance}/power"):
        return None
    found = {}
    for name in rules.power.result_files:
        data = reader.data(f"{performance}/{name}")
        if data is not None:
            found[name] = data
    return found


def _endpoints(reader: TreeReader, results_dir: str) -> Any:
    """An endpoints-format result: config.yaml (or config.yml) and the two JSON summaries."""
    from submitter.check.endpoints import read_endpoints_result

    present = [name for name in ENDPOINTS_CONFIG_FILES if reader.index.has_file(f"{results_dir}/{name}")]
    texts = [reader.text(f"{results_dir}/{name}") for name in present]
    return read_endpoints_result(
        texts[0] if texts else None,
        reader.text(f"{results_dir}/performance/result_summary.json"),
        reader.text(f"{results_dir}/accuracy/accuracy_results.json"),
        results_dir,
        config_name=present[0] if present else ENDPOINTS_CONFIG_FILES[0],
        fallback_config_text=texts[1] if len(texts) > 1 else None,
    )


def endpoints_seeds(reader: TreeReader, results_dir: str) -> DetailLog | None:
    """The seeds an endpoints result's configuration carries (as LoadGen's effective_* keys); None where
    the folder holds no endpoints configuration."""
    if not any(reader.index.has_file(f"{results_dir}/{name}") for name in ENDPOINTS_CONFIG_FILES):
        return None
    performance = _endpoints(reader, results_dir).performance
    seeds = {key: record for key, record in performance.records.items() if key.endswith("_rng_seed")}
    return DetailLog(performance.path, seeds) if seeds else None


def _endpoints_audits(
    reader: TreeReader, results_dir: str, rules: RoundRules, bench: BenchmarkRules | None
) -> dict[str, Any]:
    """The audit files an endpoints result holds, by the endpoints' name of the test."""
    from submitter.check.endpoints import read_audit

    found = {}
    for test in bench.compliance_tests if bench else ():
        name = rules.compliance[test].endpoints_name if test in rules.compliance else None
        path = f"{results_dir}/audit/audit_{name}.json"
        if name and reader.index.has_file(path):
            found[name] = read_audit(reader.text(path), path)
    return found


def open_model_mapping(
    reader: TreeReader, rules: RoundRules, division: str, submitter: str
) -> JsonFile | None:
    """The open division's own benchmark names (`model_mapping.json`); closed and network have none."""
    if division != "open":
        return None
    return reader.json(f"{division}/{submitter}/{rules.model_names.open_mapping_file}")
