#!/usr/bin/env bash
# Issue 7, what gpu_capacity.sh left open, on a 2-GPU host (nvidia-h200-x2) in one lease of ~25 minutes:
#   GPU 0: Offline on one GPU with the descriptor as it now is (the Server ratio's reference), then
#          tune-qps Server from 56.8 qps with its full-length confirmation;
#   GPU 1: the rest of the engine sweep (raw LLM.generate, 2000 prompts, with a "base" row of its own),
#          then a full-length Server run at 55.117 qps (3 % under the previous lease's best, 56.822),
#          side by side with the confirmation because one lease cannot hold two 12-minute runs in a row.
# Run from a copy of the checkout on the host, after vLLM is installed into /tmp/site:
#   setsid nohup bash bench/gpu_confirm.sh > /tmp/gpu-confirm.log 2>&1 &
# Everything lands in /tmp/gpu-confirm (progress.txt says what finished when).
set -uo pipefail
RESULTS=/tmp/gpu-confirm
# shellcheck source=bench/gpu_host.sh
source bench/gpu_host.sh

(
  export CUDA_VISIBLE_DEVICES=0
  timed submitter run --system gpu_dummy --scenario Offline --mode performance --smoke --smoke-samples 6000 \
    --runs-dir "$RESULTS/offline" --json > "$RESULTS/offline-x1.json"
  timed submitter tune-qps --system gpu_dummy --scenario Server --start 56.8 --step 1.03 --precision 0.03 \
    --trial-seconds 30 --runs-dir "$RESULTS/server" --json > "$RESULTS/tune-server.json"
) > "$RESULTS/gpu0.log" 2>&1 &

(
  export CUDA_VISIBLE_DEVICES=1
  sweep=(
    "base"
    "graphs1024 --set max_num_seqs=1024 --set max_cudagraph_capture_size=1024"
    "flashinfer --set attention_backend=FLASHINFER"
  )
  for entry in "${sweep[@]}"; do
    read -r name changes <<< "$entry"
    # shellcheck disable=SC2086  # the changes are separate --set arguments
    timed timeout 300 python3 bench/raw_offline.py --system gpu_dummy --samples 2000 $changes \
      --out "$RESULTS/sweep-$name.json"
  done
  descriptor_at_rate gpu_dummy llama3.1-8b Server 55.117 "$RESULTS/step-down-system"
  SUBMITTER_SYSTEMS_PATH="$RESULTS/step-down-system" timed submitter run --system gpu_dummy \
    --scenario Server --mode performance --runs-dir "$RESULTS/server-step-down" --json \
    > "$RESULTS/server-step-down.json"
) > "$RESULTS/gpu1.log" 2>&1 &

wait
python3 bench/summarize_runs.py "$RESULTS" > "$RESULTS/summary.txt" 2>&1
log "gpu confirm done"
