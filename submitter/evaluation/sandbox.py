"""Run one untrusted program (model-generated code and its tests) in a throwaway sandbox.

Code-scoring benchmarks (MBXP for mixtral-8x7b first) compile and run thousands of programs a model wrote.
They must not reach the network, fill the memory, outlive their time limit, signal the scorer, or leave
files behind, and a run must say how isolated it really was. Without containers or cgroups, on Linux:

- network and processes: new user, network and PID namespaces (unshare(2) through ctypes, in a small
  launcher: this file run as a script). The network namespace has only a loopback that is down, so nothing
  is reachable, not even the host's 127.0.0.1. The PID namespace keeps the program from signalling host
  processes (as root in a container, kill(-1) would reach every root process) and kills whatever it
  started when it ends. ctypes and not os.unshare: that needs Python 3.12; and not preexec_fn, which is
  unsafe in threads (callers score in threads). As root without user namespaces, network and PID
  namespaces alone are tried. When neither works the program still runs and the result says so
  (`network_isolated` False, `isolation_note` why), or SandboxUnavailable is raised if isolation is required.
- memory: RLIMIT_DATA (private writable memory: brk and, since Linux 4.7, mmap), not RLIMIT_AS: V8 (node,
  tsc) and the JVM reserve far more address space than they use; RLIMIT_AS at 1 GiB stops the JVM starting.
- time: a wall-clock limit; at the limit the launcher kills the namespace's init (which empties the
  namespace) and its whole process group.
- files: a fresh temporary folder is the cwd, HOME and TMPDIR, removed afterwards. The rest of the file
  system is not hidden; a file size limit (RLIMIT_FSIZE) bounds what the program writes.
- environment: only PATH, HOME, TMPDIR and LANG, plus what the caller adds; stdin is /dev/null; stdout and
  stderr are captured, their first bytes kept.

This module imports only the standard library: the launcher runs it with `python -I -S`.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import resource
import selectors
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_CLONE_NEWUSER = 0x10000000
_CLONE_NEWPID = 0x20000000
_CLONE_NEWNET = 0x40000000
# How long a finished launcher's pipes may stay open (a leftover outside the namespace holding them).
_PIPE_GRACE_SECONDS = 0.5
# How long the launcher gets to empty its namespace after being told to stop, before it is killed.
_STOP_GRACE_SECONDS = 10.0


class SandboxError(RuntimeError):
    """The sandbox itself failed (not the program in it)."""


class SandboxUnavailable(SandboxError):
    """Isolation was required and this host cannot provide it."""


@dataclass(frozen=True)
class SandboxLimits:
    """What one run may use. The memory limit is per process (RLIMIT_DATA)."""

    wall_seconds: float = 20.0
    memory_bytes: int = 2 * 2**30
    output_bytes: int = 64 * 2**10
    file_bytes: int = 128 * 2**20


@dataclass(frozen=True)
class SandboxResult:
    """One run: its exit and output, and how isolated it was.

    `returncode` follows subprocess (negative: killed by that signal) and is None when the run was stopped at
    the time limit (`timed_out`).
    """

    command: tuple[str, ...]
    returncode: int | None
    timed_out: bool
    stdout: str
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool
    network_isolated: bool
    isolation_note: str
    elapsed_seconds: float

    @property
    def succeeded(self) -> bool:
        """Exit status 0 within the time limit: what compilers and test programs mean by success."""
        return self.returncode == 0


def which_commands(commands: Iterable[str], path: str | None = None) -> dict[str, str | None]:
    """Each command -> where it is on `path` (default: this process's PATH), None when absent, so that
    callers can name the languages whose toolchain is missing instead of scoring them as failures."""
    return {command: shutil.which(command, path=path) for command in commands}


def missing_commands(commands: Iterable[str], path: str | None = None) -> tuple[str, ...]:
    """The commands of `commands` that are not on `path`."""
    return tuple(command for command, found in which_commands(commands, path).items() if found is None)


def minimal_environment(
    home: Path, path: str | None = None, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The program's whole environment: no tokens, proxies or settings of the scorer leak in."""
    environment = {
        "PATH": os.environ.get("PATH", os.defpath) if path is None else path,
        "HOME": str(home),
        "TMPDIR": str(home),
        # A UTF-8 locale, as the reference's containers have; it also keeps Python from coercing the locale.
        "LANG": "C.UTF-8",
    }
    return {**environment, **(extra or {})}


@contextlib.contextmanager
def sandbox_directory() -> Iterator[Path]:
    """A fresh private folder, removed afterwards whatever the program did to its permissions. For several
    steps in one folder (compile, then run); `run_sandboxed` makes its own when given none."""
    folder = Path(tempfile.mkdtemp(prefix="sandbox-"))
    try:
        yield folder
    finally:
        _remove_tree(folder)


def run_sandboxed(
    command: Sequence[str],
    *,
    files: Mapping[str, str | bytes] | None = None,
    workdir: Path | None = None,
    limits: SandboxLimits | None = None,
    path: str | None = None,
    extra_env: Mapping[str, str] | None = None,
    isolate: bool = True,
    require_isolation: bool = False,
) -> SandboxResult:
    """Run `command` once in the sandbox and wait for it (at most `limits.wall_seconds`).

    `files` (name -> text or bytes) are written into the working folder first; `workdir` runs in the
    caller's folder (from `sandbox_directory`) instead of a fresh one. `path` is the PATH the command is
    looked up on and that the program sees. `isolate=False` skips the namespaces (the result says so).
    Raises FileNotFoundError when the command is not found, SandboxUnavailable when `require_isolation`
    and the namespaces cannot be made, SandboxError when the sandbox itself breaks.
    """
    if workdir is not None:
        return _run_in(workdir, command, files, limits, path, extra_env, isolate, require_isolation)
    with sandbox_directory() as folder:
        return _run_in(folder, command, files, limits, path, extra_env, isolate, require_isolation)


def _run_in(
    folder: Path,
    command: Sequence[str],
    files: Mapping[str, str | bytes] | None,
    limits: SandboxLimits | None,
    path: str | None,
    extra_env: Mapping[str, str] | None,
    isolate: bool,
    require_isolation: bool,
) -> SandboxResult:
    _write_files(folder, files or {})
    environment = minimal_environment(folder, path, extra_env)
    spec = _LaunchSpec(
        executable=_resolve(command[0], environment["PATH"], folder),
        argv=list(command),
        environment=environment,
        limits=limits or SandboxLimits(),
        isolate=isolate,
        require_isolation=require_isolation,
    )
    return _supervise(tuple(command), spec, folder)


def _resolve(name: str, search_path: str, folder: Path) -> str:
    """The executable to exec: a name with a slash is taken relative to the folder, others found on PATH."""
    if "/" in name:
        return str(folder / name)
    found = shutil.which(name, path=search_path)
    if found is None:
        raise FileNotFoundError(f"{name!r} is not on PATH ({search_path!r})")
    return found


def _write_files(folder: Path, files: Mapping[str, str | bytes]) -> None:
    for name, content in files.items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")


def _remove_tree(folder: Path) -> None:
    """rmtree that first gives back permissions the program took away (chmod 000 on a folder)."""

    def make_writable_and_retry(function: Callable[[str], object], failed_path: str, _error: object) -> None:
        parent = os.path.dirname(failed_path)
        os.chmod(parent, os.stat(parent).st_mode | stat.S_IRWXU)
        with contextlib.suppress(FileNotFoundError):
            if os.path.isdir(failed_path) and not os.path.islink(failed_path):
                os.chmod(failed_path, stat.S_IRWXU)
                shutil.rmtree(failed_path, onerror=make_writable_and_retry)
            else:
                function(failed_path)

    shutil.rmtree(folder, onerror=make_writable_and_retry)


# ---- the parent side: start the launcher, collect output, enforce the time limit ----


@dataclass(frozen=True)
class _LaunchSpec:
    executable: str
    argv: list[str]
    environment: dict[str, str]
    limits: SandboxLimits
    isolate: bool
    require_isolation: bool

    def as_json(self, status_fd: int) -> str:
        return json.dumps(
            {
                "executable": self.executable,
                "argv": self.argv,
                "environment": self.environment,
                "memory_bytes": self.limits.memory_bytes,
                "file_bytes": self.limits.file_bytes,
                "isolate": self.isolate,
                "require_isolation": self.require_isolation,
                "status_fd": status_fd,
            }
        )


class _Capture:
    """The first `limit` bytes of a stream; the rest is read and dropped so the program never blocks."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.kept = bytearray()
        self.truncated = False

    def add(self, chunk: bytes) -> None:
        room = self.limit - len(self.kept)
        self.kept += chunk[: max(room, 0)]
        self.truncated = self.truncated or len(chunk) > room

    def text(self) -> str:
        return self.kept.decode("utf-8", errors="replace")


@dataclass
class _Collected:
    stdout: _Capture
    stderr: _Capture
    status: bytearray
    deadline_reached: bool = False


def _supervise(command: tuple[str, ...], spec: _LaunchSpec, folder: Path) -> SandboxResult:
    status_read, status_write = os.pipe()
    started = time.monotonic()
    try:
        try:
            launcher = subprocess.Popen(
                [sys.executable, "-I", "-S", str(Path(__file__).resolve()), spec.as_json(status_write)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=folder,
                env=spec.environment,
                pass_fds=(status_write,),
                start_new_session=True,  # its own process group, and no controlling terminal
            )
        finally:
            os.close(status_write)  # the launcher holds its copy; EOF then means it is gone
        try:
            collected = _collect(launcher, status_read, spec.limits, started + spec.limits.wall_seconds)
        finally:
            _stop(launcher)
    finally:
        os.close(status_read)
    return _result(command, collected, time.monotonic() - started)


def _collect(
    launcher: subprocess.Popen[bytes], status_read: int, limits: SandboxLimits, deadline: float
) -> _Collected:
    """Read stdout, stderr and the launcher's status until the launcher is done or the deadline passes."""
    assert launcher.stdout is not None and launcher.stderr is not None
    collected = _Collected(_Capture(limits.output_bytes), _Capture(limits.output_bytes), bytearray())
    launcher_done_at: float | None = None
    with selectors.DefaultSelector() as selector:
        selector.register(launcher.stdout, selectors.EVENT_READ, collected.stdout)
        selector.register(launcher.stderr, selectors.EVENT_READ, collected.stderr)
        selector.register(status_read, selectors.EVENT_READ, collected.status)
        while selector.get_map():
            stop_at = deadline if launcher_done_at is None else launcher_done_at + _PIPE_GRACE_SECONDS
            now = time.monotonic()
            if now >= min(stop_at, deadline):
                collected.deadline_reached = now >= deadline
                break
            for key, _ in selector.select(timeout=min(stop_at, deadline) - now):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fileobj)
                    if key.data is collected.status:  # every holder (launcher, init) is gone
                        launcher_done_at = time.monotonic()
                elif key.data is collected.status:
                    collected.status += chunk
                else:
                    key.data.add(chunk)
    return collected


