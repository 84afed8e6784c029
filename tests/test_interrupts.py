"""`signals_held()`: a step such as "make a temporary file and remember its name" is never cut in half by
Ctrl-C or SIGTERM, whichever thread of the process the signal reaches (numpy, LoadGen and the engines run
threads of their own), and the signal is delivered, once, to the handler in place when the step ends."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator

import pytest

from submitter.interrupts import signals_held, terminate_as_interrupt


def _signal_another_thread(signum: int) -> None:
    """The signal, delivered to a thread other than the main one (as the kernel may deliver a kill)."""
    helper = threading.Thread(target=lambda: signal.pthread_kill(threading.get_ident(), signum))
    helper.start()
    helper.join()
    time.sleep(0)  # a call: where the interpreter runs the handlers of signals that have arrived


def _steps_until_interrupted(signum: int) -> Iterator[str]:
    """Records each step of a held block and whether it was interrupted."""
    with signals_held():
        _signal_another_thread(signum)
        for step in range(10_000):  # enough bytecodes for a pending handler to run, were it let through
            yield f"step {step}"
        yield "done"


@pytest.fixture
def ctrl_c_interrupts() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt, as in a terminal's foreground (a test run in the background may
    have inherited SIGINT ignored)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_another_thread_receives_waits_for_the_held_step_to_end(
    signum: int, ctrl_c_interrupts: None
) -> None:
    steps: list[str] = []
    with terminate_as_interrupt(), pytest.raises(KeyboardInterrupt):
        for step in _steps_until_interrupted(signum):
            steps.append(step)
    assert steps[-1] == "done"


def test_the_handler_in_place_gets_the_held_signal_once_and_comes_back() -> None:
    received: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: received.append(signum))
    try:
        with signals_held():
            _signal_another_thread(signal.SIGTERM)
            _signal_another_thread(signal.SIGTERM)
            assert received == []
        assert received == [signal.SIGTERM]  # two arrivals while held: one delivery, as the kernel's mask
        _signal_another_thread(signal.SIGTERM)
        assert received == [signal.SIGTERM] * 2
    finally:
        signal.signal(signal.SIGTERM, previous)
