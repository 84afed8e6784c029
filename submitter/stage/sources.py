"""The harness sources at the commit the runs used, written from git (not from the working tree).

Only what a reviewer needs to see how the results were made goes in; tests, benchmark scripts and
dot files stay out (the tree's hygiene rules forbid dot files anyway).
"""

from __future__ import annotations

from pathlib import Path

from submitter.errors import SubmitterError

_PROJECT_DIR = Path(__file__).resolve().parents[2]
SOURCE_PATHS = frozenset(
    {
        "harness",
        "compliance",
        "submitter",
        "systems",
        "measurements",
        "templates",
        "pyproject.toml",
        "README.md",
    }
)


def write_sources(commit: str, destination: Path) -> int:
    """Write the project's files at `commit` under `destination`; returns how many were written."""
    import git  # here, not at the top: GPU hosts run the harness without gitpython

    try:
        repository = git.Repo(_PROJECT_DIR, search_parent_directories=True)
        tree = repository.commit(commit).tree
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise SubmitterError(
            f"{_PROJECT_DIR} is not a git checkout, so the sources of commit {commit} cannot be written; "
            "stage from the checkout the runs were made with"
        ) from None
    except (ValueError, git.BadName):
        raise SubmitterError(
            f"commit {commit} (from the runs' run.json) is not in the repository at {_PROJECT_DIR}; "
            "fetch it (git fetch) or stage from the checkout the runs were made with"
        ) from None
    written = 0
    for item in tree.traverse():
        parts = Path(item.path).parts
        if item.type != "blob" or parts[0] not in SOURCE_PATHS or any(part.startswith(".") for part in parts):
            continue
        target = destination / item.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(item.data_stream.read())
        written += 1
    return written
