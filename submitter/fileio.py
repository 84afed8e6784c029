"""Reading JSON with messages a user can act on, and writing files so that a crash leaves no half file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from submitter.errors import SubmitterError, UsageProblem


class JsonFileError(SubmitterError):
    """A file exists but does not hold valid JSON; `line` points at the problem when known."""

    def __init__(self, path: Path, reason: str, fix: str, line: int | None = None) -> None:
        self.path, self.reason, self.fix, self.line = path, reason, fix, line
        where = f"{path}:{line}" if line else str(path)
        super().__init__(f"{where}: {reason}; {fix}")


def json_error_reason(exc: json.JSONDecodeError) -> str:
    return f"is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"


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
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise JsonFileError(
            path,
            json_error_reason(exc),
            "correct the syntax (a trailing comma or a missing quote is the usual cause)",
            line=exc.lineno,
        ) from None


class CannotWrite(UsageProblem):
    """A destination the command would write cannot take it; raised before any work is done."""

    def __init__(self, path: Path, reason: str, fix: str) -> None:
        self.path, self.reason, self.fix = path, reason, fix
        super().__init__(f"cannot write {path}: {reason}; {fix}")


def ensure_writable(path: Path, *, folder: bool = False, make_parents: bool = False) -> None:
    """Prove, before any work, that `path` (a file, or with `folder` a folder) can be written.

    Permissions are not enough (root passes them; read-only mounts and immutable files do not show in
    them), so this tries: a file of its own in the folder that would hold the output, and an existing
    target file opened for writing without changing it. Raises CannotWrite (exit 2) with a fix."""
    if path.exists() and path.is_dir() != folder:
        kind = "a folder" if path.is_dir() else "a file"
        raise CannotWrite(path, f"it is {kind}", f"name {'a folder' if folder else 'a file'} instead")
    holder = path if folder and path.is_dir() else path.parent
    nearest = next(p for p in (holder, *holder.parents) if p.exists())
    if nearest != holder:
        if not make_parents:
            raise CannotWrite(path, f"{holder} does not exist", f"create it first (mkdir -p {holder})")
        holder = nearest  # the missing folders will be made inside it
    if not holder.is_dir():
        raise CannotWrite(path, f"{holder} is not a folder", "choose a path inside a folder")
    _probe_folder(path, holder)
    if path.is_file():
        try:
            os.close(os.open(path, os.O_WRONLY))
        except OSError as exc:
            raise CannotWrite(path, _reason(exc), "make it writable, or choose another path") from None


def _probe_folder(path: Path, holder: Path) -> None:
    import tempfile

    try:
        handle, probe = tempfile.mkstemp(dir=holder, prefix=".submitter-probe-")
    except OSError as exc:
        raise CannotWrite(path, f"{holder}: {_reason(exc)}", "choose a folder you can write to") from None
    os.close(handle)
    os.unlink(probe)


def _reason(exc: OSError) -> str:
    import errno

    known = {
        errno.EACCES: "permission denied",
        errno.EPERM: "not permitted (an immutable file or folder?)",
        errno.EROFS: "read-only file system",
        errno.ENOSPC: "no space left on the device",
    }
    return known.get(exc.errno or 0, exc.strerror or type(exc).__name__)


def write_text_atomic(path: Path, text: str) -> None:
    """Write next to the target, then rename: readers see the old file or the new one, never half."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """As write_text_atomic, for bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    import tempfile  # only writers need it; `check` starts faster without

    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        # mkstemp creates the file private (0600); give it the permissions a plain open() would.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
