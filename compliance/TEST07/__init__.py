"""TEST07, accuracy in performance mode (gpt-oss-120b): the benchmark's evaluator scores a performance
run's logged answers against the audit's own dataset, which must reach the audit file's threshold."""

from compliance.TEST07.verify import VERIFY_FILE, verify_run

REFERENCE_RUNS: tuple[str, ...] = ()
STAGED_FILES: tuple[tuple[str, str], ...] = ()
SCORES_ACCURACY = True

__all__ = ["REFERENCE_RUNS", "SCORES_ACCURACY", "STAGED_FILES", "VERIFY_FILE", "verify_run"]
