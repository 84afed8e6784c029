#!/usr/bin/env bash
# Full-depth llama2-70b as two tensor-parallel replicas (TP=2 x 2, the Dell R760xa L40S system's shape) on a
# lent host with 4 GPUs: a dummy-weight checkpoint in the precision Red Hat published (AutoFP8, static
# activations; run in bf16, since vLLM 0.26.0's fused all-reduce + RMSNorm + FP8 kernel refuses fp16 under
# tensor parallelism), synthetic data with the OpenOrca length profile (all 24,576 records), and one
# `submitter run-all` of the Offline scenario's TEST06 and full-length performance run on one engine start.
# Descriptor: bench/systems/gpu_multi_dummy.json. Offline issues max(24,576, 1.1 x 600 s x target_qps)
# samples rounded up to whole sets of 24,576 (equal-issue mode): QPS (default 37) at most 37.2 keeps one
# set, which is VALID where the engine takes 600 s or more for it (up to about 41 samples/s; 4 H100s are
# expected below that), while more than 37.2 issues two sets (49,152: about 20 minutes at 40/s, more than
# a 30-minute lease has left after staging and the engine's start).
# Run from the checkout on the host after vLLM is in /tmp/site; it takes 15-20 minutes, so start it detached:
#   QPS=37 setsid nohup bash bench/gpu_topology.sh > /tmp/gpu-topology.log 2>&1 &
# and poll /tmp/gpu-topology/progress.txt; the files to bring back are gathered in /tmp/gpu-topology/out.
set -uo pipefail
export RESULTS=/tmp/gpu-topology
source bench/gpu_host.sh
benchmark=llama2-70b-99.9

qps=${QPS:-37}
descriptor_at_rate gpu_multi_dummy "$benchmark" Offline "$qps" "$RESULTS/systems"
export SUBMITTER_SYSTEMS_PATH=$RESULTS/systems
log "target_qps $qps"

timed submitter data dummy-model --benchmark "$benchmark" --precision published --out /tmp/dummy-llama2-70b
[ -f /tmp/openorca-synthetic-full.pkl ] || timed submitter data synth --benchmark "$benchmark" --out /tmp/openorca-synthetic-full.pkl
plan=(run-all --system gpu_multi_dummy --benchmark "$benchmark" --scenario Offline --mode TEST06 --mode performance
  --runs-dir "$RESULTS/runs")
submitter "${plan[@]}" --dry-run >> "$RESULTS/progress.txt" 2>&1  # the samples and minutes each run takes
timed submitter "${plan[@]}" --json > "$RESULTS/run-all.json" 2> "$RESULTS/run-all.log"
python3 bench/summarize_runs.py "$RESULTS/runs" > "$RESULTS/summary.md"

# What vLLM said of memory, beside preflight's estimate (run-all's first lines).
grep -E "Available KV cache memory|GPU KV cache size|Model loading took|per GPU|replica\(s\)" "$RESULTS/run-all.log" \
  > "$RESULTS/memory.txt"
mkdir -p "$RESULTS/out"
cp "$RESULTS/gpus.txt" "$RESULTS/summary.md" "$RESULTS/memory.txt" "$RESULTS/progress.txt" "$RESULTS/run-all.json" "$RESULTS/out/"
cp "$RESULTS/runs/ledger.jsonl" "$RESULTS/out/ledger.jsonl"
for run in "$RESULTS"/runs/gpu_multi_dummy/*/*/*/*/; do
  keep_run "$run" "$(basename "$(dirname "$run")")"  # named by its mode
done
tail -c 2000000 "$RESULTS/run-all.log" > "$RESULTS/out/run-all.log"
log "done"
