"""Child processes that die with their parent, so a `kill -9` of run-all leaves no run holding the GPUs."""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def end_with_parent(parent_pid: int) -> None:
    """Ask the kernel to send SIGTERM (default action: exit) to this process when its parent dies.

    The default action matters: a Python handler would wait for LoadGen's C++ call to return. Linux
    only; elsewhere an orphaned run finishes on its own and nobody records it.
    """
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent_pid:  # the parent died before the request was made
        os.kill(os.getpid(), signal.SIGTERM)
