# Sourced by the GPU bench scripts (through gpu_host.sh): what finished when goes to stderr and
# $RESULTS/progress.txt, never to stdout, so a command's `--json` output redirected into a file stays JSON.
began=$SECONDS

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
