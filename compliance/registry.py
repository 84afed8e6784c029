"""The audit tests as plug-ins: `compliance/<TEST>/` holds the official audit.config and a package whose
`verify_run` judges an audit run as the official verification script does.

Adding an audit is a folder here (audit.config, `__init__.py` defining `VERIFY_FILE` and `verify_run`) and
its rules in the round packs (`[compliance.<TEST>]`, and the benchmarks' `compliance_tests`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, cast

_FOLDER = Path(__file__).resolve().parent


@dataclass(frozen=True)
class AuditContext:
    """What a verifier knows of the run beyond its logs."""

    streaming: bool  # the scenario reports first tokens (Server, Interactive)
    eos_token_id: int  # the model's end-of-sequence token


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

    def verify_run(self, run_dir: Path, context: AuditContext) -> AuditVerdict:
        """Verify an audit run's logs; writes VERIFY_FILE beside them."""
        ...


def available_audits() -> tuple[str, ...]:
    """The audit tests with a plug-in here."""
    return tuple(
        sorted(p.parent.name for p in _FOLDER.glob("*/audit.config") if (p.parent / "__init__.py").is_file())
    )


def audit_test(name: str) -> AuditTest:
    if name not in available_audits():
        raise ValueError(f"no audit plug-in {name!r}; known: {', '.join(available_audits())}")
    return cast(AuditTest, importlib.import_module(f"{__package__}.{name}"))


def audit_config_path(name: str) -> Path:
    """The official audit.config of a test, passed to LoadGen by path."""
    return _FOLDER / name / "audit.config"
