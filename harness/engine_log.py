"""An engine's own log, kept: what the worker and the engine's processes print on stdout (vLLM logs there) is
shown on our stderr as before and written to `engine.log` in the directory of the run whose test started the
engine (run.json's `harness.engine_started_by`; the runs that kept the engine share it). And what vLLM's log
says it found in GPU memory, set beside preflight's estimate in run.json.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from pathlib import Path

from submitter.fileformats.run_record import EngineMemoryRecord

ENGINE_LOG = "engine.log"
# vLLM reports its memory within its first minutes; a long run's log is not read further.
_READ_AT_MOST = 8 << 20
# vLLM 0.26, gpu_worker.py, once the profiling pass is done (each GPU worker; the first is kept).
_ACCOUNTING = re.compile(
    r"Actual usage is ([\d.]+) GiB for weight, ([\d.]+) GiB for peak activation, ([\d.]+) GiB for "
    r"non-torch memory, and ([\d.]+) GiB for CUDAGraph memory"
)
_AVAILABLE_KV = re.compile(r"Available KV cache memory: ([\d.]+) GiB")
_KV_TOKENS = re.compile(r"GPU KV cache size: ([\d,]+) tokens")


class LogTee:
    """Copies what arrives on `source` (a pipe's read end) to our stderr and to `path`, on a thread of its
    own, until every process holding the pipe's write end has closed it."""

    def __init__(self, source: int, path: Path) -> None:
        self._source = source
        self._file = path.open("ab")
        self._thread = threading.Thread(target=self._copy, name="engine-log", daemon=True)
        self._thread.start()

    def _copy(self) -> None:
        try:
            while chunk := os.read(self._source, 1 << 16):
                self._file.write(chunk)
                self._file.flush()
                with contextlib.suppress(OSError):  # no stderr left to show it on: the file has it
                    _write_all(2, chunk)
        finally:
            os.close(self._source)
            self._file.close()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)


def _write_all(descriptor: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view) :]


def engine_memory(log: Path) -> EngineMemoryRecord | None:
    """What the engine's log says of its memory (vLLM's own accounting); None where it says nothing."""
    try:
        with log.open("rb") as lines:
            text = lines.read(_READ_AT_MOST).decode("utf-8", errors="replace")
    except OSError:
        return None
    return memory_in(text)


def memory_in(text: str) -> EngineMemoryRecord | None:
    """vLLM's accounting of its memory in a log's text; None where the text has none."""
    usage, kv_gib, kv_tokens = _ACCOUNTING.search(text), _AVAILABLE_KV.search(text), _KV_TOKENS.search(text)
    if usage is None and kv_gib is None:
        return None
    weights, peak, non_torch, graphs = (float(value) for value in usage.groups()) if usage else (None,) * 4
    return EngineMemoryRecord(
        weights_gib=weights,
        peak_activation_gib=peak,
        non_torch_gib=non_torch,
        cuda_graphs_gib=graphs,
        kv_cache_gib=float(kv_gib.group(1)) if kv_gib else None,
        kv_cache_tokens=int(kv_tokens.group(1).replace(",", "")) if kv_tokens else None,
    )
