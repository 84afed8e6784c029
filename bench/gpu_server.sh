#!/usr/bin/env bash
# Issue 7 item 2 on a 2-GPU host (nvidia-h200-x2), in one lease of ~25 minutes: a Server rate that holds at
# full length, beside the Offline reference measured in the same lease.
#   GPU 0: tune-qps from 53.3 qps (the Server rate then), two 120-s trials (53.3, 54.366), the best of
#          them then confirmed at full length (~12.5 min); a failed confirmation's step-down does not fit.
#   GPU 1: 53.3 qps at full length (a descriptor copy), the fallback if GPU 0's confirmation fails;
#          then Offline on one GPU (6000 prompts, as in gpu_confirm.sh), the ratio's denominator.
# Run from a copy of the checkout on the host, after vLLM is installed into /tmp/site:
#   setsid nohup bash bench/gpu_server.sh > /tmp/gpu-server.log 2>&1 &
# Everything lands in /tmp/gpu-server (progress.txt says what finished when; "gpuN done" ends each side).
set -uo pipefail
RESULTS=/tmp/gpu-server
# shellcheck source=bench/gpu_host.sh
source bench/gpu_host.sh

(
  export CUDA_VISIBLE_DEVICES=0
  timed submitter tune-qps --system gpu_dummy --scenario Server --start 53.3 --step 1.02 --precision 0.02 \
    --trial-seconds 120 --max-trials 2 --runs-dir "$RESULTS/server-tune" --json > "$RESULTS/tune-server.json"
  log "gpu0 done"
) > "$RESULTS/gpu0.log" 2>&1 &

(
  export CUDA_VISIBLE_DEVICES=1
  descriptor_at_rate gpu_dummy llama3.1-8b Server 53.3 "$RESULTS/fallback-system"
  SUBMITTER_SYSTEMS_PATH="$RESULTS/fallback-system" timed submitter run --system gpu_dummy --scenario Server \
    --mode performance --runs-dir "$RESULTS/server" --json > "$RESULTS/server.json"
  timed submitter run --system gpu_dummy --scenario Offline --mode performance --smoke --smoke-samples 6000 \
    --runs-dir "$RESULTS/offline" --json > "$RESULTS/offline-x1.json"
  log "gpu1 done"
) > "$RESULTS/gpu1.log" 2>&1 &

wait
