"""llama2-70b-99 and llama2-70b-99.9: answers to OpenOrca questions (GPT-4 responses as references),
scored with ROUGE-1/2/L and tokens per sample.

Modules: `dataset` (the reference's pickled DataFrame and its `tok_input`), `synthetic` (stand-in
records in that format with the real lengths, and a demo model), `accuracy` (the reference's evaluation
into accuracy.txt).
"""

from harness.benchmarks.llama2_70b.accuracy import write_accuracy
from harness.benchmarks.llama2_70b.dataset import DATASET_SUFFIX, load_samples, write_dataset
from harness.benchmarks.llama2_70b.synthetic import synthesize_records, write_demo_model
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
