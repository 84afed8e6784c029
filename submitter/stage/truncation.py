"""Accuracy logs cut to size the way MLCommons' truncate_accuracy_log.py does (checker.md §11).

The sha256 of the full log is appended to accuracy.txt as `hash=<hex>`; a log of 4096 bytes or more
keeps its first and last 4096 characters around a marker. The full log is kept elsewhere by staging.
"""

from __future__ import annotations

import hashlib

KEEP_CHARS = 4096
MARKER = "\n\n...\n\n"


def truncated_log(full: str) -> str:
    if len(full.encode("utf-8")) < KEEP_CHARS:
        return full
    return full[:KEEP_CHARS] + MARKER + full[-KEEP_CHARS:]


def accuracy_txt_with_hash(accuracy_txt: str, full_log: bytes) -> str:
    return f"{accuracy_txt}\nhash={hashlib.sha256(full_log).hexdigest()}\n"
