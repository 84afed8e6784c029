#!/usr/bin/env bash
# deepseek-r1 at full depth on a lent host of eight H200s (issue 39): all 61 layers in the published FP8
# 128 x 128 blocks as dummy weights, CUDA graphs on, tensor parallel over the eight GPUs
# (bench/systems/gpu_deepseek_8xh200_dummy.json; preflight estimates 78.3 GiB of weights and room for 32
# full-length sequences per GPU, and refuses four GPUs), synthetic data with the benchmark's length profile
# (all 4,388 records), round v6.1. One `submitter run-all` of the Offline scenario on one engine start:
# TEST06, then performance (one set of 4,388 samples while QPS stays under 6.6), then accuracy.
# Run from the checkout on the host after vLLM is in /tmp/site; it takes longer than one command may, so
# start it detached:
#   QPS=5 MODES="TEST06 performance accuracy" setsid nohup bash bench/gpu_deepseek_8xh200.sh > /tmp/gpu-deepseek.log 2>&1 &
# then `bash bench/lease_wait.sh /tmp/gpu-deepseek` in calls sent in one batch (its header says why), each bringing
# back what is gathered so far; the files to bring back are gathered in /tmp/gpu-deepseek/out.
set -uo pipefail
export RESULTS=/tmp/gpu-deepseek
source bench/gpu_host.sh
benchmark=deepseek-r1
system=gpu_deepseek_8xh200_dummy

qps=${QPS:-5}
descriptor_at_rate "$system" "$benchmark" Offline "$qps" "$RESULTS/systems"
export SUBMITTER_SYSTEMS_PATH=$RESULTS/systems
log "target_qps $qps"

timed submitter data dummy-model --benchmark "$benchmark" --precision published --out /tmp/dummy-deepseek-r1
[ -f /tmp/deepseek-r1-synthetic-full.pkl ] || timed submitter data synth --benchmark "$benchmark" --round v6.1 \
  --out /tmp/deepseek-r1-synthetic-full.pkl
modes=()
for mode in ${MODES:-TEST06 performance accuracy}; do modes+=(--mode "$mode"); done
run_and_gather "$system" "$benchmark" --scenario Offline "${modes[@]}"
keep_caches
log "done"
