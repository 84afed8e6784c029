#!/usr/bin/env bash
# Issue 38 on a lent 2-GPU host: llama3.1-8b (FP8 stand-in, full depth) on two Ray nodes of one GPU each
# (bench/ray_one_host_cluster.py: a head and one raylet per GPU), as two replicas one per node and as
# PP=2 across the nodes, each beside the same topology on one node without Ray (gpu_dummy_x2, and a PP=2
# copy of it). Each is one Offline pass over the first SAMPLES (default 6,000) prompts (--smoke: LoadGen
# VALID, not submittable), so the four figures compare the same work. STOP_AFTER=S (bench/gpu_helpers.sh)
# stops a run still going S seconds after the script began, where it follows another script in one lease.
# Needs vLLM and ray 2.60 in /tmp/site: copy .stage/site/p00..p03 and .stage/ray/p0, p1 to /tmp in a call
# each, then carry .stage/site/p04 and .stage/ray/p2 together and run bench/unpack_site.sh first in that
# call. Run from the checkout on the host, detached (about 15 minutes; with SAMPLES=4000 on two H100s, four
# engine starts of 72-122 s and tests of 35-48 s: the seventeenth lease in bench/RESULTS.md):
#   setsid nohup bash bench/gpu_ray_two_nodes.sh > /tmp/gpu-ray.log 2>&1 &
# then `bash bench/lease_wait.sh /tmp/gpu-ray` in calls sent in one batch (its header says why); the files to bring
# back are gathered in /tmp/gpu-ray/out.
set -uo pipefail
export RESULTS=/tmp/gpu-ray
source bench/gpu_host.sh
# Only the one-node PP=2 run shares GPUs within one vLLM; these keep it off NVLink multicast (device README).
export VLLM_FLASHINFER_ALLREDUCE_BACKEND=trtllm VLLM_ALLREDUCE_USE_SYMM_MEM=0
one_pass=(--scenario Offline --mode performance --smoke --smoke-samples "${SAMPLES:-6000}")

mkdir -p "$RESULTS/systems"
python3 - "$RESULTS/systems" <<'PY'
import json, shutil, sys
folder = sys.argv[1]
for system in ("gpu_dummy_x2", "gpu_ray_2node_dummy"):
    shutil.copy(f"bench/systems/{system}.json", folder)
    descriptor = json.load(open(f"bench/systems/{system}.json"))
    descriptor["id"] = f"{system}_pp2"
    descriptor["benchmarks"]["llama3.1-8b"].update(replicas=1, pipeline_parallel_size=2)
    open(f"{folder}/{system}_pp2.json", "w").write(json.dumps(descriptor, indent=2))
PY
export SUBMITTER_SYSTEMS_PATH=$RESULTS/systems

for system in gpu_dummy_x2 gpu_dummy_x2_pp2; do
  until_deadline timed submitter run --system "$system" "${one_pass[@]}" --runs-dir "$RESULTS/one-node" --json \
    > "$RESULTS/$system.json" 2> "$RESULTS/$system.log"
done

python3 bench/ray_one_host_cluster.py --gpus 0 1 --address-file "$RESULTS/ray-address" \
  > "$RESULTS/cluster.log" 2>&1 &
cluster=$!
for _ in $(seq 120); do [ -f "$RESULTS/ray-address" ] && break; sleep 1; done
if [ -f "$RESULTS/ray-address" ]; then
  RAY_ADDRESS=$(cat "$RESULTS/ray-address")
  export RAY_ADDRESS
  log "Ray cluster at $RAY_ADDRESS"
  for system in gpu_ray_2node_dummy gpu_ray_2node_dummy_pp2; do
    until_deadline timed submitter run --system "$system" "${one_pass[@]}" --runs-dir "$RESULTS/two-nodes" --json \
      > "$RESULTS/$system.json" 2> "$RESULTS/$system.log"
  done
else
  log "the Ray cluster did not come up in 120 s (cluster.log)"
fi
kill "$cluster" 2>/dev/null
wait "$cluster"

python3 bench/summarize_runs.py "$RESULTS/one-node" > "$RESULTS/summary.md"
python3 bench/summarize_runs.py "$RESULTS/two-nodes" >> "$RESULTS/summary.md"
mkdir -p "$RESULTS/out"
cp "$RESULTS/gpus.txt" "$RESULTS/summary.md" "$RESULTS/progress.txt" "$RESULTS/cluster.log" "$RESULTS"/*.json "$RESULTS/out/"
for run in "$RESULTS"/one-node/*/*/*/*/*/ "$RESULTS"/two-nodes/*/*/*/*/*/; do
  keep_run "$run" "$(basename "$(dirname "$(dirname "$(dirname "$(dirname "$run")")")")")"  # by its system
done
for system_log in "$RESULTS"/gpu_*.log; do tail -c 300000 "$system_log" > "$RESULTS/out/$(basename "$system_log")"; done
log "done"
