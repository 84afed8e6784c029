"""A markdown table of the runs under a folder, from their run.json files. "steady samples/s" is the rate
over the middle half of a run's answers (run.json's harness.steady), which replica scaling compares.

python bench/summarize_runs.py RUNS_DIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def row(record: dict) -> str:
    outcome = record["loadgen"]["outcome"] or {}
    figures = outcome.get("figures", {})
    harness = record.get("harness") or {}

    def ms(key: str) -> str:
        return f"{figures[key] / 1e6:.1f}" if key in figures else ""

    metric = outcome.get("metric_value")
    steady = harness.get("steady") or {}
    cells = [
        record["system"],
        record["scenario"],
        record["mode"],
        record["engine"]["backend"],
        f"{record['loadgen']['user_conf'].get('target_qps', '')}",
        "yes" if record["valid"] else "NO: " + "; ".join(record["problems"])[:120],
        outcome.get("validity") or "",
        f"{metric:,.1f}" if metric is not None else "",
        ms("p99_ttft_ns"),
        ms("p99_tpot_ns"),
        str(harness.get("samples_completed", "")),
        f"{steady['samples_per_second']:,.3f}" if steady else "",
        str(harness.get("engine_start_s", "")),
        str(harness.get("loadgen_test_s", "")),
    ]
    return "| " + " | ".join(cells) + " |"


def main(folder: str) -> None:
    records = [json.loads(path.read_text()) for path in sorted(Path(folder).rglob("run.json"))]
    print(
        "| system | scenario | mode | backend | target_qps | valid | LoadGen | tokens/s | p99 TTFT ms "
        "| p99 TPOT ms | samples | steady samples/s | engine start s | LoadGen test s |"
    )
    print("|" + "---|" * 14)
    for record in sorted(records, key=lambda r: r["started_utc"]):
        print(row(record))
    if records:
        first = records[0]
        gpus = ", ".join(gpu["name"] for gpu in first["gpus"]) or "no GPU"
        versions = ", ".join(f"{k} {v}" for k, v in sorted(first["versions"].items()))
        print(f"\n{gpus}; {versions}")
    for record in records:
        if line := memory_line(record):
            print(f"\n{line}")
            break


def memory_line(record: dict) -> str | None:
    """Preflight's plan for one GPU beside what vLLM's log says it found (run.json's topology), GiB."""
    topology = record.get("topology") or {}
    plan, found = topology.get("memory_estimate"), topology.get("engine_memory")
    if not plan or not found:
        return None
    overhead = sum(found.get(key) or 0 for key in ("peak_activation_gib", "non_torch_gib", "cuda_graphs_gib"))
    tokens = found.get("kv_cache_tokens")
    return (
        f"per GPU, plan / vLLM: weights {plan['weights_gib']:.2f} / {found.get('weights_gib')}, "
        f"profiling pass and CUDA graphs {plan['reserve_gib']:.2f} / {overhead:.2f}, "
        f"KV cache {plan['kv_cache_gib']:.2f} / {found.get('kv_cache_gib')}"
        + (f" ({tokens:,} tokens an engine)" if tokens else "")
    )


if __name__ == "__main__":
    main(sys.argv[1])
