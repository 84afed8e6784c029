# Sourced by the GPU bench scripts after they set RESULTS: the environment on the lent host (vLLM in
# /tmp/site, the bench descriptors), the data, and the helpers that log what finished when.
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 SUBMITTER_SYSTEMS_PATH=$PWD/bench/systems
mkdir -p "$RESULTS"
began=$SECONDS

# Never on stdout: commands' stdout is their JSON.
log() { echo "$(date -u +%H:%M:%S) +$((SECONDS - began))s $*" | tee -a "$RESULTS/progress.txt" >&2; }
timed() {
  local started=$SECONDS
  "$@"
  log "exit $? after $((SECONDS - started)) s: $*"
}
submitter() { python3 -m submitter "$@"; }
# A copy of gpu_dummy.json with one scenario's target_qps changed, in folder $3 (for SUBMITTER_SYSTEMS_PATH).
gpu_dummy_at_rate() {
  mkdir -p "$3"
  python3 - "$1" "$2" "$3/gpu_dummy.json" <<'EOF'
import json, sys
scenario, qps, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
descriptor = json.load(open("bench/systems/gpu_dummy.json"))
descriptor["benchmarks"]["llama3.1-8b"]["scenarios"][scenario]["user_conf"]["target_qps"] = qps
open(out, "w").write(json.dumps(descriptor, indent=2))
EOF
}

nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader > "$RESULTS/gpus.txt"
[ -f /tmp/synthetic-cnn-eval.json ] || submitter data synth --out /tmp/synthetic-cnn-eval.json
[ -d /tmp/dummy-llama3.1-8b ] || submitter data dummy-model --out /tmp/dummy-llama3.1-8b
log "data ready"
