"""mixtral-8x7b: 15,000 samples from OpenOrca (ROUGE), GSM8K (the answer's number) and MBXP (generated
code run against its tests in six languages).

Modules: `dataset` (the reference's pickled DataFrame), `gsm8k` and `mbxp` (their scoring), `synthetic`
(stand-in records and a demo model), `accuracy` (the reference's evaluation into accuracy.txt).
"""

from harness.benchmarks.mixtral_8x7b.accuracy import write_accuracy
from harness.benchmarks.mixtral_8x7b.dataset import DATASET_SUFFIX, load_samples, write_dataset
from harness.benchmarks.mixtral_8x7b.synthetic import synthesize_records, write_demo_model
from harness.benchmarks.scoring import ACCURACY_FILES

__all__ = [
    "ACCURACY_FILES",
    "DATASET_SUFFIX",
    "load_samples",
    "synthesize_records",
    "write_accuracy",
    "write_dataset",
    "write_demo_model",
]
