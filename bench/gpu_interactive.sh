#!/usr/bin/env bash
# Issue 7 item 3 with 120-s trials (the 30-s trials of gpu_capacity.sh proved optimistic for Server), on a
# 2-GPU host in the few minutes a lease had left: one trial per GPU, no full-length confirmation.
#   GPU 0: Interactive at 44.871 qps (the best 30-s rate); GPU 1: at 44 qps (the fallback if it fails).
# Run from a copy of the checkout on the host, after vLLM is installed into /tmp/site:
#   setsid nohup bash bench/gpu_interactive.sh > /tmp/gpu-interactive.log 2>&1 &
# Everything lands in /tmp/gpu-interactive ("gpuN done" in progress.txt ends each side).
set -uo pipefail
RESULTS=/tmp/gpu-interactive
# shellcheck source=bench/gpu_host.sh
source bench/gpu_host.sh

for gpu_and_rate in "0 44.871" "1 44"; do
  read -r gpu rate <<< "$gpu_and_rate"
  (
    export CUDA_VISIBLE_DEVICES=$gpu
    timed submitter tune-qps --system gpu_dummy --scenario Interactive --start "$rate" --trial-seconds 120 \
      --max-trials 1 --no-confirm --runs-dir "$RESULTS/interactive-gpu$gpu" --json \
      > "$RESULTS/tune-interactive-gpu$gpu.json"
    log "gpu$gpu done"
  ) > "$RESULTS/gpu$gpu.log" 2>&1 &
done
wait
