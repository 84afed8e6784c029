"""Where the Hugging Face hub keeps downloaded models on this machine (the layout huggingface_hub writes)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

HUB_NAME = re.compile(r"^[\w.-]+/[\w.-]+$")  # "owner/model"


def hub_cache() -> Path:
    if cache := os.environ.get("HF_HUB_CACHE"):
        return Path(cache)
    home = Path(os.environ.get("HF_HOME", Path.home() / ".cache" / "huggingface"))
    return home / "hub"


def snapshots(name: str) -> list[Path]:
    """The downloaded snapshots of a hub model, newest first; none for a name that is not a hub name."""
    if not HUB_NAME.match(name):
        return []
    folder = hub_cache() / f"models--{name.replace('/', '--')}" / "snapshots"
    if not folder.is_dir():
        return []
    return sorted((p for p in folder.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime, reverse=True)


def checkpoint_json(model: str | Path, file: str) -> dict[str, Any] | None:
    """One of a checkpoint's JSON files (config.json, preprocessor_config.json), from `model_folder`; None
    where no folder has it or it is not a JSON object."""
    folder = model_folder(str(model), file)
    if folder is None:
        return None
    try:
        data = json.loads((folder / file).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def model_folder(model: str, file: str) -> Path | None:
    """The folder holding a model's `file`: the model directory itself, or the newest downloaded snapshot of a
    hub name that has it."""
    local = Path(model).expanduser()
    candidates = [local] if local.is_dir() else snapshots(model)
    return next((folder for folder in candidates if (folder / file).is_file()), None)
