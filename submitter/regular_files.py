"""Opening a file of a tree only when it is a regular file, and reading at most a bound of it.

A tree comes from someone else: a FIFO where a log should be would block a reader forever, a link to
/dev/zero would never end. Every reader of a tree opens its files here.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


class NotARegularFile(OSError):
    """The path names something other than a regular file; `kind` says what, in words."""

    def __init__(self, path: Path, kind: str) -> None:
        super().__init__(f"{path} is {kind}, not a regular file")
        self.filename, self.kind = str(path), kind

    def __str__(self) -> str:
        return str(self.args[0])


class TooLarge(OSError):
    """The file holds more than the reader's bound."""

    def __init__(self, path: Path, limit: int) -> None:
        super().__init__(f"{path} is larger than {limit:,} bytes")
        self.filename, self.limit = str(path), limit

    def __str__(self) -> str:
        return str(self.args[0])


def kind_of(mode: int) -> str:
    """What a file of this st_mode is, in words ("a regular file", "a named pipe (FIFO)", ...)."""
    return next((kind for test, kind in _KINDS if test(mode)), "a regular file")


def open_regular(path: Path, *, follow_links: bool = True) -> BinaryIO:
    """`path` opened for binary reading, or NotARegularFile before any byte is read.

    O_NONBLOCK lets the open of a FIFO without a writer return at once (a plain open would wait for one);
    for a regular file it changes nothing. Without `follow_links`, a symbolic link is refused (OSError
    ELOOP): a file swapped for a link since it was listed is not read through it."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    descriptor = os.open(path, flags)
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise NotARegularFile(path, kind_of(mode))
    except BaseException:
        os.close(descriptor)
        raise
    return os.fdopen(descriptor, "rb")


def read_regular(path: Path, limit: int | None = None) -> bytes:
    """The bytes of the regular file `path`; TooLarge when it holds more than `limit`."""
    with open_regular(path) as stream:
        data = stream.read() if limit is None else stream.read(limit + 1)
    if limit is not None and len(data) > limit:
        raise TooLarge(path, limit)
    return data
