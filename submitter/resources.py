"""Where the files that ship with submitter are: descriptors, measurement templates, documents.

They sit at the top of the checkout (systems/, measurements/, templates/); a wheel carries them
inside the package as submitter/_data/<name> (see pyproject.toml), so both layouts are looked up.
Run from inside a submitter checkout, its own folders win over the installed copies: an edit to
systems/*.json there takes effect without reinstalling.
"""

from __future__ import annotations

from pathlib import Path

from submitter.errors import SubmitterError

_PACKAGE_DIR = Path(__file__).resolve().parent
_PROJECT_NAME = 'name = "submitter"'


def checkout_root(start: Path | None = None) -> Path | None:
    """The submitter checkout holding `start` (the current folder), if any: the nearest folder above it
    with submitter's own package and pyproject.toml."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        project = folder / "pyproject.toml"
        ours = (folder / "submitter" / "__init__.py").is_file() and project.is_file()
        if ours and _PROJECT_NAME in project.read_text(encoding="utf-8", errors="replace"):
            return folder
    return None


def shipped_dir(name: str) -> Path:
    checkout = checkout_root()
    local = [checkout / name] if checkout is not None else []
    for candidate in (*local, _PACKAGE_DIR / "_data" / name, _PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    raise SubmitterError(
        f"the {name}/ folder that ships with submitter is missing from {_PACKAGE_DIR}; "
        "reinstall the package (pip install .) from a complete checkout"
    )
