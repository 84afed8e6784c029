#!/usr/bin/env bash
# Full-depth llama2-70b as two tensor-parallel replicas (TP=2 x 2, the Dell R760xa L40S system's shape) on a
# lent host with 4 GPUs: a dummy-weight checkpoint in the precision Red Hat published (AutoFP8, static
# activations), synthetic data with the OpenOrca length profile (all 24,576 records), and one `submitter
# run-all` of the Offline scenario's TEST06 and full-length performance run on one engine start.
# Descriptor: bench/systems/gpu_multi_dummy.json (target_qps set here by GPU kind, so that LoadGen's
# sample count lasts past its 600-s minimum without running much longer).
# Run from the checkout on the host after vLLM is in /tmp/site; it takes 15-20 minutes, so start it detached:
#   setsid nohup bash bench/gpu_topology.sh > /tmp/gpu-topology.log 2>&1 &
# and poll /tmp/gpu-topology/progress.txt; the files to bring back are gathered in /tmp/gpu-topology/out.
set -uo pipefail
export RESULTS=/tmp/gpu-topology
source bench/gpu_host.sh
benchmark=llama2-70b-99.9

# Offline issues max(24,576, 1.1 x 600 s x target_qps) samples at once: a rate near the engine's keeps
# the run just over LoadGen's minimum duration (VALID) without running far past it.
case $(head -1 "$RESULTS/gpus.txt") in
  *H200*) qps=42 ;;
  *) qps=35 ;;
esac
mkdir -p "$RESULTS/systems"
python3 - "$qps" "$RESULTS/systems/gpu_multi_dummy.json" <<'EOF'
import json, sys
descriptor = json.load(open("bench/systems/gpu_multi_dummy.json"))
descriptor["benchmarks"]["llama2-70b-99.9"]["scenarios"]["Offline"]["user_conf"]["target_qps"] = float(sys.argv[1])
open(sys.argv[2], "w").write(json.dumps(descriptor, indent=2))
EOF
export SUBMITTER_SYSTEMS_PATH=$RESULTS/systems
log "target_qps $qps"

timed submitter data dummy-model --benchmark "$benchmark" --precision published --out /tmp/dummy-llama2-70b
[ -f /tmp/openorca-synthetic-full.pkl ] || timed submitter data synth --benchmark "$benchmark" --out /tmp/openorca-synthetic-full.pkl
timed submitter run-all --system gpu_multi_dummy --benchmark "$benchmark" --scenario Offline \
  --mode TEST06 --mode performance --runs-dir "$RESULTS/runs" --json > "$RESULTS/run-all.json" 2> "$RESULTS/run-all.log"
python3 bench/summarize_runs.py "$RESULTS/runs" > "$RESULTS/summary.md"

# What vLLM said of memory, beside preflight's estimate (run-all's first lines).
grep -E "Available KV cache memory|GPU KV cache size|Model loading took|per GPU|replica\(s\)" "$RESULTS/run-all.log" \
  > "$RESULTS/memory.txt"
mkdir -p "$RESULTS/out"
cp "$RESULTS/gpus.txt" "$RESULTS/summary.md" "$RESULTS/memory.txt" "$RESULTS/progress.txt" "$RESULTS/run-all.json" "$RESULTS/out/"
cp "$RESULTS/runs/ledger.jsonl" "$RESULTS/out/ledger.jsonl"
for run in "$RESULTS"/runs/gpu_multi_dummy/*/*/*/*/; do
  mode=$(basename "$(dirname "$run")")
  cp "$run/run.json" "$RESULTS/out/$mode.run.json"
  cp "$run/mlperf_log_summary.txt" "$RESULTS/out/$mode.mlperf_log_summary.txt" 2>/dev/null
done
tail -c 2000000 "$RESULTS/run-all.log" > "$RESULTS/out/run-all.log"
log "done"
