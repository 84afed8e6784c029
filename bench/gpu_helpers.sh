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
# A copy of bench/systems/SYSTEM.json with one scenario's target_qps changed, written to folder DIR (for
# SUBMITTER_SYSTEMS_PATH): descriptor_at_rate SYSTEM BENCHMARK SCENARIO QPS DIR
descriptor_at_rate() {
  mkdir -p "$5"
  python3 - "$@" <<'EOF'
import json, sys
system, benchmark, scenario, qps, folder = sys.argv[1:]
descriptor = json.load(open(f"bench/systems/{system}.json"))
descriptor["benchmarks"][benchmark]["scenarios"][scenario]["user_conf"]["target_qps"] = float(qps)
open(f"{folder}/{system}.json", "w").write(json.dumps(descriptor, indent=2))
EOF
}
# The files of one run to bring back, in $RESULTS/out as NAME.run.json, NAME.mlperf_log_summary.txt and
# NAME.accuracy.txt (those the run has): keep_run RUN_DIR NAME
keep_run() {
  mkdir -p "$RESULTS/out"
  for file in run.json mlperf_log_summary.txt accuracy.txt; do
    if [ -f "$1/$file" ]; then cp "$1/$file" "$RESULTS/out/$2.$file"; fi
  done
}
