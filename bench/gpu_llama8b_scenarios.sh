#!/usr/bin/env bash
# Issue 37's lease: llama3.1-8b in its scenarios at full length, one GPU each, with the stand-in in the
# precision Red Hat submitted (RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8: FP8 weights and activations, per tensor,
# both static; harness/models/published_precision.json), which gpu_host.sh builds for bench/systems/gpu_dummy.json.
# The scenarios run side by side where the host has the GPUs, each on its own, so that Server's ratio to Offline
# comes from one lease and the three fit the 30 minutes a lent machine is held:
#   four GPUs: Server on GPU 1 and Interactive on GPU 2 from the start; on GPUs 0 and 3 at once, raw-engine passes
#     with Offline's max_num_seqs and with OFFLINE_TRY_SEQS (default 384; the H100 lost 6 % at 768), then Offline
#     on GPU 0 with the faster (the other only where it gains 1 % or more) while GPU 3 goes on with the study;
#   two GPUs: Offline on GPU 0, Server on GPU 1 (then Interactive where INTERACTIVE=1);
#   one GPU: the study where STUDY=1, then Offline, Server and, where INTERACTIVE=1, Interactive in turn.
# Rates to start from, per kind of GPU (bench/RESULTS.md's last VALID runs; each overridable):
#   Offline at OFFLINE_QPS: 1.1 x 600 x QPS samples, rounded up by equal-issue mode to whole sets of 13,368. H200:
#     66, four sets (53,472), VALID up to 89 samples/s, about 14 minutes (three would stop being VALID above
#     66.8 samples/s, which the H200 may reach with static scales). H100: 60, three sets (40,104), 11 minutes
#     at the 61.3 samples/s it did with static scales.
#   Server from SERVER_QPS (H200 61, H100 55.08), Interactive from INTERACTIVE_QPS (H200 48, H100 42.45):
#     `submitter tune-qps` on one engine, TRIALS short trials of 120 s (default 3) stepping by SERVER_STEP
#     (1.02) and INTERACTIVE_STEP (1.03) while VALID, then the best VALID rate at full length, 17-20 minutes.
# The study (bench/raw_offline.py, 2,000 prompts, one engine each, into $RESULTS/study/out/NAME.json): the 16-bit
# stand-in quantised at load (dynamic activation scales: the static scales' gain on this GPU), max_num_seqs 256,
# and a kernel profile of the stand-in's pass.
# STOP_AFTER (seconds from the script's start) stops what still runs then and starts nothing after it, so
# that what was done is gathered within the lease. Offline's plan (samples, minutes, memory) goes into
# offline/progress.txt before it starts. Run from the checkout on the host after vLLM is in /tmp/site, detached:
#   (STOP_AFTER=1260 setsid nohup bash bench/gpu_llama8b_scenarios.sh > /tmp/gpu-llama8b.log 2>&1 &)
# then `bash bench/lease_wait.sh /tmp/gpu-llama8b` in calls sent in one batch (its header says why); the files to
# bring back are in /tmp/gpu-llama8b/{offline,server,interactive,study}/out, which it packs.
set -uo pipefail
export RESULTS=/tmp/gpu-llama8b
source bench/gpu_host.sh

study_dir=$RESULTS/study  # the study's results in out/, its descriptor in systems/
gpus=$(wc -l < "$RESULTS/gpus.txt")
if grep -q H100 "$RESULTS/gpus.txt"; then
  : "${OFFLINE_QPS:=60}" "${SERVER_QPS:=55.08}" "${INTERACTIVE_QPS:=42.45}"
else
  : "${OFFLINE_QPS:=66}" "${SERVER_QPS:=61}" "${INTERACTIVE_QPS:=48}"
fi

# One raw-engine pass on one GPU, into $study_dir/out/NAME.json: study_pass GPU NAME SYSTEM [RAW_OFFLINE ARGS...]
study_pass() {
  local gpu=$1 name=$2 system=$3
  shift 3
  mkdir -p "$study_dir/out"
  SUBMITTER_SYSTEMS_PATH=$SUBMITTER_SYSTEMS_PATH:$study_dir/systems CUDA_VISIBLE_DEVICES=$gpu until_deadline \
    timed python3 bench/raw_offline.py --system "$system" --samples 2000 "$@" --out "$study_dir/out/$name.json" \
    > "$study_dir/out/$name.log" 2>&1
  log "study $name: $(tokens_per_second "$name") tokens/s"
}
tokens_per_second() {
  python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['tokens_per_second'])" \
    "$study_dir/out/$1.json" 2> /dev/null
}
# The rest of the study on one GPU: study GPU
study() {
  local gpu=$1
  mkdir -p "$study_dir/systems"
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
  study_pass "$gpu" at-load gpu_dummy_at_load
  study_pass "$gpu" seqs-256 gpu_dummy --set max_num_seqs=256
  study_pass "$gpu" profile gpu_dummy --profile
  if [ -f "$study_dir/out/profile.json" ]; then
    python3 bench/raw_offline.py --summarize "$study_dir/out/profile.json" > "$study_dir/out/profile.md"
    gzip -f "$study_dir/out/profile.json"  # every kernel: kept, compressed
  fi
  cp "$RESULTS/gpus.txt" "$study_dir/out/"
}

