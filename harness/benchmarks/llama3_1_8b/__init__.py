"""llama3.1-8b and llama3.1-8b-edge: summaries of CNN/DailyMail articles, scored with ROUGE.

Modules: `dataset` (the JSON records and their `tok_input`), `synthetic` (stand-in records and a demo
model), `accuracy` (the reference's ROUGE evaluation into accuracy.txt).
"""

from harness.benchmarks.llama3_1_8b.accuracy import write_accuracy
from harness.benchmarks.llama3_1_8b.dataset import DATASET_SUFFIX, write_dataset
from harness.benchmarks.llama3_1_8b.dataset import load_prompts as load_samples
from harness.benchmarks.llama3_1_8b.synthetic import synthesize_records, write_demo_model
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
