"""The upload: a reproducible tar.gz of the tree, its sha256 file, and a manifest of every file in it.

Reproducible means the same tree gives the same bytes: members sorted, every time stamp 0, owner
0:0 with no user or group names, modes reduced to 0644/0755, and a gzip header without name or time.
The three files are written to temporary names beside their targets and renamed into place only when
the archive has been read back and matches the manifest; the sha256 file is renamed last, so its
presence says the package is complete. Ctrl-C or SIGTERM removes the temporary files; those a `kill -9`
left (`.NAME.tar.gz.<pid>-XXXXXXXX.tmp`) are removed by the next package of the same name, once the
process that wrote them is gone.

The manifest lies beside the archive, not in it: inside, it would be a stray file in the submission
tree that MLCommons' checker rejects, and it could not hold the archive's own checksum.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import tarfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from submitter.errors import SubmitterError
from submitter.fileio import remove_stale_temporaries, temporary_path
from submitter.interrupts import signals_held, terminate_as_interrupt
from submitter.package.leaks import unreadable_reason
from submitter.regular_files import NotARegularFile, open_regular
from submitter.workspace import ARCHIVE_COMPANIONS

MANIFEST_SCHEMA_VERSION = 1
FIXED_MTIME = 0
GZIP_LEVEL = 6  # gzip's own default: within a few percent of 9 for logs, at a fraction of the time
READ_BYTES = 1 << 20


class UnreadableInput(SubmitterError):
    """A file of the tree that could not be archived (it changed, or a read failed): a finding at `path`."""

    def __init__(self, path: str, message: str, fix: str) -> None:
        super().__init__(f"{path} {message}; {fix}")
        self.path, self.message, self.fix = path, message, fix


@dataclass(frozen=True)
class ArchivePaths:
    archive: Path
    checksum: Path
    manifest: Path

    @classmethod
    def of(cls, out_dir: Path, name: str) -> ArchivePaths:
        checksum_suffix, manifest_suffix = ARCHIVE_COMPANIONS
        return cls(
            archive=out_dir / f"{name}.tar.gz",
            checksum=out_dir / f"{name}{checksum_suffix}",
            manifest=out_dir / f"{name}{manifest_suffix}",
        )

    def all(self) -> tuple[Path, Path, Path]:
        return (self.archive, self.manifest, self.checksum)  # the order they are published in

    def existing(self) -> list[Path]:
        return [path for path in self.all() if path.exists() or path.is_symlink()]


@dataclass(frozen=True)
class ManifestEntry:
    path: str
    size: int
    sha256: str


@dataclass(frozen=True)
class WrittenArchive:
    paths: ArchivePaths
    sha256: str
    files: tuple[ManifestEntry, ...]

    @property
    def total_bytes(self) -> int:
        return sum(entry.size for entry in self.files)


def write_archive(
    root: Path, files: Sequence[str], dirs: Iterable[str], paths: ArchivePaths, force: bool
) -> WrittenArchive:
    """Archive `files` and `dirs` (relative to `root`, as they will be named in the archive).

    UnreadableInput when a file of the tree cannot be archived; SubmitterError when the output cannot be
    written. Either way nothing is published."""
    try:
        return _write(root, files, dirs, paths, force)
    except OSError as exc:  # the output side: a full disk, a read-only folder
        raise SubmitterError(
            f"cannot write {exc.filename or paths.archive} ({exc.strerror or exc}); nothing was published"
        ) from None


def _write(
    root: Path, files: Sequence[str], dirs: Iterable[str], paths: ArchivePaths, force: bool
) -> WrittenArchive:
    paths.archive.parent.mkdir(parents=True, exist_ok=True)
    for target in paths.all():
        remove_stale_temporaries(target)
    with terminate_as_interrupt(), _temporary_files() as temporary:
        archive_tmp = temporary(paths.archive)
        entries = _write_tar(root, files, _with_parents(dirs, files), archive_tmp)
        _verify(archive_tmp, entries)
        digest = _sha256_of(archive_tmp)
        manifest_tmp = temporary(paths.manifest)
        manifest_tmp.write_text(
            json.dumps(manifest(paths, digest, entries), indent=2) + "\n", encoding="utf-8"
        )
        checksum_tmp = temporary(paths.checksum)
        # sha256sum's own format: `sha256sum -c NAME.tar.gz.sha256` checks the archive.
        checksum_tmp.write_text(f"{digest}  {paths.archive.name}\n", encoding="utf-8")
        if not force and (existing := paths.existing()):
            raise SubmitterError(f"{existing[0]} appeared while packaging; nothing was overwritten")
        for source, target in zip((archive_tmp, manifest_tmp, checksum_tmp), paths.all(), strict=True):
            os.replace(source, target)
    return WrittenArchive(paths, digest, tuple(entries))


def manifest(paths: ArchivePaths, digest: str, entries: Sequence[ManifestEntry]) -> dict[str, Any]:
    """No time, host or absolute path: packaging the same tree twice writes the same manifest."""
    return {
        "schema_version": MANIFEST_SCHEMA_VERSION,
        "archive": paths.archive.name,
        "archive_sha256": digest,
        "file_count": len(entries),
        "total_bytes": sum(entry.size for entry in entries),
        "files": [{"path": e.path, "size": e.size, "sha256": e.sha256} for e in entries],
    }


def _sort_key(path: str) -> tuple[str, ...]:
    return tuple(path.split("/"))  # a folder right before what it holds


def _with_parents(dirs: Iterable[str], files: Iterable[str]) -> set[str]:
    """Every folder, including those above the tree's top (`closed` for `closed/RedHat`)."""
    found = set(dirs)
    for path in [*found, *files]:
        parts = path.split("/")
        found.update("/".join(parts[:end]) for end in range(1, len(parts)))
    return found


