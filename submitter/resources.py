"""Where the files that ship with submitter are: descriptors, measurement templates, documents.

They sit at the top of the checkout (systems/, measurements/, templates/); a wheel carries them
inside the package as submitter/_data/<name> (see pyproject.toml), so both layouts are looked up.
"""

from __future__ import annotations

from pathlib import Path

from submitter.errors import SubmitterError

_PACKAGE_DIR = Path(__file__).resolve().parent


def shipped_dir(name: str) -> Path:
    for candidate in (_PACKAGE_DIR / "_data" / name, _PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    raise SubmitterError(
        f"the {name}/ folder that ships with submitter is missing from {_PACKAGE_DIR}; "
        "reinstall the package (pip install .) from a complete checkout"
    )
