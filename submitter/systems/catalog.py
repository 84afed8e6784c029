"""Finding system descriptors by id: the user's folders first, then the ones that ship with submitter."""

from __future__ import annotations

import os
from pathlib import Path

from submitter.errors import UsageProblem
from submitter.resources import shipped_dir

# Folders of the user's own descriptors, separated like PATH; they win over shipped ones of the same id.
SEARCH_PATH_VARIABLE = "SUBMITTER_SYSTEMS_PATH"


def descriptor_dirs() -> list[Path]:
    user_dirs = [Path(part) for part in os.environ.get(SEARCH_PATH_VARIABLE, "").split(os.pathsep) if part]
    return [*user_dirs, shipped_dir("systems")]


def find_descriptors() -> dict[str, Path]:
    """Every descriptor id and its file; an id found in several folders is taken from the first."""
    found: dict[str, Path] = {}
    for folder in descriptor_dirs():
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.json")):
            found.setdefault(path.stem, path)
    return found


def descriptor_path(system_id: str) -> Path:
    known = find_descriptors()
    if system_id in known:
        return known[system_id]
    missing = [str(folder) for folder in descriptor_dirs() if not folder.is_dir()]
    unread = f" (${SEARCH_PATH_VARIABLE} names {', '.join(missing)}: not a folder)" if missing else ""
    raise UsageProblem(
        f"no system descriptor with id {system_id!r}; known ids: {', '.join(known) or 'none'}{unread}. "
        f"Add <id>.json to a folder named in ${SEARCH_PATH_VARIABLE}, or pass the file's path"
    )
