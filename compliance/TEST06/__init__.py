"""TEST06, the LLM output audit: first-token, EOS and sample-length checks of an audit run's log."""

from compliance.TEST06.verify import VERIFY_FILE, verify_run

REFERENCE_RUNS: tuple[str, ...] = ()
STAGED_FILES: tuple[tuple[str, str], ...] = ()
SCORES_ACCURACY = False

__all__ = ["REFERENCE_RUNS", "SCORES_ACCURACY", "STAGED_FILES", "VERIFY_FILE", "verify_run"]
