#!/usr/bin/env bash
# whisper as one replica on one GPU, its requests handed to vLLM by waves (harness/engines/vllm_offline.py,
# `encoder_wave`) beside as places free, one after the other on the same host: an Offline performance run
# of each at target_qps QPS (default 10: 8,165 samples, five sets of 1,633; shortened, INVALID for length
# only where the engine beats 10 samples/s), each on an engine of its own. WAVES lists the settings in the
# order run ("default": the harness's own, an eighth of max_num_seqs, 32; 0: none). BATCHED_TOKENS=N sets
# vLLM's max_num_batched_tokens, which is also how many encoder positions it starts in one step (16,384 by
# default: 10 clips of 1,500), so a whole wave can start at once; a new value compiles anew (about 3 minutes).
# whisper-large-v3 at full depth, dummy bf16 weights; its model folder (processor and tokenizer) is carried
# as .stage/mm, vLLM staged in /tmp/site (bench/unpack_site.sh). About 6 minutes with compile caches:
#   setsid nohup bash bench/gpu_whisper_waves.sh > /tmp/gpu-waves.log 2>&1 &
# then `bash bench/lease_wait.sh /tmp/gpu-waves` in calls sent in one batch (its header says why); each setting's
# files are gathered in /tmp/gpu-waves/wave-W/out.
set -uo pipefail
export RESULTS=/tmp/gpu-waves
source bench/gpu_host.sh

data=/tmp/whisper-synthetic-full/dev-all-repack.json
mkdir -p /tmp/mm "$(dirname "$data")" && cp -r .stage/mm/whisper-large-v3 /tmp/mm/
[ -e "$data" ] || timed submitter data synth --benchmark whisper --round v6.1 --out "$data"
for wave in ${WAVES:-default 0}; do
  (
    RESULTS=$RESULTS/wave-$wave
    mkdir -p "$RESULTS/systems" && cp "$(dirname "$RESULTS")"/{gpus,cpus}.txt "$RESULTS/"
    python3 - "$wave" "${QPS:-10}" "$RESULTS/systems" "${BATCHED_TOKENS:-}" <<'EOF'
import json, sys
wave, qps, folder, batched_tokens = sys.argv[1:]
descriptor = json.load(open("bench/systems/gpu_multi_dummy.json"))
setup = descriptor["benchmarks"]["whisper"]
setup["replicas"] = 1
setup["scenarios"]["Offline"]["user_conf"]["target_qps"] = float(qps)
if wave != "default":
    setup["engine_args"]["encoder_wave"] = int(wave)
if batched_tokens:
    setup["engine_args"]["max_num_batched_tokens"] = int(batched_tokens)
descriptor["benchmarks"] = {"whisper": setup}
descriptor["system"]["accelerators_per_node"] = "1"
open(f"{folder}/gpu_multi_dummy.json", "w").write(json.dumps(descriptor, indent=2))
EOF
    export SUBMITTER_SYSTEMS_PATH=$RESULTS/systems
    run_and_gather gpu_multi_dummy whisper --round v6.1 --scenario Offline --mode performance
    grep -h "waves of" "$RESULTS/run-all.log" >> "$RESULTS/out/progress.txt"
  )
  log "wave $wave: $(sed -n 's/^Samples per second *: *//p' "$RESULTS/wave-$wave/out/performance.mlperf_log_summary.txt") samples/s"
done
keep_caches
log "done waves"