def _stop(launcher: subprocess.Popen[bytes]) -> None:
    """Make sure nothing of the run is left: SIGTERM asks the launcher to kill its namespace's init (which
    empties the namespace) and its process group; if it does not, the process group is killed from here."""
    if launcher.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            launcher.send_signal(signal.SIGTERM)
        try:
            launcher.wait(timeout=_STOP_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(launcher.pid, signal.SIGKILL)
            launcher.wait()
    for stream in (launcher.stdout, launcher.stderr):
        if stream is not None:
            stream.close()


def _result(command: tuple[str, ...], collected: _Collected, elapsed: float) -> SandboxResult:
    """Read the launcher's status lines: "isolation ...", "exit N", or "refused ..." / "failed ..."."""
    text = collected.status.decode("utf-8", "replace")
    lines = dict(line.split(" ", 1) for line in text.splitlines() if " " in line)
    if "refused" in lines:
        raise SandboxUnavailable(f"network isolation is required but unavailable here: {lines['refused']}")
    if "failed" in lines:
        raise SandboxError(f"the sandbox launcher failed: {lines['failed']}")
    if "exit" not in lines and not collected.deadline_reached:
        raise SandboxError(f"the launcher ended without the program's exit status: {collected.stderr.text()}")
    isolation = lines.get("isolation", "none: the launcher reported nothing")
    return SandboxResult(
        command=command,
        returncode=int(lines["exit"]) if "exit" in lines else None,
        timed_out="exit" not in lines,
        stdout=collected.stdout.text(),
        stderr=collected.stderr.text(),
        stdout_truncated=collected.stdout.truncated,
        stderr_truncated=collected.stderr.truncated,
        network_isolated=isolation == "namespaces",
        isolation_note=isolation,
        elapsed_seconds=elapsed,
    )


# ---- the launcher side: this file run as `python -I -S sandbox.py SPEC` in the working folder ----
#
# launcher (host namespaces, process group leader) -- writes "isolation ...", sweeps the group at the end
#   init (PID 1 of the new namespace)               -- reaps; writes "exit N" when the program ends
#     program (exec'd with the limits)
# A separate init keeps PID 1's signal rules (signals without a handler are ignored) away from the program.


def _launch(spec: dict[str, Any]) -> None:
    status_fd: int = spec["status_fd"]
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a crashing program must not write a core dump
    isolation = _enter_namespaces() if spec["isolate"] else "none: not requested"
    if isolation != "namespaces" and spec["require_isolation"]:
        _report(status_fd, "refused", isolation)
        return
    _report(status_fd, "isolation", isolation)
    children: list[int] = []

    def stop_children(_signum: int, _frame: object) -> None:
        for child in children:
            _kill_quietly(child)

    # Installed before the fork so that a stop request is never lost; init puts the default back.
    signal.signal(signal.SIGTERM, stop_children)
    init = os.fork()
    if init == 0:
        _run_init(spec, status_fd)
    children.append(init)
    _wait_for(init)
    os.killpg(0, signal.SIGKILL)  # leftovers of a run without namespaces, and this launcher


def _enter_namespaces() -> str:
    """'namespaces' when new network and PID namespaces are in place, else 'none: why not'."""
    try:
        unshare = ctypes.CDLL(None, use_errno=True).unshare
    except (OSError, AttributeError) as error:
        return f"none: unshare(2) is not available ({error})"
    uid, gid = os.getuid(), os.getgid()
    if unshare(_CLONE_NEWUSER | _CLONE_NEWNET | _CLONE_NEWPID) == 0:
        _map_identity(uid, gid)
        return "namespaces"
    with_user = os.strerror(ctypes.get_errno())
    if unshare(_CLONE_NEWNET | _CLONE_NEWPID) == 0:  # root where user namespaces are off
        return "namespaces"
    without_user = os.strerror(ctypes.get_errno())
    return f"none: unshare failed (with a user namespace: {with_user}; without: {without_user})"


def _map_identity(uid: int, gid: int) -> None:
    """Keep the same ids inside the user namespace: unmapped ids could not create files (EOVERFLOW)."""
    Path("/proc/self/setgroups").write_text("deny")
    Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
    Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")


def _run_init(spec: dict[str, Any], status_fd: int) -> None:
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        program = os.fork()
        if program == 0:
            os.close(status_fd)
            _exec_program(spec)
        _report(status_fd, "exit", str(_wait_for(program)))
    except BaseException as error:
        _report(status_fd, "failed", f"init: {error!r}")
    finally:
        os._exit(0)


def _exec_program(spec: dict[str, Any]) -> None:
    try:
        # Python ignores these; an exec'd program must get the default actions back, as subprocess does.
        for name in ("SIGPIPE", "SIGXFSZ", "SIGXFZ"):
            if hasattr(signal, name):
                signal.signal(getattr(signal, name), signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_DATA, (spec["memory_bytes"], spec["memory_bytes"]))
        resource.setrlimit(resource.RLIMIT_FSIZE, (spec["file_bytes"], spec["file_bytes"]))
        os.execve(spec["executable"], spec["argv"], spec["environment"])
    except (OSError, ValueError) as error:
        os.write(2, f"sandbox: cannot run {spec['executable']}: {error}\n".encode())
    finally:
        os._exit(127)


def _wait_for(child: int) -> int:
    """Reap children (orphans come to init) until `child` ends; its exit code, negative for a signal."""
    while True:
        pid, status = os.wait()
        if pid == child:
            return os.waitstatus_to_exitcode(status)


def _kill_quietly(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _report(status_fd: int, key: str, value: str) -> None:
    os.write(status_fd, f"{key} {value}\n".encode())


if __name__ == "__main__":
    try:
        _launch(json.loads(sys.argv[1]))
    except Exception as error:  # the parent turns this into SandboxError
        _report(json.loads(sys.argv[1])["status_fd"], "failed", repr(error))
