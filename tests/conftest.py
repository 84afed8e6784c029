"""Shared test helpers: the real published tree from ../shared (skipped when absent) and the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared"
REDHAT_TREE = SHARED / "fixtures" / "v5.1" / "closed" / "RedHat"


@pytest.fixture
def redhat_tree() -> Path:
    if not REDHAT_TREE.is_dir():
        pytest.skip("../shared/fixtures is not beside this checkout")
    return REDHAT_TREE


def run_cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real command line in a fresh process, as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "submitter", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        check=False,
    )


def valid_system() -> dict[str, Any]:
    """A complete official description that passes every rule (the demo system's)."""
    from submitter.systems.catalog import descriptor_path
    from submitter.systems.validate import load_descriptor

    return load_descriptor(descriptor_path("demo_cpu")).official()


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path
