"""whisper: speech to text on LibriSpeech dev-clean and dev-other, the audio repackaged into clips of at
most 30 s, transcribed by whisper-large-v3; LoadGen logs each answer's characters as int64 labels.

Modules: `dataset` (the reference's manifest and WAV files), `synthetic` (stand-in clips and a demo model),
`accuracy` (the reference's accuracy_eval.py: word accuracy into accuracy.txt).
"""

from harness.benchmarks.scoring import ACCURACY_FILES
from harness.benchmarks.whisper.accuracy import write_accuracy
from harness.benchmarks.whisper.dataset import (
    DATASET_SUFFIX,
    RESPONSE_DTYPE,
    SAMPLE_MEDIA,
    load_samples,
    write_dataset,
)
from harness.benchmarks.whisper.synthetic import synthesize_records, write_demo_model

__all__ = [
    "ACCURACY_FILES",
    "DATASET_SUFFIX",
    "RESPONSE_DTYPE",
    "SAMPLE_MEDIA",
    "load_samples",
    "synthesize_records",
    "write_accuracy",
    "write_dataset",
    "write_demo_model",
]
