#!/usr/bin/env bash
# What the torch threads of an engine's processes cost, on one GPU: the same shortened Offline pass with the
# threads the descriptor's environment sets (each of THREADS in turn, OMP_NUM_THREADS for every process),
# then with the harness's own setting (harness.cpu_shares: vLLM's engine core on one thread, and a media
# engine's inputs made on half the feeding process's CPUs). The first run also pays the host's first compile,
# which is outside LoadGen's timing.
#   llama3.1-8b (bench/systems/gpu_dummy.json), one pass over SAMPLES prompts; THREADS defaults to the cores:
#     SAMPLES=6000 setsid nohup bash bench/gpu_engine_threads.sh llama3.1-8b > /tmp/gpu-threads.log 2>&1 &
#   whisper (bench/systems/gpu_multi_dummy.json as one replica), at target_qps QPS (default 3: two sets of
#   1,633, INVALID for length only); its model folder is carried in .stage/mm (bench/gpu_topology.sh):
#     THREADS=1 setsid nohup bash bench/gpu_engine_threads.sh whisper > /tmp/gpu-threads.log 2>&1 &
# Results: /tmp/gpu-threads/out (each run's summary and run.json, named by its thread setting).
set -uo pipefail
benchmark=${1:-llama3.1-8b}
export RESULTS=/tmp/gpu-threads
source bench/gpu_host.sh
case $benchmark in
  llama3.1-8b) system=gpu_dummy trial=(--smoke --smoke-samples "${SAMPLES:-4000}") ;;
  whisper) system=gpu_multi_dummy trial=()
    mkdir -p /tmp/mm && cp -r .stage/mm/whisper-large-v3 /tmp/mm/
    data=/tmp/whisper-synthetic-full/dev-all-repack.json
    mkdir -p "$(dirname "$data")"
    [ -e "$data" ] || timed submitter data synth --benchmark whisper --round v6.1 --out "$data" ;;
  *) echo "no thread comparison for $benchmark" >&2; exit 2 ;;
esac

# A copy of the bench descriptor for each setting, in its own folder: one replica, its threads set or not.
settings=("${THREADS:-$(nproc)}" harness)
for threads in "${settings[@]}"; do
  python3 - "$system" "$benchmark" "$threads" "${QPS:-3}" "$RESULTS/systems-$threads" <<'PY'
import json, os, sys
system, benchmark, threads, qps, folder = sys.argv[1:]
descriptor = json.load(open(f"bench/systems/{system}.json"))
setup = descriptor["benchmarks"][benchmark]
setup["replicas"] = 1
if benchmark == "whisper":
    setup["scenarios"]["Offline"]["user_conf"]["target_qps"] = float(qps)
if threads != "harness":
    setup.setdefault("environment", {})["OMP_NUM_THREADS"] = threads
os.makedirs(folder, exist_ok=True)
open(f"{folder}/{system}.json", "w").write(json.dumps(descriptor, indent=2))
PY
done
for threads in "${settings[@]}"; do
  SUBMITTER_SYSTEMS_PATH=$RESULTS/systems-$threads timed submitter run --system "$system" --benchmark "$benchmark" \
    --scenario Offline --mode performance "${trial[@]}" --runs-dir "$RESULTS/runs-$threads" --json \
    > "$RESULTS/threads-$threads.json"
  run=$(ls -d "$RESULTS"/runs-"$threads"/"$system"/*/*/*/*/ | tail -1)
  keep_run "$run" "threads-$threads"
  log "threads $threads: $(grep -E '^(Samples|Tokens) per second' "$run/mlperf_log_summary.txt" | tr '\n' ' ')"
done
cp "$RESULTS/progress.txt" "$RESULTS/gpus.txt" "$RESULTS/out/"
log "engine threads done"
