"""llama3.1-405b: long-context summarisation, needle-in-a-haystack and question answering, each sample
scored by its own metric (`metric` column): ROUGE-L, or exact match for the needles and the answers.

Modules: `dataset` (the reference's pickled DataFrame), `metrics` (the three per-sample metrics),
`synthetic` (stand-in records and a demo model), `accuracy` (the reference's evaluation into accuracy.txt).
"""

from harness.benchmarks.llama3_1_405b.accuracy import write_accuracy
from harness.benchmarks.llama3_1_405b.dataset import DATASET_SUFFIX, load_samples, write_dataset
from harness.benchmarks.llama3_1_405b.synthetic import synthesize_records, write_demo_model
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
