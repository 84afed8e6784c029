"""Writable copies of a real submission tree, and the small edits tests make to break them."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from submitter.fileformats.mlperf_log import MLLOG_PREFIX

RESULTS = "closed/RedHat/results"
H100 = f"{RESULTS}/XE8640_4xH100_vLLM/llama3.1-8b"
L40S = f"{RESULTS}/IBM_Cloud_gx3-48x240x2l40s_vLLM/llama3.1-8b"


def copy_tree(source: Path, root: Path) -> Path:
    """Copy closed/<Submitter> under root/closed/ with writable files and folders; returns root."""
    target = root / "closed" / source.name
    shutil.copytree(source, target, copy_function=shutil.copyfile)
    for folder, _, _ in os.walk(root):
        os.chmod(folder, 0o755)
    return root


def set_log_value(path: Path, key: str, value: Any) -> None:
    """Rewrite the first :::MLLOG record of `key` with a new value (or add the record)."""
    lines = path.read_text().splitlines()
    for index, line in enumerate(lines):
        record = json.loads(line.removeprefix(MLLOG_PREFIX))
        if record["key"] == key:
            record["value"] = value
            lines[index] = MLLOG_PREFIX + json.dumps(record)
            break
    else:
        lines.append(MLLOG_PREFIX + json.dumps({"key": key, "value": value, "metadata": {"is_error": False}}))
    path.write_text("\n".join(lines) + "\n")


def add_error_record(path: Path, message: str) -> None:
    record = {"key": "error_runtime", "value": message, "metadata": {"is_error": True, "is_warning": False}}
    with path.open("a") as stream:
        stream.write(MLLOG_PREFIX + json.dumps(record) + "\n")


def edit_json(path: Path, **changes: Any) -> None:
    data = json.loads(path.read_text())
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    path.write_text(json.dumps(data, indent=2))


def to_v6_layout(root: Path, submitter: str = "RedHat") -> Path:
    """Move a v5.1 tree's measurements and compliance into results/, and code/ to src/ (the v6 layout)."""
    base = root / "closed" / submitter
    for scenario_dir in sorted((base / "measurements").glob("*/*/*")):
        system, benchmark, scenario = scenario_dir.relative_to(base / "measurements").parts
        results = base / "results" / system / benchmark / scenario
        for item in scenario_dir.iterdir():
            name = "measurements.json" if item.name == f"{system}.json" else item.name
            shutil.move(item, results / name)
    for test_dir in sorted((base / "compliance").glob("*/*/*/TEST06")):
        system, benchmark, scenario, _ = test_dir.relative_to(base / "compliance").parts
        shutil.move(test_dir, base / "results" / system / benchmark / scenario / "TEST06")
    shutil.rmtree(base / "measurements")
    shutil.rmtree(base / "compliance")
    (base / "code").rename(base / "src")
    return root
