#!/usr/bin/env bash
# Issue 7, items 1 and 6 on a GPU host: the harness's Offline tokens/s against raw LLM.generate on the same
# 13368 prompts with the same engine arguments, then a Server TEST06 and a Server accuracy run (vllm-async)
# that must verify. Run from the checkout on the host, after vLLM is installed into /tmp/site:
#   setsid nohup bash bench/gpu_offline_compare.sh > /tmp/gpu-compare.log 2>&1 &
# Results: /tmp/gpu-compare/raw.json, /tmp/gpu-compare/harness.json and the runs beside them.
set -uo pipefail
export RESULTS=/tmp/gpu-compare
# The environment, the data and the helpers: `timed` reports on stderr, so harness.json stays JSON.
source bench/gpu_host.sh

# The raw engine first: it pays the host's first compile, which is outside both timings anyway.
timed python3 bench/raw_offline.py --system gpu_dummy --samples 13368 --out "$RESULTS/raw.json"
# The same 13368 prompts once through LoadGen (Offline, one pass, min_duration 0).
timed submitter run --system gpu_dummy --scenario Offline --mode performance --smoke \
  --smoke-samples 13368 --runs-dir "$RESULTS/runs" --json > "$RESULTS/harness.json"
timed submitter run --system gpu_dummy --scenario Server --mode TEST06 --smoke --runs-dir "$RESULTS/runs"
timed submitter run --system gpu_dummy --scenario Server --mode accuracy --smoke --runs-dir "$RESULTS/runs"
python3 bench/summarize_runs.py "$RESULTS/runs"
log "gpu compare done"
