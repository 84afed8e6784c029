"""Reading JSON with messages a user can act on, and writing files so that a crash leaves no half file.

Every destination is proved writable before a command does any work (`ensure_writable`), and every
file is written under a temporary name beside it, `.NAME.<pid>-XXXXXXXX.tmp`, then renamed: a reader
sees the old file or the new one. A `kill -9` can still leave a temporary behind; the next write of the
same file removes it once the process that made it is gone (the pid in its name says which).
"""

from __future__ import annotations

import errno
import functools
import json
import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from submitter.errors import UsageProblem
from submitter.interrupts import signals_held


class JsonFileError(UsageProblem):
    """A file exists but does not hold valid JSON (an input error, exit 2); `line` points at the problem."""

    def __init__(self, path: Path, reason: str, fix: str, line: int | None = None) -> None:
        self.path, self.reason, self.fix, self.line = path, reason, fix, line
        where = f"{path}:{line}" if line else str(path)
        super().__init__(f"{where}: {reason}; {fix}")


# No system description, measurements or results file nests beyond a handful of levels. Deeper data that
# json.loads still takes (it stops near Python's recursion limit, ~1000) would crash whatever walks it
# later (a renderer, repr, json.dumps): it is refused when read.
MAX_JSON_DEPTH = 100


class NestedTooDeeply(ValueError):
    """JSON that nests lists or objects more than MAX_JSON_DEPTH levels deep."""


def load_json_text(text: str) -> Any:
    """json.loads, bounded: raises ValueError (JSONDecodeError; NestedTooDeeply; an integer longer than
    Python converts, 4300 digits by default) or RecursionError (nesting json.loads itself cannot follow)."""
    data = json.loads(text)
    if _deeper_than(data, MAX_JSON_DEPTH):
        raise NestedTooDeeply(f"nested more than {MAX_JSON_DEPTH} levels deep")
    return data


def _deeper_than(data: Any, limit: int) -> bool:
    """Iterative, so that measuring the depth cannot hit the recursion limit it guards against."""
    stack = [(data, 1)] if isinstance(data, dict | list) else []
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            return True
        children = value.values() if isinstance(value, dict) else value
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def json_error_reason(exc: ValueError | RecursionError) -> str:
    """Why a text is not JSON that can be read: its syntax (where), its nesting, or a number too long."""
    if isinstance(exc, json.JSONDecodeError):
        return f"is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
    if isinstance(exc, RecursionError | NestedTooDeeply):
        return f"is nested too deeply to read (lists or objects more than {MAX_JSON_DEPTH} levels deep)"
    # int()'s guard against slow conversions: "Exceeds the limit (4300 digits) for integer string conversion".
    return f"cannot be read as JSON ({str(exc).partition(';')[0]})"


def json_error_fix(exc: ValueError | RecursionError) -> str:
    """How to mend a text `json_error_reason` explains."""
    if isinstance(exc, json.JSONDecodeError):
        return "correct the JSON syntax"
    if isinstance(exc, RecursionError | NestedTooDeeply):
        return f"write it with at most {MAX_JSON_DEPTH} levels of nesting, as the tool that made it does"
    return "write the number with fewer digits (no count or measurement needs thousands)"


# YAML's anchors (&name) and aliases (*name) let a few lines stand for a value that holds itself (a list
# inside itself: whatever walks it recurses without end) or for billions of values (ten levels of ten
# aliases, "billion laughs": a walk of it never ends). No YAML file of a tree needs either; a nameplate or
# an endpoints configuration repeats a few values at most. Aliases are refused where they lie inside their
# own anchor, and once what they repeat adds up to more than this many values.
MAX_YAML_ALIAS_VALUES = 10_000
YAML_ALIAS_FIX = "write each value in full, without anchors and aliases (&name, *name)"


class YamlAliasError(ValueError):
    """YAML whose aliases make a value that holds itself, or repeat more than MAX_YAML_ALIAS_VALUES values."""


