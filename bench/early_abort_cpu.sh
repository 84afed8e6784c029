#!/usr/bin/env bash
# Early abort on the CPU: demo_cpu's Server at twice the synthetic engine's capacity (5000 tokens/s over
# 128-token answers: 39 answers/s; the copy asks for 78 qps), full length, once with early abort and once
# without (--no-early-abort), to set the time an abort saves beside the time the whole run takes.
#   bash bench/early_abort_cpu.sh [RESULTS_DIR]     (about 12 minutes; needs demo-data/cnn_synthetic.json)
set -uo pipefail
export RESULTS=${1:-/tmp/early-abort-cpu}
source "$(dirname "${BASH_SOURCE[0]}")/gpu_helpers.sh"
mkdir -p "$RESULTS/system"
python3 - "$RESULTS/system/demo_cpu.json" <<'PY'
import json, sys
from submitter.systems.catalog import descriptor_path
descriptor = json.loads(descriptor_path("demo_cpu").read_text())
descriptor["benchmarks"]["llama3.1-8b"]["scenarios"]["Server"]["user_conf"]["target_qps"] = 78
open(sys.argv[1], "w").write(json.dumps(descriptor, indent=2))
PY
for watch in early-abort no-early-abort; do
  flag=()
  [ "$watch" = no-early-abort ] && flag=(--no-early-abort)
  SUBMITTER_SYSTEMS_PATH="$RESULTS/system" timed submitter run --system demo_cpu --scenario Server \
    --mode performance "${flag[@]}" --runs-dir "$RESULTS/$watch" --json > "$RESULTS/$watch.json"
done
python3 bench/summarize_runs.py "$RESULTS" > "$RESULTS/summary.md"
log "early abort on the CPU done"
