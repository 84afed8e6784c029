#!/usr/bin/env bash
# Issue 37's lease: llama3.1-8b in its scenarios at full length, one GPU each, with the stand-in in the
# precision Red Hat submitted (RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8: FP8 weights and activations, per tensor,
# both static; harness/published_precision.json), which gpu_host.sh builds for bench/systems/gpu_dummy.json.
# The scenarios run side by side where the host has the GPUs, each on its own: Offline on GPU 0, Server on
# GPU 1, Interactive (INTERACTIVE=1, or on four GPUs always) on GPU 2, so that Server's ratio to Offline comes from
# one lease and the three fit the 30 minutes a lent machine is held; with two GPUs Interactive follows Server on
# GPU 1, with one everything runs on GPU 0 one after the other. Rates to start from, per kind of GPU (H100 or
# H200, from bench/RESULTS.md's last VALID runs times the static scales' gain; each overridable):
#   Offline at OFFLINE_QPS: 1.1 x 600 x QPS samples, rounded up by equal-issue mode to whole sets of 13,368. H200:
#     66, four sets (53,472), VALID up to 89 samples/s, about 14 minutes (three would stop being VALID above
#     66.8 samples/s, which the H200 may reach with static scales). H100: 60, three sets (40,104), about 11 minutes.
#   Server from SERVER_QPS (H200 61, H100 54), Interactive from INTERACTIVE_QPS (H200 46, H100 40): `submitter
#     tune-qps` on one engine, TRIALS short trials of 120 s (default 3 for Server, 2 for Interactive; x 1.02 while
#     VALID) and the best VALID rate at full length, about 17-19 minutes.
#   On a fourth GPU (or on GPU 0 before the scenarios where STUDY=1): the engine study, raw-engine passes over
#     2,000 prompts (bench/raw_offline.py), one engine each: this stand-in as gpu_dummy runs it; the 16-bit
#     stand-in quantised at load (dynamic activation scales: the static scales' gain on this GPU); larger
#     max_num_seqs and max_num_batched_tokens; Triton attention with its FP8 output fused into the static
#     quantisation of o_proj's input (the one attention backend of vLLM 0.26 that fuses it on Hopper); then
#     a kernel profile of the stand-in's pass. Each is in $RESULTS/study/out/NAME.json.
# STOP_AFTER (seconds from the script's start) stops what still runs then and starts nothing after it, so
# that what was done is gathered within the lease. Offline's plan (samples, minutes, memory) goes into
# offline/progress.txt before it starts. Run from the checkout on the host after vLLM is in /tmp/site, detached:
#   (STOP_AFTER=1320 setsid nohup bash bench/gpu_llama8b_scenarios.sh > /tmp/gpu-llama8b.log 2>&1 &)
# then `bash bench/lease_wait.sh /tmp/gpu-llama8b` in calls sent in one batch (its header says why); the files to
# bring back are in /tmp/gpu-llama8b/{offline,server,interactive}/out and study/out, which it packs.
set -uo pipefail
export RESULTS=/tmp/gpu-llama8b
source bench/gpu_host.sh

study_dir=$RESULTS/study  # the engine study (below): its results in out/, its descriptor in systems/
gpus=$(wc -l < "$RESULTS/gpus.txt")
if grep -q H100 "$RESULTS/gpus.txt"; then
  : "${OFFLINE_QPS:=60}" "${SERVER_QPS:=54}" "${INTERACTIVE_QPS:=40}"
else
  : "${OFFLINE_QPS:=66}" "${SERVER_QPS:=61}" "${INTERACTIVE_QPS:=46}"
fi

# One raw-engine pass of the study on one GPU, into $study_dir/out/NAME.json: study_pass GPU NAME SYSTEM [ARGS...]
study_pass() {
  local gpu=$1 name=$2 system=$3
  shift 3
  SUBMITTER_SYSTEMS_PATH=$SUBMITTER_SYSTEMS_PATH:$study_dir/systems CUDA_VISIBLE_DEVICES=$gpu until_deadline \
    timed python3 bench/raw_offline.py --system "$system" --samples 2000 "$@" --out "$study_dir/out/$name.json" \
    > "$study_dir/out/$name.log" 2>&1
  log "study $name: $(python3 -c "import json, sys; d = json.load(open(sys.argv[1])); \
print(d.get('tokens_per_second'), 'tokens/s')" "$study_dir/out/$name.json" 2> /dev/null)"
}
# The engine study on one GPU: study GPU
study() {
  local gpu=$1
  mkdir -p "$study_dir/out" "$study_dir/systems"
  timed submitter data dummy-model --out /tmp/dummy-llama3.1-8b-16bit > /dev/null
  python3 - "$study_dir/systems" <<'PY'
import json, pathlib, sys
descriptor = json.load(open("bench/systems/gpu_dummy.json"))
descriptor["id"] = "gpu_dummy_at_load"
setup = descriptor["benchmarks"]["llama3.1-8b"]
setup["model_path"] = "/tmp/dummy-llama3.1-8b-16bit"
setup["quantization"] = "fp8"  # quantised when vLLM loads it: dynamic activation scales
(pathlib.Path(sys.argv[1]) / "gpu_dummy_at_load.json").write_text(json.dumps(descriptor, indent=2))
PY
  study_pass "$gpu" static gpu_dummy
  study_pass "$gpu" at-load gpu_dummy_at_load
  study_pass "$gpu" seqs-768 gpu_dummy --set max_num_seqs=768
  study_pass "$gpu" tokens-65536 gpu_dummy --set max_num_batched_tokens=65536
  study_pass "$gpu" triton-attn-fused gpu_dummy --set attention_backend=TRITON_ATTN \
    --set 'compilation_config={"pass_config":{"fuse_attn_quant":true}}'
  study_pass "$gpu" profile gpu_dummy --profile
  if [ -f "$study_dir/out/profile.json" ]; then
    python3 bench/raw_offline.py --summarize "$study_dir/out/profile.json" > "$study_dir/out/profile.md"
    gzip -f "$study_dir/out/profile.json"  # every kernel: kept, compressed
  fi
  cp "$RESULTS/gpus.txt" "$study_dir/out/"
}

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
      --max-trials "$TRIALS"
  )
  log "$name on GPU $gpu: $(sed -n "s/.* llama3.1-8b $name: //p" "$RESULTS/${name,,}/progress.txt" | tail -1)"
}

if [ "$gpus" -ge 4 ]; then
  study 3 &
  scenario 0 Offline "$OFFLINE_QPS" &
  TRIALS=${TRIALS:-3} tuned 1 Server "$SERVER_QPS" &
  TRIALS=${TRIALS:-2} tuned 2 Interactive "$INTERACTIVE_QPS" &
  wait
elif [ "$gpus" -ge 2 ]; then
  scenario 0 Offline "$OFFLINE_QPS" &
  (
    TRIALS=${TRIALS:-3} tuned 1 Server "$SERVER_QPS"
    if [ "${INTERACTIVE:-0}" = 1 ]; then TRIALS=${TRIALS:-2} tuned 1 Interactive "$INTERACTIVE_QPS"; fi
  ) &
  wait
else
  if [ "${STUDY:-0}" = 1 ]; then study 0; fi
  scenario 0 Offline "$OFFLINE_QPS"
  TRIALS=${TRIALS:-3} tuned 0 Server "$SERVER_QPS"
  if [ "${INTERACTIVE:-0}" = 1 ]; then TRIALS=${TRIALS:-2} tuned 0 Interactive "$INTERACTIVE_QPS"; fi
fi
keep_caches
log "done"
