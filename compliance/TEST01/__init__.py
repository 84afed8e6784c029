"""TEST01, accuracy-log sampling in performance mode: the answers a performance run logs must be the
accuracy run's answers to the same samples, and its performance within 10 % of the performance run's."""

from compliance.TEST01.verify import PERFORMANCE_FILE, VERIFY_FILE, verify_run

REFERENCE_RUNS: tuple[str, ...] = ("accuracy", "performance")
SCORES_ACCURACY = False
# As run_verification.py lays out its output folder (and, where the answers differed, the accuracy of both).
STAGED_FILES: tuple[tuple[str, str], ...] = (
    (PERFORMANCE_FILE, PERFORMANCE_FILE),
    ("mlperf_log_summary.txt", "performance/run_1/mlperf_log_summary.txt"),
    ("mlperf_log_detail.txt", "performance/run_1/mlperf_log_detail.txt"),
    ("accuracy.txt", "accuracy/accuracy.txt"),
    ("baseline_accuracy.txt", "accuracy/baseline_accuracy.txt"),
    ("compliance_accuracy.txt", "accuracy/compliance_accuracy.txt"),
)

__all__ = ["REFERENCE_RUNS", "SCORES_ACCURACY", "STAGED_FILES", "VERIFY_FILE", "verify_run"]
