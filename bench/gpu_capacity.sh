#!/usr/bin/env bash
# Issue 7, items 2-5, on a 2-GPU host (nvidia-h200-x2) in one short lease, one GPU per track:
#   GPU 1: tune-qps Server, then tune-qps Interactive (30 s trials; no full-length confirmation);
#   GPU 0: Offline on one GPU (the scale-out's and the Server ratio's reference), then the
#          engine-argument sweep (raw LLM.generate, 2000 prompts per setting) while GPU 1 is busy;
#   then both: the same Offline pass through two replicas (gpu_dummy_x2), for the scale-out.
# Run from a copy of the checkout on the host, after vLLM is installed into /tmp/site:
#   setsid nohup bash bench/gpu_capacity.sh > /tmp/gpu-capacity.log 2>&1 &
# Everything lands in /tmp/gpu-capacity (progress.txt says what finished when).
set -uo pipefail
RESULTS=/tmp/gpu-capacity
# shellcheck source=bench/gpu_host.sh
source bench/gpu_host.sh

# One pass over the first 6000 prompts (Offline, min_duration 0): the same work on one GPU and on two.
one_pass=(--scenario Offline --mode performance --smoke --smoke-samples 6000)

(
  export CUDA_VISIBLE_DEVICES=1
  timed submitter tune-qps --system gpu_dummy --scenario Server --start 52 --step 1.03 --precision 0.03 \
    --trial-seconds 30 --no-confirm --runs-dir "$RESULTS/server" --json > "$RESULTS/tune-server.json"
  timed submitter tune-qps --system gpu_dummy --scenario Interactive --start 44 --step 1.04 \
    --precision 0.04 --trial-seconds 30 --no-confirm --runs-dir "$RESULTS/interactive" --json \
    > "$RESULTS/tune-interactive.json"
  touch "$RESULTS/gpu1.done"
) > "$RESULTS/gpu1.log" 2>&1 &

(
  export CUDA_VISIBLE_DEVICES=0
  timed submitter run --system gpu_dummy "${one_pass[@]}" --runs-dir "$RESULTS/x1" --json \
    > "$RESULTS/offline-x1.json"
  # The sweep, most promising first, for as long as GPU 1 is busy; "base" is the descriptor's setting.
  sweep=(
    "base"
    "seqs1024 --set max_num_seqs=1024"
    "sync --set async_scheduling=false"
    "tokens32k --set max_num_batched_tokens=32768"
    "flashinfer --set attention_backend=FLASHINFER"
  )
  for entry in "${sweep[@]}"; do
    read -r name changes <<< "$entry"
    if [ -f "$RESULTS/gpu1.done" ]; then log "sweep stopped before $name: GPU 1 is done"; break; fi
    # shellcheck disable=SC2086  # the changes are separate --set arguments
    timed python3 bench/raw_offline.py --system gpu_dummy --samples 2000 $changes \
      --out "$RESULTS/sweep-$name.json"
  done
) > "$RESULTS/gpu0.log" 2>&1 &

wait
timed submitter run --system gpu_dummy_x2 "${one_pass[@]}" --runs-dir "$RESULTS/x2" --json \
  > "$RESULTS/offline-x2.json" 2> "$RESULTS/x2.log"
python3 bench/summarize_runs.py "$RESULTS" > "$RESULTS/summary.txt" 2>&1
log "gpu capacity done"
