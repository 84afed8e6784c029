#!/usr/bin/env bash
# The demo's smoke plan of one benchmark, N times in a row, with every core kept busy by a spinning process
# each: does it pass whenever the code is right? (issue 36: whisper's TEST01 failed 3 runs of 8 this way
# before its demo engine answered in waves.)
#
#     bash bench/demo_under_load.sh [BENCHMARK (whisper)] [TIMES (10)] [SPINNERS (one per core)]
#
# CI runs the suite in six workers on two cores: SPINNERS 6 is that much contention.
# Runs in a fresh folder under /tmp with this checkout's `submitter`; prints each run's verdict and the
# count that passed; exit 1 when any failed.
set -euo pipefail
benchmark=${1:-whisper}
times=${2:-10}
spinning=${3:-$(nproc)}
descriptor="$(cd "$(dirname "$0")/.." && pwd)/systems/demo_cpu.json"
folder=$(mktemp -d /tmp/demo-under-load.XXXXXX)
cd "$folder"
mkdir demo-data
dataset=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['benchmarks'][sys.argv[2]]['dataset_path'])" \
  "$descriptor" "$benchmark")
model=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['benchmarks'][sys.argv[2]]['model_path'])" \
  "$descriptor" "$benchmark")
submitter data synth --benchmark "$benchmark" --out "$dataset" --demo-model "$model" >/dev/null
spinners=()
for _ in $(seq "$spinning"); do
  (while :; do :; done) &
  spinners+=($!)
done
trap 'kill "${spinners[@]}" 2>/dev/null' EXIT
passed=0
for attempt in $(seq "$times"); do
  if submitter run-all --system demo_cpu --benchmark "$benchmark" --smoke --runs-dir "runs-$attempt" \
      >"run-$attempt.log" 2>&1; then
    passed=$((passed + 1)); echo "run $attempt: passed"
  else
    echo "run $attempt: FAILED"; grep -E 'NOT valid|failed' "run-$attempt.log" | head -3
  fi
done
echo "$benchmark smoke plan: $passed of $times passed beside $spinning spinning process(es) on $(nproc) core(s); logs in $folder"
[ "$passed" -eq "$times" ]
