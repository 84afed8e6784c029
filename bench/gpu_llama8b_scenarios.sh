#!/usr/bin/env bash
# Issue 37's lease: llama3.1-8b in its scenarios at full length, one GPU each, with the stand-in in the
# precision Red Hat submitted (RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8: FP8 weights and activations, per tensor,
# both static; harness/published_precision.json), which gpu_host.sh builds for bench/systems/gpu_dummy.json.
# On a host with two GPUs, Offline runs on GPU 0 while Server runs on GPU 1, so that Server's ratio to Offline
# comes from one lease; INTERACTIVE=1 runs Interactive on GPU 1 after Server. On one GPU the scenarios run one
# after the other.
#   Offline at OFFLINE_QPS (default 66): 1.1 x 600 x 66 = 43,560 samples, which equal-issue mode rounds up to
#     53,472 (four sets of 13,368), VALID up to 89 samples/s, about 14 minutes. At most 60.7 asks three sets
#     (40,104), VALID up to 66.8: an H100 did 55.3 with the stand-in quantised at load, and the raw engine 1.07
#     times as much with this one (bench/RESULTS.md).
#   Server from SERVER_QPS (default 61), Interactive from INTERACTIVE_QPS (default 44): `submitter tune-qps` on
#     one engine, two 120-s trials (x 1.02 while VALID; TRIALS=1 for one) and the best VALID rate at full length,
#     about 17 minutes. On one H200 the scenarios take about 30 minutes one after the other, the most a lent
#     machine is held: there, OFFLINE_QPS=60 (three sets) and TRIALS=1 from a rate known to hold.
#   RAW=1 first times the raw engine on 1,000 prompts with this stand-in and with one quantised at load (dynamic
#     activation scales), one after the other on GPU 0: the static scales' gain on this GPU.
# Offline's plan (samples, minutes, memory) goes into offline/progress.txt before it starts. Run from the
# checkout on the host after vLLM is in /tmp/site, detached:
#   setsid nohup bash bench/gpu_llama8b_scenarios.sh > /tmp/gpu-llama8b.log 2>&1 &
# then `bash bench/lease_wait.sh /tmp/gpu-llama8b` in calls sent in one batch (its header says why); the files to
# bring back are in /tmp/gpu-llama8b/{offline,server,interactive}/out (and raw-*.json), which it packs.
set -uo pipefail
export RESULTS=/tmp/gpu-llama8b
source bench/gpu_host.sh

if [ "${RAW:-0}" = 1 ]; then
  timed submitter data dummy-model --out /tmp/dummy-llama3.1-8b-16bit
  python3 - "$RESULTS/raw-systems" <<'PY'
import json, pathlib, sys
folder = pathlib.Path(sys.argv[1])
folder.mkdir(parents=True, exist_ok=True)
descriptor = json.load(open("bench/systems/gpu_dummy.json"))
descriptor["id"] = "gpu_dummy_at_load"
setup = descriptor["benchmarks"]["llama3.1-8b"]
setup["model_path"] = "/tmp/dummy-llama3.1-8b-16bit"
setup["quantization"] = "fp8"  # quantised when vLLM loads it: dynamic activation scales
(folder / "gpu_dummy_at_load.json").write_text(json.dumps(descriptor, indent=2))
PY
  for system in gpu_dummy gpu_dummy_at_load; do
    SUBMITTER_SYSTEMS_PATH=$SUBMITTER_SYSTEMS_PATH:$RESULTS/raw-systems CUDA_VISIBLE_DEVICES=0 \
      timed python3 bench/raw_offline.py --system "$system" --samples 1000 --out "$RESULTS/raw-$system.json"
  done
fi

# One scenario's run on one GPU at RATE, its files gathered in $RESULTS/SCENARIO/out: scenario GPU SCENARIO RATE
scenario() {
  local gpu=$1 name=$2 rate=$3
  local lower=${name,,}
  (
    RESULTS=$RESULTS/$lower
    mkdir -p "$RESULTS" && cp "$(dirname "$RESULTS")/gpus.txt" "$RESULTS/"
    export CUDA_VISIBLE_DEVICES=$gpu
    descriptor_at_rate gpu_dummy llama3.1-8b "$name" "$rate" "$RESULTS/systems"
    export SUBMITTER_SYSTEMS_PATH=$RESULTS/systems
    run_and_gather gpu_dummy llama3.1-8b --scenario "$name" --mode performance
  )
  log "$name on GPU $gpu: $(grep -h 'Result is\|per second' "$RESULTS/$lower/out/performance.mlperf_log_summary.txt" 2> /dev/null | tr -s ' ' | paste -sd ';')"
}

# Server or Interactive on one GPU at the highest VALID rate tune-qps finds from RATE, its trials' and its
# confirmation's files gathered in $RESULTS/SCENARIO/out: tuned GPU SCENARIO RATE
tuned() {
  local gpu=$1 name=$2 rate=$3
  (
    RESULTS=$RESULTS/${name,,}
    mkdir -p "$RESULTS" && cp "$(dirname "$RESULTS")/gpus.txt" "$RESULTS/"
    export CUDA_VISIBLE_DEVICES=$gpu
    tune_and_gather gpu_dummy llama3.1-8b "$name" "$rate" --step 1.02 --precision 0.02 --trial-seconds 120 \
      --max-trials "${TRIALS:-2}"
  )
  log "$name on GPU $gpu: $(sed -n "s/.* llama3.1-8b $name: //p" "$RESULTS/${name,,}/progress.txt" | tail -1)"
}

if [ "$(wc -l < "$RESULTS/gpus.txt")" -ge 2 ]; then
  scenario 0 Offline "${OFFLINE_QPS:-66}" &
  (
    tuned 1 Server "${SERVER_QPS:-61}"
    if [ "${INTERACTIVE:-0}" = 1 ]; then tuned 1 Interactive "${INTERACTIVE_QPS:-44}"; fi
  ) &
  wait
else
  scenario 0 Offline "${OFFLINE_QPS:-66}"
  tuned 0 Server "${SERVER_QPS:-61}"
  if [ "${INTERACTIVE:-0}" = 1 ]; then tuned 0 Interactive "${INTERACTIVE_QPS:-44}"; fi
fi
keep_caches
log "done"
