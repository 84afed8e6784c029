"""The parent's side of a worker process (`harness.worker`): start it, hand it tests, end it.

    with EngineSession() as session:
        outcome = session.run(spec, environment)

A worker keeps its engine from one test to the next. `session.run` reuses the live worker when the
test needs the same engine (its sampling aside, which each test sets), environment, LoadGen model and
scenario, and the same user.conf apart from target_qps (what a worker can change between tests), and
starts a new one otherwise; `submitter run` makes one test per session, while run-all runs every mode
of a scenario in one and tune-qps every trial, so a GPU engine starts once per scenario instead of
once per run.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from harness.engine_log import ENGINE_LOG, LogTee
from harness.progress import PROGRESS_FILE
from harness.worker import (
    ABORTED,
    PARENT_PID_VARIABLE,
    REPORT_FD_VARIABLE,
    WorkerSpec,
    loadgen_configuration,
)
from submitter.fileformats.run_record import WorkerResult
from submitter.fileio import remove_stale_temporaries
from submitter.interrupts import terminate_as_interrupt

# vLLM needs a few seconds to free the GPU after its last test; past this the worker is killed.
_EXIT_WAIT_S = 120
# How long the engine's log may take to take in the last lines of a worker that has exited.
_LOG_DRAIN_S = 5


@dataclass(frozen=True)
class TestOutcome:
    """How one test ended: the worker's status (0 done, 1 failed, 3 refused before LoadGen started,
    4 aborted early; otherwise the exit status of a worker that died), what it reported, and whether
    we stopped it."""

    status: int | None
    result: WorkerResult | None
    interrupted: bool = False
    engine_log: Path | None = None  # the log of the engine the test ran on (harness.engine_log)


def worker_environment(extra: Mapping[str, str], loadgen_path: Path | None = None) -> dict[str, str]:
    """The worker's environment: ours, the descriptor's variables, and the round's LoadGen first on
    PYTHONPATH when it is not the installed one (`harness.loadgen_release`)."""
    environment = {**os.environ, **extra, PARENT_PID_VARIABLE: str(os.getpid())}
    if loadgen_path is not None:
        inherited = environment.get("PYTHONPATH")
        environment["PYTHONPATH"] = os.pathsep.join([str(loadgen_path), *([inherited] if inherited else [])])
    return environment


def _group_runs(group: int) -> bool:
    """Whether a process of the group still runs (Linux's /proc; zombies hold no memory and do not count,
    and where /proc is missing nothing is known to run)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()  # after the command: state, ppid, pgrp
        except (OSError, IndexError):
            continue  # gone meanwhile
        if len(fields) > 2 and fields[2] == str(group) and fields[0] not in ("Z", "X"):
            return True
    return False


class EngineSession:
    def __init__(self) -> None:
        self._worker: subprocess.Popen[bytes] | None = None
        self._report: IO[str] | None = None
        self._serves: tuple[Any, ...] | None = None
        self._log: LogTee | None = None
        self._log_path: Path | None = None

    def __enter__(self) -> EngineSession:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def run(self, spec: WorkerSpec, environment: Mapping[str, str]) -> TestOutcome:
        """One LoadGen test; Ctrl-C or SIGTERM meanwhile stops the worker and reports `interrupted`."""
        serves = (spec.engine.build_key(), loadgen_configuration(spec), sorted(environment.items()))
        if self._worker is not None and serves != self._serves:
            self.close()
        if self._worker is None:
            self._start(environment, spec.run_dir / ENGINE_LOG)
            self._serves = serves
        log = self._log_path
        assert self._worker is not None and self._worker.stdin is not None and self._report is not None
        try:
            with terminate_as_interrupt():
                # A worker that is gone breaks the pipe; its report pipe is then at its end too.
                with contextlib.suppress(BrokenPipeError):
                    self._worker.stdin.write(spec.model_dump_json().encode() + b"\n")
                    self._worker.stdin.flush()
                line = self._report.readline()
        except KeyboardInterrupt:
            return TestOutcome(self._stop_during(spec), None, interrupted=True, engine_log=log)
        if not line:  # died in the middle of the test (killed, out of memory, a crash in C++)
            return TestOutcome(self._stop_during(spec), None, engine_log=log)
        answer = json.loads(line)
        if answer["status"] == ABORTED:
            # LoadGen cannot stop a test, and its schedule would run on: end the worker and its engine.
            self._stop_during(spec)
        elif answer["status"] != 0:
            self.close()  # the worker ends itself after a failed test
        return TestOutcome(answer["status"], WorkerResult.model_validate(answer["result"]), engine_log=log)

    def close(self) -> None:
        """Let the worker free its engine and exit; kill it if it does not within _EXIT_WAIT_S."""
        if self._worker is None:
            return
        self._close_stdin()
        try:
            self._worker.wait(timeout=_EXIT_WAIT_S)
        except subprocess.TimeoutExpired:
            self._stop()
        else:
            self._forget()

    def _start(self, environment: Mapping[str, str], log_path: Path) -> None:
        report_read, report_write = os.pipe()
        log_read, log_write = os.pipe()
        command = [sys.executable, "-m", "harness.worker"]
        try:
            # The worker's stdout (engine logs) goes to stderr, so `--json` on stdout stays clean, and
            # into the engine's log.
            self._worker = subprocess.Popen(
                command,
                env={**environment, REPORT_FD_VARIABLE: str(report_write)},
                stdin=subprocess.PIPE,
                stdout=log_write,
                pass_fds=(report_write,),
                start_new_session=True,
            )
        except BaseException:
            os.close(report_read)
            os.close(log_read)
            raise
        finally:
            os.close(report_write)
            os.close(log_write)
        self._report = os.fdopen(report_read, "r", encoding="utf-8")
        self._log, self._log_path = LogTee(log_read, log_path), log_path

    def _stop_during(self, spec: WorkerSpec) -> int | None:
        """Stop the worker in the middle of `spec`'s test. A kill can catch it writing progress.json:
        the temporary it leaves goes too (LoadGen's logs stay as they were, as raw logs do)."""
        status = self._stop()
        remove_stale_temporaries(spec.run_dir / PROGRESS_FILE)
        return status

    def _stop(self) -> int | None:
        """End the worker and everything it started (engine processes share its process group), and
        wait until all of them are gone: the next test's engine needs the memory they hold."""
        worker = self._worker
        assert worker is not None
        for sent, wait_s in ((signal.SIGTERM, 15), (signal.SIGKILL, 15)):
            try:
                os.killpg(worker.pid, sent)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + wait_s
            try:
                worker.wait(timeout=wait_s)
            except subprocess.TimeoutExpired:
                continue
            while _group_runs(worker.pid) and time.monotonic() < deadline:
                time.sleep(0.1)
            if not _group_runs(worker.pid):
                break
        status = worker.poll()
        self._forget()
        return status

    def _close_stdin(self) -> None:
        """End of input: the worker finishes its test, frees the engine and exits."""
        if self._worker is not None and self._worker.stdin is not None:
            with contextlib.suppress(BrokenPipeError):
                self._worker.stdin.close()

    def _forget(self) -> None:
        if self._report is not None:
            self._report.close()
        self._close_stdin()
        if self._log is not None:
            self._log.join(_LOG_DRAIN_S)  # the worker is gone: what it printed last is on its way
        self._worker, self._report, self._serves, self._log, self._log_path = None, None, None, None, None
