#!/usr/bin/env bash
# Issue 37's first H200 lease: llama3.1-8b with the stand-in in the precision Red Hat submitted
# (RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8: compressed-tensors FP8, weights and activations per tensor,
# both static; harness/published_precision.json) beside the stand-in quantised at load (dynamic
# per-tensor activation scales, bench/systems/gpu_dummy.json), which the earlier H200 profile found
# spending 11.9 % of the Offline pass on abs-max reductions that static scales do not need.
#   1. the raw engine on SAMPLES (default 2,000) prompts with each stand-in (same engine arguments): the static
#      scales' gain;
#   2. Offline at full length (13,368 samples, 600 s minimum) with the static stand-in at QPS (default 66);
#      OFFLINE=0 stops after step 1.
# Run from the checkout on the host after vLLM is in /tmp/site, detached (about 20 minutes):
#   QPS=66 setsid nohup bash bench/gpu_static_fp8.sh > /tmp/gpu-static.log 2>&1 &
# and poll /tmp/gpu-static/progress.txt; the files to bring back are gathered in /tmp/gpu-static/out.
set -uo pipefail
export RESULTS=/tmp/gpu-static
source bench/gpu_host.sh
qps=${QPS:-66}

timed submitter data dummy-model --precision published --out /tmp/dummy-llama3.1-8b-static
descriptor_at_rate gpu_dummy llama3.1-8b Offline "$qps" "$RESULTS/systems"
python3 - "$RESULTS/systems" <<'PY'
import json, sys
folder = sys.argv[1]
descriptor = json.load(open(f"{folder}/gpu_dummy.json"))
descriptor["id"] = "gpu_dummy_static"
setup = descriptor["benchmarks"]["llama3.1-8b"]
setup["model_path"] = "/tmp/dummy-llama3.1-8b-static"
setup["quantization"] = None  # the checkpoint's own quantization_config decides
open(f"{folder}/gpu_dummy_static.json", "w").write(json.dumps(descriptor, indent=2))
PY
export SUBMITTER_SYSTEMS_PATH=$RESULTS/systems

for system in gpu_dummy gpu_dummy_static; do
  timed python3 bench/raw_offline.py --system "$system" --samples "${SAMPLES:-2000}" --out "$RESULTS/raw-$system.json"
done
if [ "${OFFLINE:-1}" = 0 ]; then log "done (raw engine only)"; exit 0; fi
timed submitter run --system gpu_dummy_static --scenario Offline --mode performance --runs-dir "$RESULTS/runs" \
  --json > "$RESULTS/offline-static.json" 2> "$RESULTS/offline-static.log"
python3 bench/summarize_runs.py "$RESULTS/runs" > "$RESULTS/summary.md"

mkdir -p "$RESULTS/out"
cp "$RESULTS/gpus.txt" "$RESULTS/progress.txt" "$RESULTS/summary.md" "$RESULTS"/raw-*.json \
  "$RESULTS/offline-static.json" /tmp/dummy-llama3.1-8b-static/config.json "$RESULTS/out/"
for run in "$RESULTS"/runs/gpu_dummy_static/*/*/*/*/; do
  keep_run "$run" offline-static
done
tail -c 300000 "$RESULTS/offline-static.log" > "$RESULTS/out/offline-static.log"
log "done"
