"""Scoring spread over worker processes that an interrupt ends at once.

A terminal's Ctrl-C reaches every process of the group: the workers ignore it and leave the decision to
the parent, which, on Ctrl-C or SIGTERM, cancels what has not started instead of waiting for every chunk
(the run is recorded as interrupted while it was scored).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import TypeVar

Chunk = TypeVar("Chunk")
Result = TypeVar("Result")


def _ignore_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def map_chunks(
    function: Callable[[Chunk], Result], chunks: Sequence[Chunk], workers: int | None = None
) -> list[Result]:
    """`function` of every chunk, in order, on up to `workers` processes (default: every core); in this
    process where one would do. `function` must be a module-level function (it crosses by name)."""
    workers = min(workers or os.cpu_count() or 1, max(len(chunks), 1))
    if workers == 1:
        return [function(chunk) for chunk in chunks]
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_ignore_interrupts)
    try:
        results = list(pool.map(function, chunks))
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return results
