"""TEST09, output length in performance mode (gpt-oss-120b): the mean length of a performance run's
answers must lie within the audit file's bounds around the reference's."""

from compliance.TEST09.verify import VERIFY_FILE, verify_run

REFERENCE_RUNS: tuple[str, ...] = ()
STAGED_FILES: tuple[tuple[str, str], ...] = ()
SCORES_ACCURACY = False

__all__ = ["REFERENCE_RUNS", "SCORES_ACCURACY", "STAGED_FILES", "VERIFY_FILE", "verify_run"]
