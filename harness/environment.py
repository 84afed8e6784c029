"""Facts about where a run happened, for run.json: versions, the project's git commit, the GPUs."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from importlib import metadata
from pathlib import Path

import harness
from submitter.fileformats.run_record import GitState, Gpu

_PACKAGES = ("submitter", "mlcommons-loadgen", "vllm", "torch", "transformers")


def versions() -> dict[str, str]:
    """Python and the installed versions of the packages a result depends on (absent ones omitted)."""
    found = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def git_state() -> GitState:
    """The commit of the checkout the harness runs from, and whether it has uncommitted changes."""
    source = Path(harness.__file__).resolve().parent
    try:
        import git
    except ImportError as exc:  # GitPython missing, or no git executable on this host
        return GitState(commit=None, dirty=None, note=f"git is not available here ({exc})")
    try:
        repository = git.Repo(source, search_parent_directories=True)
        return GitState(commit=repository.head.commit.hexsha, dirty=repository.is_dirty(untracked_files=True))
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, ValueError):
        return GitState(
            commit=None, dirty=None, note=f"{source} is not inside a git checkout (installed package)"
        )
    except git.GitCommandError as exc:
        return GitState(commit=None, dirty=None, note=f"git failed: {exc.stderr.strip() or exc}")


def visible_devices(value: str | None = None) -> list[str] | None:
    """The GPUs CUDA_VISIBLE_DEVICES (or `value`, a setting of it) lets a process use (indices or UUIDs);
    None when it is unset."""
    value = os.environ.get("CUDA_VISIBLE_DEVICES") if value is None else value
    if value is None:
        return None
    return [device.strip() for device in value.split(",") if device.strip()]


_GPU_FIELDS = "index,name,memory.total,driver_version,pci.bus_id"


def gpus(visible: list[str] | None = None) -> list[Gpu]:
    """The NVIDIA GPUs this process (or one given `visible`) may use, as nvidia-smi lists them, in
    CUDA_VISIBLE_DEVICES' order; none when there is no nvidia-smi or it fails."""
    visible = visible_devices() if visible is None else visible
    if shutil.which("nvidia-smi") is None or visible == []:
        return []
    selection = [] if visible is None else [f"--id={','.join(visible)}"]
    output = None
    # A driver too old to know memory.reserved refuses the whole query: then ask without it.
    for fields in (_GPU_FIELDS + ",memory.reserved", _GPU_FIELDS):
        command = ["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader", *selection]
        try:
            output = subprocess.run(command, capture_output=True, text=True, timeout=30, check=True).stdout
            break
        except (OSError, subprocess.SubprocessError):
            continue
    if output is None:
        return []
    rows = [[cell.strip() for cell in line.split(",")] for line in output.splitlines() if line.strip()]
    found = [
        Gpu(
            index=int(row[0]),
            name=row[1],
            memory=row[2],
            driver=row[3],
            bus_id=row[4],
            reserved=row[5] if len(row) > 5 and row[5].endswith(" MiB") else None,
        )
        for row in rows
        if len(row) >= 5 and row[0].isdigit()
    ]
    if (
        visible is not None
    ):  # nvidia-smi lists by index; CUDA numbers them as CUDA_VISIBLE_DEVICES orders them
        order = {name: position for position, name in enumerate(visible)}
        found.sort(key=lambda gpu: order.get(str(gpu.index), len(order)))
    return found