def load_yaml_text(text: str) -> Any:
    """yaml.safe_load, bounded: raises YamlAliasError, yaml.YAMLError (syntax), ValueError (PyYAML's int()
    of a number past 4300 digits, a 13th month) or RecursionError (nesting deeper than Python follows)."""
    loader = _bounded_loader()(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


@functools.cache
def _bounded_loader() -> type[Any]:
    """PyYAML's SafeLoader, refusing aliases as above. Made on first use: importing PyYAML costs start-up
    time that trees without YAML files never need."""
    import yaml

    class BoundedLoader(yaml.SafeLoader):
        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self.open_anchors: list[str | None] = []  # of the nodes being composed, outermost first
            self.values: dict[int, int] = {}  # id(node) -> the values it stands for, aliases expanded
            self.repeated = 0  # the values repeated by the aliases read so far

        def compose_node(self, parent: Any, index: Any) -> Any:
            event = self.peek_event()
            if isinstance(event, yaml.AliasEvent):
                return self.alias(event, parent, index)
            self.open_anchors.append(event.anchor)
            try:
                node = super().compose_node(parent, index)
            finally:
                self.open_anchors.pop()
            self.values[id(node)] = 1 + sum(self.values.get(id(child), 1) for child in _children(node))
            return node

        def alias(self, event: Any, parent: Any, index: Any) -> Any:
            where = f"*{event.anchor} on line {event.start_mark.line + 1}"
            if event.anchor in self.open_anchors:
                raise YamlAliasError(
                    f"the alias {where} lies inside its own anchor &{event.anchor}: a list or map that "
                    "holds itself"
                )
            node = super().compose_node(parent, index)
            self.repeated += self.values.get(id(node), 1)
            if self.repeated > MAX_YAML_ALIAS_VALUES:
                raise YamlAliasError(
                    f"its aliases repeat more than {MAX_YAML_ALIAS_VALUES:,} values (the last read: "
                    f"{where}), an alias bomb: a few lines standing for a vast document"
                )
            return node

    def _children(node: Any) -> list[Any]:
        if isinstance(node, yaml.SequenceNode):
            return list(node.value)
        if isinstance(node, yaml.MappingNode):
            return [part for pair in node.value for part in pair]
        return []

    return BoundedLoader


def read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageProblem(
            f"{path}: no such file; check the path (relative paths start at {Path.cwd()})"
        ) from None
    except IsADirectoryError:
        raise UsageProblem(f"{path} is a directory; name a .json file") from None
    except PermissionError:
        raise UsageProblem(f"{path} cannot be read (permission denied)") from None
    except UnicodeDecodeError as exc:
        raise JsonFileError(path, f"is not UTF-8 text (byte {exc.start})", "save it as UTF-8 JSON") from None
    if text.startswith("\ufeff"):  # json refuses it; an editor's "UTF-8 with BOM" is the usual cause
        raise JsonFileError(
            path, "starts with a byte-order mark (BOM)", "save it as UTF-8 without a BOM", line=1
        )
    try:
        return load_json_text(text)
    except json.JSONDecodeError as exc:
        raise JsonFileError(
            path,
            json_error_reason(exc),
            "correct the syntax (a trailing comma or a missing quote is the usual cause)",
            line=exc.lineno,
        ) from None
    except (ValueError, RecursionError) as exc:
        fix = "write shorter numbers, and lists or objects less deeply nested"
        raise JsonFileError(path, json_error_reason(exc), fix) from None


class CannotWrite(UsageProblem):
    """A destination the command would write cannot take it; raised before any work is done, or when
    a write fails on the way (a full disk). The message: what, where, why, and how to fix it."""

    def __init__(self, path: Path, reason: str, fix: str) -> None:
        self.path, self.reason, self.fix = path, reason, fix
        super().__init__(f"cannot write {path}: {reason}; {fix}")


def os_error_reason(exc: OSError) -> str:
    """Why the file system refused, in words a user acts on."""
    known = {
        errno.EACCES: "permission denied",
        errno.EPERM: "not permitted (an immutable file or folder?)",
        errno.EROFS: "read-only file system",
        errno.ENOSPC: "no space left on the device",
        errno.EDQUOT: "disk quota exceeded",
        errno.ENOTDIR: "a part of the path is a file, not a folder",
        errno.ENOENT: "a folder on the way does not exist",
        errno.EISDIR: "it is a folder",
        errno.ENAMETOOLONG: "the name is too long",
    }
    return known.get(exc.errno or 0, exc.strerror or type(exc).__name__)


def ensure_writable(path: Path, *, folder: bool = False, make_parents: bool = False) -> None:
    """Prove, before any work, that `path` (a file, or with `folder` a folder) can be written.

    Permissions are not enough (root passes them; read-only mounts and immutable files do not show in
    them), so this tries: a file of its own in the folder that would hold the output, and an existing
    target file opened for writing without changing it. A missing folder on the way is refused unless
    `make_parents` (then the nearest existing one is tried). Raises CannotWrite (exit 2) with a fix."""
    try:
        _ensure_writable(path, folder, make_parents)
    except OSError as exc:  # a folder on the way that may not be searched: even stat() is refused
        raise CannotWrite(path, os_error_reason(exc), "choose a path you can reach and write") from None


def _ensure_writable(path: Path, folder: bool, make_parents: bool) -> None:
    if path.exists() and path.is_dir() != folder:
        kind = "a folder" if path.is_dir() else "a file"
        raise CannotWrite(path, f"it is {kind}", f"name {'a folder' if folder else 'a file'} instead")
    holder = path if folder and path.is_dir() else path.parent
    nearest = next(p for p in (holder, *holder.parents) if p.exists())
    if not nearest.is_dir():
        raise CannotWrite(path, f"{nearest} is a file, not a folder", "choose a path inside a folder")
    if nearest != holder and not make_parents:
        raise CannotWrite(
            path,
            f"the folder {holder} does not exist",
            f"create it first (mkdir -p {holder}) or choose another path",
        )
    _probe_folder(path, nearest)  # the missing folders, if any, would be made inside `nearest`
    if path.is_file():
        try:
            os.close(os.open(path, os.O_WRONLY))
        except OSError as exc:
            raise CannotWrite(
                path, os_error_reason(exc), "make it writable, or choose another path"
            ) from None


def _probe_folder(path: Path, holder: Path) -> None:
    import tempfile  # here, not at the top: `check` and `--help` never write, and start faster

    try:
        handle, probe = tempfile.mkstemp(dir=holder, prefix=".submitter-probe-")
    except OSError as exc:
        raise CannotWrite(
            path, f"{holder}: {os_error_reason(exc)}", "choose a folder you can write to"
        ) from None
    os.close(handle)
    os.unlink(probe)


# -- temporary files: `.NAME.<pid>-XXXXXXXX.tmp` beside NAME ------------------------------------------

# mkstemp's random part: eight of [a-z0-9_]. Temporaries of earlier versions had no pid in front of it.
_OURS = re.compile(r"(?P<pid>\d+)-[a-z0-9_]{8}")
_WITHOUT_PID = re.compile(r"[a-z0-9_]{8}")
# /proc gives a process's start in clock ticks after boot, and boot in whole seconds: allow for both.
_START_TIME_SLACK_S = 2.0


def note(message: str) -> None:
    """A remark on stderr that is neither a result nor an error (a leftover removed, a leftover seen)."""
    print(f"note: {message}", file=sys.stderr)


def temporary_path(target: Path) -> Path:
    """A new, empty file beside `target` named `.NAME.<pid>-XXXXXXXX.tmp`, with the permissions a plain
    open() would give (mkstemp makes it private). The pid lets a later run tell a leftover of a killed
    process from the temporary of one still writing. Call it under `signals_held()` and remember the
    name before they are let through, or an interrupt can leave the file behind unnamed."""
    import tempfile

    handle, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.{os.getpid()}-", suffix=".tmp")
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(handle, 0o666 & ~umask)
    finally:
        os.close(handle)
    return Path(name)


def remove_stale_temporaries(target: Path) -> list[Path]:
    """Remove the temporaries of `target` that processes now gone left behind (a `kill -9`, a power
    cut); a live process's temporary is never touched. Returns what was removed, each named on stderr.
    Temporaries without a pid (earlier versions) are named, not removed: their writer cannot be known."""
    prefix = f".{target.name}."
    removed: list[Path] = []
    try:
        names = [
            name for name in os.listdir(target.parent) if name.startswith(prefix) and name.endswith(".tmp")
        ]
    except OSError:
        return removed  # the folder is missing or unreadable: there is nothing of ours to clean
    for name in sorted(names):
        middle, path = name[len(prefix) : -len(".tmp")], target.parent / name
        if (ours := _OURS.fullmatch(middle)) is not None:
            if left_by_gone_process(path, int(ours["pid"])):
                _remove(path)
                removed.append(path)
                note(f"removed {path}, left half-written by process {ours['pid']}, which has ended")
        elif _WITHOUT_PID.fullmatch(middle) is not None and _older_than_this_process(path):
            note(
                f"{path} looks left half-written by an interrupted run; remove it if nothing writes {target}"
            )
    return removed


def left_by_gone_process(path: Path, pid: int) -> bool:
    """Whether `path`, made by process `pid`, outlived it: no such process, a zombie, or the pid now
    names a process started after `path` was last written (the pid was reused)."""
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # alive, another user's
    started, state = _process_start(pid)
    if state == "Z":
        return True
    try:
        written = path.stat().st_mtime
    except OSError:
        return False  # gone already (its owner finished) or unreadable: leave it
    return started is not None and started > written + _START_TIME_SLACK_S


def _older_than_this_process(path: Path) -> bool:
    started, _ = _process_start(os.getpid())
    try:
        return started is not None and path.stat().st_mtime < started - _START_TIME_SLACK_S
    except OSError:
        return False


def _process_start(pid: int) -> tuple[float | None, str | None]:
    """When process `pid` started (seconds since the epoch) and its state letter; (None, None) where
    /proc cannot tell (not Linux, the process just ended)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        boot = next(
            float(line.split()[1])
            for line in Path("/proc/stat").read_text().splitlines()
            if line.startswith("btime")
        )
    except (OSError, StopIteration, IndexError, ValueError):
        return None, None
    # Field 22 of stat is the start time; after the command's closing parenthesis the fields start at 3.
    return boot + int(fields[19]) / os.sysconf("SC_CLK_TCK"), fields[0]


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        import shutil

        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


# -- atomic writes -----------------------------------------------------------------------------------

_WRITE_FIX = "free space on the device or make the folder writable, then run the command again"


def write_text_atomic(path: Path, text: str) -> None:
    """Write next to the target, then rename: readers see the old file or the new one, never half."""
    write_chunks_atomic(path, (text.encode("utf-8"),))


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """As write_text_atomic, for bytes."""
    write_chunks_atomic(path, (data,))


def write_chunks_atomic(path: Path, chunks: Iterable[bytes]) -> None:
    """As write_text_atomic, for data made piece by piece (a large file need not be held whole).

    Missing folders above `path` are made. A failure of the file system becomes CannotWrite; Ctrl-C,
    SIGTERM or any error removes the temporary, and a leftover of a killed earlier writer is removed first."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CannotWrite(path, os_error_reason(exc), _WRITE_FIX) from None
    remove_stale_temporaries(path)
    temporary: Path | None = None
    try:
        with signals_held():  # made and named as one step: an interrupt cannot leave it unnamed
            temporary = temporary_path(path)
        with temporary.open("wb") as stream:
            for chunk in chunks:
                stream.write(chunk)
            stream.flush()
            os.fsync(stream.fileno())  # the rename must not publish a file whose bytes are still in memory
        os.replace(temporary, path)
    except BaseException as exc:  # Ctrl-C, SIGTERM or a failure: nothing half-written stays
        if temporary is not None:
            temporary.unlink(missing_ok=True)
        if isinstance(exc, OSError) and _failed_writing(exc, temporary, path):
            raise CannotWrite(path, os_error_reason(exc), _WRITE_FIX) from None
        raise  # not this write's failure (a chunk's producer read another file), or an interrupt


def _failed_writing(exc: OSError, temporary: Path | None, path: Path) -> bool:
    """Whether `exc` is the write's own failure (making, filling or renaming the temporary)."""
    return temporary is None or exc.filename in (None, str(temporary), str(path))