def _write_tar(root: Path, files: Sequence[str], dirs: set[str], target: Path) -> list[ManifestEntry]:
    entries: list[ManifestEntry] = []
    members = sorted(
        [*((d, True) for d in dirs), *((f, False) for f in files)], key=lambda m: _sort_key(m[0])
    )
    with (
        target.open("wb") as raw,
        gzip.GzipFile(
            filename="", mode="wb", fileobj=raw, compresslevel=GZIP_LEVEL, mtime=FIXED_MTIME
        ) as zipped,
        tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for path, is_dir in members:
            if is_dir:
                tar.addfile(_member(path, tarfile.DIRTYPE, 0o755, 0))
            else:
                entries.append(_add_file(tar, root, path))
    return entries


def _member(path: str, kind: bytes, mode: int, size: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(path)
    info.type, info.mode, info.size, info.mtime = kind, mode, size, FIXED_MTIME
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def _add_file(tar: tarfile.TarFile, root: Path, path: str) -> ManifestEntry:
    changed = UnreadableInput(
        path, "changed while it was being packaged", "package again when nothing writes to the tree"
    )
    try:
        # A file swapped for a symbolic link since the scan is refused, not followed; one swapped for a
        # FIFO is refused before a read could block.
        stream = open_regular(root / path, follow_links=False)
    except NotARegularFile:
        raise changed from None
    except OSError as exc:
        raise UnreadableInput(path, *unreadable_reason(exc)) from None
    with stream:
        descriptor = stream.fileno()
        before = os.fstat(descriptor)
        mode = 0o755 if before.st_mode & 0o111 else 0o644
        reader = _HashingReader(stream, path)
        try:
            tar.addfile(_member(path, tarfile.REGTYPE, mode, before.st_size), reader)
        except OSError as exc:
            if exc.errno is None:  # tarfile's "unexpected end of data": the file shrank
                raise changed from None
            raise
        after = os.fstat(descriptor)
    if (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
        raise changed
    return ManifestEntry(path, before.st_size, reader.hash.hexdigest())


class _HashingReader:
    """Hashes exactly the bytes tarfile copies, so the manifest describes the archive, not the disk."""

    def __init__(self, stream: BinaryIO, path: str) -> None:
        self.stream, self.path = stream, path
        self.hash = hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        try:
            data = self.stream.read(size)
        except OSError as exc:  # the input failed, not the archive being written: named as such
            raise UnreadableInput(self.path, *unreadable_reason(exc)) from None
        self.hash.update(data)
        return data


def _verify(archive: Path, entries: Sequence[ManifestEntry]) -> None:
    """Read the archive back: every file is there, once, with the bytes the manifest records."""
    expected = {entry.path: entry for entry in entries}
    found: dict[str, str] = {}
    with tarfile.open(archive, mode="r:gz") as tar:
        for member in tar:
            stream = tar.extractfile(member) if member.isfile() else None
            if stream is not None:
                found[member.name] = _sha256_of_stream(stream)
    if found != {path: entry.sha256 for path, entry in expected.items()}:
        raise SubmitterError(f"{archive} does not read back as written; nothing was published (disk full?)")


def _sha256_of(path: Path) -> str:
    with path.open("rb") as stream:
        return _sha256_of_stream(stream)


def _sha256_of_stream(stream: BinaryIO) -> str:
    digest = hashlib.sha256()
    while chunk := stream.read(READ_BYTES):
        digest.update(chunk)
    return digest.hexdigest()


@contextmanager
def _temporary_files() -> Iterator[Callable[[Path], Path]]:
    """Temporary files beside their targets; whatever was not renamed into place is removed on the way out."""
    created: list[Path] = []

    def temporary(target: Path) -> Path:
        with signals_held():  # made and remembered as one step, so the clean-up below knows it
            created.append(temporary_path(target))
        return created[-1]

    try:
        yield temporary
    finally:
        for path in created:
            path.unlink(missing_ok=True)
