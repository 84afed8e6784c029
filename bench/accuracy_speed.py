"""Time the accuracy evaluation of 13368 answers: all cores against one process (same numbers required).

    python bench/accuracy_speed.py [--samples 13368] [--workers N]

Builds a word-level tokenizer and answers of CNN/DailyMail length (about 611 characters, 128 tokens)
in a temporary folder, then runs `harness.benchmarks.llama3_1_8b.accuracy.evaluate` both ways.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from array import array
from pathlib import Path

from tokenizers import Tokenizer, models, pre_tokenizers

from harness.benchmarks.llama3_1_8b.accuracy import evaluate
from submitter.evaluation.detokenize import load_detokenizer

TEXT = (
    "the police said a man was arrested after the crash on the highway . officials expect the new law to "
    "pass next week , and the company reported higher profits . the team won its third match in a row !"
)
WORDS = TEXT.split(" ")


def build(folder: Path, samples: int) -> tuple[Path, Path, Path]:
    vocabulary = {word: i for i, word in enumerate(dict.fromkeys(WORDS))}
    tokenizer = Tokenizer(models.WordLevel(vocabulary, unk_token="the"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer.save(str(folder / "tokenizer.json"))
    draw = random.Random(0)
    references, records = [], []
    for index in range(samples):
        words = [draw.choice(WORDS) for _ in range(128)]
        references.append(" ".join(words))
        answer = [w if draw.random() > 0.4 else draw.choice(WORDS) for w in words]
        ids = array("i", [vocabulary[w] for w in answer])
        records.append(
            {"seq_id": index, "qsl_idx": index, "data": ids.tobytes().hex().upper(), "token_count": 128}
        )
    dataset, log = folder / "dataset.json", folder / "mlperf_log_accuracy.json"
    dataset.write_text(json.dumps([{"tok_input": [128000], "output": text} for text in references]))
    log.write_text(json.dumps(records))
    return log, dataset, folder


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=13368)
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        log, dataset, model = build(Path(scratch), args.samples)
        timings = {}
        results = {}
        for workers in (1, args.workers):
            began = time.perf_counter()
            results[workers] = evaluate(log, dataset, load_detokenizer(model), workers=workers)
            timings[workers] = time.perf_counter() - began
    assert results[1] == results[args.workers], "parallel and single-process numbers differ"
    print(f"{args.samples} samples, {os.cpu_count()} cores: identical results {results[1].printed()}")
    for workers, seconds in timings.items():
        print(f"  {workers} worker process(es): {seconds:.1f} s")


if __name__ == "__main__":
    main()
