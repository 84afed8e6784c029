"""SIGTERM handled like Ctrl-C, so a kill (of run-all, by a batch scheduler) is recorded and cleaned up.

The command line installs this once for every command (`install_terminate_as_interrupt`), so `package`,
`stage`, `report` and `data` remove their temporaries on SIGTERM exactly as on Ctrl-C, and exit 130.
Only the first SIGTERM of the process interrupts: repeats while it unwinds are ignored, so a scheduler
that sends SIGTERM twice cannot cut the clean-up short (SIGKILL still can).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

# The exit status of a command ended by Ctrl-C or SIGTERM: the shell's 128 + SIGINT, for both.
EXIT_INTERRUPTED = 130


class _FirstTerminate:
    """A SIGTERM handler that raises KeyboardInterrupt once and ignores the signals that follow."""

    def __init__(self) -> None:
        self.received = False

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self.received:
            return
        self.received = True
        raise KeyboardInterrupt


# One for the whole process: once a SIGTERM has interrupted anything, the process is on its way out.
_HANDLER = _FirstTerminate()


def _on_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()  # only it may handle signals


def install_terminate_as_interrupt() -> None:
    """From now on, SIGTERM raises KeyboardInterrupt (once); for the command line's entry point."""
    if _on_main_thread():
        signal.signal(signal.SIGTERM, _HANDLER)


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises KeyboardInterrupt (once); the previous handler comes back after."""
    if not _on_main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _HANDLER)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def signals_held() -> Iterator[None]:
    """Within the block, Ctrl-C and SIGTERM wait (they are delivered when it ends), so a step such as
    "create a temporary file and remember its name" is never cut in half and left unremembered.

    The wait is kept by the handlers, not by a signal mask: a mask holds a signal off one thread only, and
    the kernel may hand a kill to any thread of the process (numpy's, LoadGen's, an engine's), whose
    handler then interrupts the main thread anyway. Each signal that arrives is delivered once, to the
    handler in place, when the block ends."""
    if not _on_main_thread():  # only the main thread runs signal handlers, so only it can be interrupted
        yield
        return
    arrived: list[int] = []
    replaced: dict[int, Any] = {}
    try:
        for signum in (signal.SIGINT, signal.SIGTERM):
            if signal.getsignal(signum) is not None:  # None: installed outside Python, left alone
                replaced[signum] = signal.signal(signum, lambda received, _frame: arrived.append(received))
        yield
    finally:
        for signum, handler in replaced.items():
            signal.signal(signum, handler)
        for signum in dict.fromkeys(arrived):
            signal.raise_signal(signum)
