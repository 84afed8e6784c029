"""The modes a run is made in: what run.json, the run folders and the staged tree call them."""

from __future__ import annotations

from enum import StrEnum


class Mode(StrEnum):
    PERFORMANCE = "performance"
    ACCURACY = "accuracy"
    # Audit runs are named by their test; each has a plug-in in compliance/<TEST>/.
    TEST01 = "TEST01"
    TEST06 = "TEST06"
    TEST07 = "TEST07"
    TEST09 = "TEST09"

    @property
    def audit_test(self) -> str | None:
        """The compliance test an audit run is made for; None for performance and accuracy runs."""
        return None if self in (Mode.PERFORMANCE, Mode.ACCURACY) else self.value
