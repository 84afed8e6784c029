"""The raw engine's Offline ceiling: vLLM's LLM.generate on a descriptor's prompts, with the exact engine
arguments and sampling the harness would use, timed around generate alone. Compare with
`submitter run --smoke --smoke-samples N` on the same prompts (bench/gpu_offline_compare.sh).

    python bench/raw_offline.py --system gpu_dummy --samples 13368 --out raw.json
    python bench/raw_offline.py --system gpu_dummy --samples 2000 --set max_num_seqs=1024 --out sweep.json

`--set NAME=VALUE` replaces one engine argument (VALUE is read as JSON when it parses, else a string);
the engine-argument sweep (bench/gpu_capacity.sh) is made of such runs.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from harness.benchmarks.llama3_1_8b.dataset import load_prompts
from harness.engines.vllm_common import engine_keyword_arguments, sampling_params, token_prompt, vllm_versions
from harness.engines.vllm_offline import HARNESS_ARGS
from harness.loadgen_settings import Smoke
from harness.runner import RunRequest, plan_run
from submitter.fileformats.run_mode import Mode
from submitter.rounds.models import Scenario
from submitter.systems.catalog import descriptor_path
from submitter.systems.validate import load_descriptor


def _changes(assignments: list[str]) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    for assignment in assignments:
        name, _, text = assignment.partition("=")
        try:
            changes[name] = json.loads(text)
        except json.JSONDecodeError:
            changes[name] = text
    return changes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--system", required=True)
    parser.add_argument("--samples", type=int, default=13368)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", dest="changes")
    options = parser.parse_args()

    # The harness's own plan supplies the engine spec, so both sides run the same arguments.
    plan = plan_run(
        RunRequest(
            system=load_descriptor(descriptor_path(options.system)),
            benchmark="llama3.1-8b",
            scenario=Scenario.OFFLINE,
            mode=Mode.PERFORMANCE,
            smoke=Smoke(samples=options.samples),
        )
    )
    engine = plan.engine.model_copy(update={"args": {**plan.engine.args, **_changes(options.changes)}})
    prompts = load_prompts(plan.dataset, limit=options.samples)
    from vllm import LLM

    began = time.monotonic()
    llm = LLM(**engine_keyword_arguments(engine, harness_args=HARNESS_ARGS))
    started = time.monotonic()
    outputs = llm.generate(
        [token_prompt(ids) for ids in prompts.token_ids],
        sampling_params(engine.generation, streaming=False),
        use_tqdm=False,
    )
    seconds = time.monotonic() - started
    tokens = sum(len(output.outputs[0].token_ids) for output in outputs)
    result = {
        "system": options.system,
        "samples": len(prompts),
        "output_tokens": tokens,
        "generate_s": round(seconds, 3),
        "tokens_per_second": round(tokens / seconds, 2),
        "engine_start_s": round(started - began, 3),
        "changes": options.changes,
        "engine_args": engine_keyword_arguments(engine, harness_args=HARNESS_ARGS),
        "versions": vllm_versions(),
    }
    options.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