# One scenario's run on one GPU at RATE, its files gathered in $RESULTS/SCENARIO/out; where SEQS is given, the
# scenario runs with that max_num_seqs: scenario GPU SCENARIO RATE [SEQS]
scenario() {
  local gpu=$1 name=$2 rate=$3 seqs=${4:-}
  local lower=${name,,}
  (
    RESULTS=$RESULTS/$lower
    mkdir -p "$RESULTS" && cp "$(dirname "$RESULTS")/gpus.txt" "$RESULTS/"
    export CUDA_VISIBLE_DEVICES=$gpu
    descriptor_at_rate gpu_dummy llama3.1-8b "$name" "$rate" "$RESULTS/systems"
    if [ -n "$seqs" ]; then
      python3 - "$RESULTS/systems/gpu_dummy.json" "$name" "$seqs" <<'PY'
import json, sys
path, scenario, seqs = sys.argv[1:]
descriptor = json.load(open(path))
setup = descriptor["benchmarks"]["llama3.1-8b"]["scenarios"][scenario]
setup.setdefault("engine_args", {})["max_num_seqs"] = int(seqs)
open(path, "w").write(json.dumps(descriptor, indent=2))
PY
    fi
    export SUBMITTER_SYSTEMS_PATH=$RESULTS/systems
    run_and_gather gpu_dummy llama3.1-8b --scenario "$name" --mode performance
  )
  log "$name on GPU $gpu: $(grep -h 'Result is\|per second' "$RESULTS/$lower/out/performance.mlperf_log_summary.txt" 2> /dev/null | tr -s ' ' | paste -sd ';')"
}

# Server or Interactive on one GPU at the highest VALID rate tune-qps finds from RATE, stepping by STEP, its
# trials' and its confirmation's files gathered in $RESULTS/SCENARIO/out: tuned GPU SCENARIO RATE STEP
tuned() {
  local gpu=$1 name=$2 rate=$3 step=$4
  (
    RESULTS=$RESULTS/${name,,}
    mkdir -p "$RESULTS" && cp "$(dirname "$RESULTS")/gpus.txt" "$RESULTS/"
    export CUDA_VISIBLE_DEVICES=$gpu
    tune_and_gather gpu_dummy llama3.1-8b "$name" "$rate" --step "$step" --precision 0.02 --trial-seconds 120 \
      --max-trials "${TRIALS:-3}"
  )
  log "$name on GPU $gpu: $(sed -n "s/.* llama3.1-8b $name: //p" "$RESULTS/${name,,}/progress.txt" | tail -1)"
}

server_step=${SERVER_STEP:-1.02} interactive_step=${INTERACTIVE_STEP:-1.03}
if [ "$gpus" -ge 4 ]; then
  tuned 1 Server "$SERVER_QPS" "$server_step" &
  tuned 2 Interactive "$INTERACTIVE_QPS" "$interactive_step" &
  seqs=$(python3 -c "from pathlib import Path; from submitter.systems.validate import load_descriptor; \
setup = load_descriptor(Path('bench/systems/gpu_dummy.json')).benchmarks['llama3.1-8b']; \
print(setup.engine_args_for('Offline')['max_num_seqs'])")
  try=${OFFLINE_TRY_SEQS:-384}
  study_pass 0 "seqs-$seqs" gpu_dummy &
  first=$!
  study_pass 3 "seqs-$try" gpu_dummy --set "max_num_seqs=$try" &
  wait $first $!
  if python3 -c "import sys; sys.exit(not float(sys.argv[2]) >= 1.01 * float(sys.argv[1]))" \
    "$(tokens_per_second "seqs-$seqs")" "$(tokens_per_second "seqs-$try")" 2> /dev/null; then
    log "Offline with max_num_seqs $try (1 % or more over $seqs in the raw passes)"
    scenario 0 Offline "$OFFLINE_QPS" "$try" &
  else
    scenario 0 Offline "$OFFLINE_QPS" &
  fi
  study 3 &
  wait
elif [ "$gpus" -ge 2 ]; then
  scenario 0 Offline "$OFFLINE_QPS" &
  (
    tuned 1 Server "$SERVER_QPS" "$server_step"
    if [ "${INTERACTIVE:-0}" = 1 ]; then tuned 1 Interactive "$INTERACTIVE_QPS" "$interactive_step"; fi
  ) &
  wait
else
  if [ "${STUDY:-0}" = 1 ]; then study 0; fi
  scenario 0 Offline "$OFFLINE_QPS"
  tuned 0 Server "$SERVER_QPS" "$server_step"
  if [ "${INTERACTIVE:-0}" = 1 ]; then tuned 0 Interactive "$INTERACTIVE_QPS" "$interactive_step"; fi
fi
keep_caches
log "done"
