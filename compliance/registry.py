"""The audit tests as plug-ins: `compliance/<TEST>/` holds the official audit.config and a package whose
`verify_run` judges an audit run as the official verification script does.

Adding an audit is a folder here (`__init__.py` defining the names of `AuditTest`, and the official
audit.config: `<TEST>/audit.config` for every benchmark, or `<TEST>/<benchmark>/audit.config` where the
official one is per benchmark) and its rules in the round packs (`[compliance.<TEST>]`, and the
benchmarks' `compliance_tests`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Protocol, cast

from submitter.fileformats.audit_config import audit_verifier_settings

if TYPE_CHECKING:  # only named in annotations; the checker imports this module and needs no pydantic
    from submitter.evaluation.verdicts import ScoredResult

_FOLDER = Path(__file__).resolve().parent


@dataclass(frozen=True)
class AuditContext:
    """What a verifier knows of the run beyond its logs."""

    streaming: bool  # the scenario reports first tokens (Server, Interactive)
    eos_token_id: int  # the model's end-of-sequence token
    audit_config: Path  # what LoadGen ran the audit with; its `testNN_` keys are the verification's bounds
    # The benchmark's evaluation of an accuracy log, whose accuracy.txt audits that score accuracy read;
    # None when the model has no tokenizer to decode with.
    accuracy_report: Callable[[Path], ScoredResult] | None = None
    # The newest completed run of a mode ("accuracy", "performance") of the same system, benchmark and
    # scenario, for audits verified against them (REFERENCE_RUNS); None when there is none.
    reference_run: Callable[[str], Path | None] = lambda _mode: None
    # How the benchmark's responses are stored: numpy's name for one element (int32 token ids, int64 labels).
    response_dtype: str = "int32"


class AuditVerdict(Protocol):
    @property
    def passed(self) -> bool: ...

    @property
    def samples(self) -> int: ...

    def failures(self) -> list[str]:
        """What failed, one line per check, naming samples."""
        ...


class AuditTest(Protocol):
    """What `compliance.<TEST>` defines."""

    VERIFY_FILE: str  # the verification it writes into the run folder, as the official script names it
    SCORES_ACCURACY: bool  # verifying needs the benchmark's evaluator (and so the model's tokenizer)
    # The modes of the runs it is verified against, which must come first (TEST01: accuracy, performance).
    REFERENCE_RUNS: tuple[str, ...]
    # What staging copies besides VERIFY_FILE and the accuracy log: (run folder file, path under <TEST>/).
    STAGED_FILES: tuple[tuple[str, str], ...]

    def verify_run(self, run_dir: Path, context: AuditContext) -> AuditVerdict:
        """Verify an audit run's logs; writes VERIFY_FILE beside them."""
        ...


def available_audits() -> tuple[str, ...]:
    """The audit tests with a plug-in here."""
    return tuple(sorted(p.parent.name for p in _FOLDER.glob("TEST*/__init__.py")))


def audit_test(name: str) -> AuditTest:
    if name not in available_audits():
        raise ValueError(f"no audit plug-in {name!r}; known: {', '.join(available_audits())}")
    return cast(AuditTest, importlib.import_module(f"{__package__}.{name}"))


def audit_config_path(name: str, benchmark: str) -> Path | None:
    """The official audit.config of a test for a benchmark, passed to LoadGen by path; None when the test
    has none for the benchmark."""
    for candidate in (_FOLDER / name / benchmark / "audit.config", _FOLDER / name / "audit.config"):
        if candidate.is_file():
            return candidate
    return None


@dataclass(frozen=True)
class VerifierBounds:
    """The numbers an audit's verification judges a benchmark's run by: the `testNN_` keys of its official
    audit.config (TEST07's accuracy threshold, TEST09's output-length bounds)."""

    source: str  # where the official audit.config lies in mlcommons/inference (and here)
    values: Mapping[str, float]


@cache
def verifier_bounds(name: str, benchmark: str) -> VerifierBounds | None:
    """The bounds of a test's verification for a benchmark; None when the test has no audit.config for it.
    Keys whose value is not a number are left out (the official scripts warn and ignore them)."""
    path = audit_config_path(name, benchmark)
    if path is None:
        return None
    values = {}
    for key, text in audit_verifier_settings(path).items():
        try:
            values[key] = float(text)
        except ValueError:
            continue
    return VerifierBounds(path.relative_to(_FOLDER.parent).as_posix(), MappingProxyType(values))
