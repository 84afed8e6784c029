"""Repository hygiene: what the old official checker rejects anywhere in closed and network trees.

Names with a leading dot or spaces, __pycache__, symlinks, empty folders, oversized files, and files
lying at the top of the tree or of a division (shared/spec/checker.md §13). The old checker applies
them to every division. They are about form, not about a run, so `check` warns (`check --strict` fails);
`package` holds them as errors, since MLCommons' upload takes none of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from submitter.check.context import TREE_RULES, TreeContext
from submitter.rule_registry import Problem, Severity
from submitter.workspace import ARCHIVE_COMPANIONS, REVIEW_DOCUMENTS, STAGING_MANIFEST, STAGING_SUFFIX

rule = TREE_RULES.rule
BYTES_PER_MB = 1024 * 1024
_UNCLEAN_NAME = re.compile(r"^\.|\s")


# Each rule filters every path of the tree first and sorts only what it reports: code folders hold thousands.


@rule("HYG-NAME", Severity.WARNING, "no file or folder name starts with a dot or holds whitespace")
def clean_names(tree: TreeContext) -> Iterator[Problem]:
    index, unclean = tree.index, _UNCLEAN_NAME.search
    found = {f"{folder}/{name}" for folder, names in index.listing.items() for name in names if unclean(name)}
    found.update(path for path in (*index.dirs, *index.symlinks) if unclean(path.rpartition("/")[2]))
    for path in sorted(found):
        yield Problem(
            path=path,
            message="has a leading dot or whitespace in its name",
            fix="remove it or rename it (letters, digits, '_', '-', '.')",
        )


@rule("HYG-PYCACHE", Severity.WARNING, "no __pycache__ folders")
def no_pycache(tree: TreeContext) -> Iterator[Problem]:
    for path in sorted(path for path in tree.index.dirs if path.endswith("/__pycache__")):
        yield Problem(path=path, message="is a Python cache folder", fix=f"rm -r {path}")


@rule("HYG-SYMLINK", Severity.WARNING, "no symbolic links (they do not survive the upload)")
def no_symlinks(tree: TreeContext) -> Iterator[Problem]:
    for path, state in sorted(tree.index.symlinks.items()):
        yield Problem(path=path, message=f"is {state}", fix="replace it with a copy of what it points to")


@rule("HYG-EMPTY-DIR", Severity.WARNING, "no empty folders")
def no_empty_dirs(tree: TreeContext) -> Iterator[Problem]:
    for path in sorted(tree.index.empty_dirs):
        yield Problem(path=path, message="is an empty folder", fix=f"remove it (rmdir {path})")


@rule("HYG-FILE-SIZE", Severity.WARNING, "no file is larger than the round's limit")
def file_sizes(tree: TreeContext) -> Iterator[Problem]:
    limit_mb = tree.rules.tree.max_file_mb
    limit = limit_mb * BYTES_PER_MB
    for path, size in sorted(item for item in tree.index.files.items() if item[1] > limit):
        yield Problem(
            path=path,
            message=f"is {size / BYTES_PER_MB:.1f} MB, over the {limit_mb} MB limit",
            fix="truncate logs (truncate_accuracy_log.py) or leave the file out",
        )


@rule("HYG-DIVISION-FILE", Severity.WARNING, "a division folder holds only submitter folders")
def no_files_in_division(tree: TreeContext) -> Iterator[Problem]:
    for path in sorted(path for path in tree.index.files if path.count("/") == 1):
        yield Problem(
            path=path,
            message="lies directly in the division folder",
            fix="move it into a submitter folder or remove it",
        )


@rule("HYG-WORK-FILE", Severity.WARNING, "no review, staging folder or archive of submitter's in the tree")
def no_work_files(tree: TreeContext) -> Iterator[Problem]:
    index = tree.index
    for folder, names in sorted(index.listing.items()):
        if all(document in names for document in REVIEW_DOCUMENTS):
            yield Problem(
                path=folder,
                message=f"holds a review written by `submitter report` ({', '.join(REVIEW_DOCUMENTS)})",
                fix="remove it; `submitter report` writes reviews outside the tree (work/review)",
            )
        # NAME.tar.gz with a companion: a lone .manifest.json may well be the submitter's own file.
        archives = {_archive_of(name) for name in names} & {
            name[:-7] for name in names if name.endswith(".tar.gz")
        }
        for name in names:
            tarball = name.endswith(".tar.gz") and name[:-7] in archives
            if tarball or _archive_of(name) in archives:
                yield Problem(
                    path=f"{folder}/{name}",
                    message="belongs to an archive written by `submitter package`",
                    fix="remove it; `submitter package` writes archives outside the tree (work/dist)",
                )
    for folder in sorted(index.dirs):
        name = folder.rpartition("/")[2]
        staged = name.endswith(STAGING_SUFFIX) and STAGING_MANIFEST in index.listing.get(folder, ())
        if staged or (name.startswith(".") and ".staging-" in name):
            yield Problem(
                path=folder,
                message="is a staging folder of `submitter stage` (full accuracy logs, manifest)",
                fix="keep it beside the tree, not inside; remove it from the tree",
            )


def _archive_of(name: str) -> str | None:
    """NAME for NAME.tar.gz.sha256 and NAME.manifest.json, the companions `package` writes."""
    suffix = next((suffix for suffix in ARCHIVE_COMPANIONS if name.endswith(suffix)), None)
    return None if suffix is None else name.removesuffix(suffix)


@rule("HYG-ROOT-FILE", Severity.WARNING, "the tree's top holds only division folders and documents")
def no_root_files(tree: TreeContext) -> Iterator[Problem]:
    allowed = tree.rules.files.root_file_suffixes
    for name in tree.index.root_files:
        if not name.endswith(allowed):
            yield Problem(
                path=name,
                message="lies at the top of the tree, beside the division folders",
                fix=f"remove it; only {', '.join(allowed)} documents may sit there",
            )
