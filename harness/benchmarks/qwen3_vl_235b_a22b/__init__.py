"""qwen3-vl-235b-a22b: product understanding on Shopify's catalogue: a photo, a title, a description and
candidate categories in, a JSON answer (category, brand, second-hand) out; LoadGen logs the answer's text.

Modules: `dataset` (the snapshot's Parquet shards and the reference's chat), `synthetic` (stand-in records
with photos, a demo model), `accuracy` (the reference's evaluation.py: hierarchical F1 into accuracy.txt),
`prompt_tokens` (each prompt's tokens in the engine, for preflight's memory plan).
"""

from harness.benchmarks.qwen3_vl_235b_a22b.accuracy import write_accuracy
from harness.benchmarks.qwen3_vl_235b_a22b.dataset import (
    DATASET_SUFFIX,
    RESPONSE_DTYPE,
    SAMPLE_MEDIA,
    load_samples,
    write_dataset,
)
from harness.benchmarks.qwen3_vl_235b_a22b.prompt_tokens import engine_prompt_lengths
from harness.benchmarks.qwen3_vl_235b_a22b.synthetic import synthesize_records, write_demo_model
from harness.benchmarks.scoring import ACCURACY_FILES

__all__ = [
    "ACCURACY_FILES",
    "DATASET_SUFFIX",
    "RESPONSE_DTYPE",
    "SAMPLE_MEDIA",
    "engine_prompt_lengths",
    "load_samples",
    "synthesize_records",
    "write_accuracy",
    "write_dataset",
    "write_demo_model",
]
