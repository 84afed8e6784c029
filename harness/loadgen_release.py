"""Which LoadGen a round's runs use. The seeds are in the mlperf.conf each LoadGen release embeds, and
only mlperf.conf may set them, so a round needs one of its own releases: the installed one when it is
(the project pins the newest round's), otherwise the round's release installed beside it, into
`~/.cache/submitter/loadgen/<version>` (or $SUBMITTER_LOADGEN_DIR), by `submitter rounds install-loadgen`.

A run's worker process then finds that release first on its PYTHONPATH.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from submitter.errors import SubmitterError
from submitter.rounds.models import RoundRules

_PACKAGE = "mlcommons-loadgen"


@dataclass(frozen=True)
class LoadGenRelease:
    version: str
    path: Path | None  # the folder to put first on the worker's PYTHONPATH; None: the installed one


def side_root() -> Path:
    configured = os.environ.get("SUBMITTER_LOADGEN_DIR")
    return Path(configured) if configured else Path.home() / ".cache" / "submitter" / "loadgen"


def release_dir(version: str) -> Path:
    return side_root() / version


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".") if part.isdigit())


def in_seed_range(rules: RoundRules, version: str) -> bool:
    first, _, last = rules.loadgen.seed_releases.partition(" to ")
    return _release(first) <= _release(version) <= _release(last or first)


def installed_version() -> str | None:
    try:
        return metadata.version(_PACKAGE)
    except metadata.PackageNotFoundError:
        return None


def release_for(rules: RoundRules) -> LoadGenRelease:
    """The LoadGen whose embedded seeds are the round's; a SubmitterError says how to get one."""
    installed = installed_version()
    if installed is not None and in_seed_range(rules, installed):
        return LoadGenRelease(installed, None)
    beside = release_dir(rules.loadgen.version)
    if any(beside.glob("mlperf_loadgen*")):
        return LoadGenRelease(rules.loadgen.version, beside)
    have = f"LoadGen {installed} is installed" if installed else f"{_PACKAGE} is not installed"
    raise SubmitterError(
        f"{have}, but round {rules.name} needs a release from {rules.loadgen.seed_releases} (their "
        f"mlperf.conf holds the round's seeds); install {rules.loadgen.version} beside it with "
        f"`submitter rounds install-loadgen {rules.name}`"
    )


def install_release(rules: RoundRules) -> Path:
    """pip-installs the round's LoadGen into its own folder (atomically: a failed install leaves none)."""
    target = release_dir(rules.loadgen.version)
    if any(target.glob("mlperf_loadgen*")):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{rules.loadgen.version}-", dir=target.parent))
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(staging)]
    try:
        finished = subprocess.run(
            [*command, f"{_PACKAGE}=={rules.loadgen.version}"], capture_output=True, text=True, check=False
        )
        if finished.returncode != 0:
            raise SubmitterError(
                f"pip could not install {_PACKAGE}=={rules.loadgen.version}: "
                f"{finished.stderr.strip().splitlines()[-1] if finished.stderr.strip() else 'no message'}"
            )
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target
