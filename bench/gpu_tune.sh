#!/usr/bin/env bash
# Issue 23 on one lent GPU with dummy FP8 Llama-3.1-8B, in parts that each fit one lease after vLLM is
# installed into /tmp/site. Run from a copy of the checkout on the host:
#   setsid nohup bash bench/gpu_tune.sh search > /tmp/gpu-tune.log 2>&1 &        (an H200)
#     `submitter tune-engine` Offline on gpu_dummy over the KV-cache dtype and max_num_seqs (passes of 3000
#     prompts), then a Server engine built on its answer (larger batches, FP8 KV cache), its rate searched
#     from 0.96 of the tuned Offline samples/s with 60-s trials and confirmed at full length by tune-qps;
#   setsid nohup bash bench/gpu_tune.sh h100 > /tmp/gpu-tune.log 2>&1 &          (an H100)
#     tune-engine Offline from Red Hat's published v5.1 H100 settings (redhat_h100_dummy) over a larger prefill
#     chunk, a deliberately overloaded Server run with those settings (twice their rate: early abort),
#     then Offline at full length with the tuned copy.
#   setsid nohup bash bench/gpu_tune.sh h100_server > /tmp/gpu-tune.log 2>&1 &   (an H100)
#     Server with the H200's Server answer (FP8 KV cache, 768 sequences, 16384-token chunks) on Red Hat's H100
#     setup: tune-qps from 49.5 qps with 30-s trials, confirmed at full length; then Red Hat's own Server
#     arguments in one 30-s trial at the rate the first held;
#   setsid nohup bash bench/gpu_tune.sh h200_full > /tmp/gpu-tune.log 2>&1 &     (an H200)
#     gpu_dummy's tuned Offline at full length, a kernel profile of one Offline pass (where the time goes),
#     Server with 6144-token prefill chunks (TPOT's worst steps bounded) in one 60-s trial at 58.4 qps, then
#     the Interactive rate at full length.
# Everything lands in /tmp/gpu-tune (progress.txt says what finished when).
set -uo pipefail
export RESULTS=/tmp/gpu-tune
# shellcheck source=bench/gpu_host.sh
source bench/gpu_host.sh

# A descriptor copy: $1 the source, $2 the copy, then python statements editing `setup` (llama3.1-8b).
edit_descriptor() {
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
source, copy, statements = sys.argv[1:]
descriptor = json.load(open(source))
setup = descriptor["benchmarks"]["llama3.1-8b"]
exec(statements)
open(copy, "w").write(json.dumps(descriptor, indent=2))
PY
}

search() {
  timed submitter tune-engine --system gpu_dummy --scenario Offline --samples 3000 \
    --space kv_cache_dtype=fp8 --space max_num_seqs=1024 \
    --runs-dir "$RESULTS/runs" --out "$RESULTS/tune-offline" --json > "$RESULTS/tune-offline.json"
  mkdir -p "$RESULTS/server-system"
  edit_descriptor "$RESULTS/tune-offline/gpu_dummy.json" "$RESULTS/server-system/gpu_dummy.json" "
offline = setup['scenarios']['Offline']
server = setup['scenarios']['Server']
kv = offline.get('engine_args', {}).get('kv_cache_dtype', 'fp8')
server['engine_args'] = {'max_num_batched_tokens': 16384, 'max_num_seqs': 768, 'kv_cache_dtype': kv}
server['user_conf']['target_qps'] = round(0.96 * offline['user_conf']['target_qps'], 3)
"
  SUBMITTER_SYSTEMS_PATH="$RESULTS/server-system" timed submitter tune-qps --system gpu_dummy --scenario Server \
    --step 1.02 --precision 0.02 --trial-seconds 60 --max-trials 2 \
    --runs-dir "$RESULTS/runs" --json > "$RESULTS/tune-server.json"
}

h100() {
  timed submitter tune-engine --system redhat_h100_dummy --scenario Offline --samples 3000 \
    --space max_num_batched_tokens=32768 \
    --runs-dir "$RESULTS/runs" --out "$RESULTS/tune-h100" --json > "$RESULTS/tune-h100.json"
  mkdir -p "$RESULTS/overloaded-system"
  edit_descriptor bench/systems/redhat_h100_dummy.json "$RESULTS/overloaded-system/redhat_h100_dummy.json" "
server = setup['scenarios']['Server']['user_conf']
server['target_qps'] = round(2 * server['target_qps'], 3)
"
  SUBMITTER_SYSTEMS_PATH="$RESULTS/overloaded-system" timed submitter run --system redhat_h100_dummy \
    --scenario Server --mode performance --runs-dir "$RESULTS/runs" --json > "$RESULTS/server-overloaded.json"
  timed submitter run --system "$RESULTS/tune-h100/redhat_h100_dummy.json" --scenario Offline \
    --mode performance --runs-dir "$RESULTS/runs" --json > "$RESULTS/offline-full.json"
}

h100_server() {
  mkdir -p "$RESULTS/h200-answer-system"
  edit_descriptor bench/systems/redhat_h100_dummy.json "$RESULTS/h200-answer-system/redhat_h100_dummy.json" "
server = setup['scenarios']['Server']
server['engine_args'] = {'kv_cache_dtype': 'fp8', 'max_num_seqs': 768, 'max_num_batched_tokens': 16384}
server['user_conf']['target_qps'] = 49.5
"
  SUBMITTER_SYSTEMS_PATH="$RESULTS/h200-answer-system" timed submitter tune-qps --system redhat_h100_dummy \
    --scenario Server --step 1.025 --precision 0.025 --trial-seconds 30 --max-trials 2 \
    --runs-dir "$RESULTS/runs" --json > "$RESULTS/tune-h100-server.json"
  held=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['best_qps'] or 49.5)" \
    "$RESULTS/tune-h100-server.json" 2>/dev/null || echo 49.5)
  timed submitter tune-qps --system redhat_h100_dummy --scenario Server --start "$held" --trial-seconds 30 \
    --max-trials 1 --no-confirm --runs-dir "$RESULTS/runs" --json > "$RESULTS/redhat-server-trial.json"
}

h200_full() {
  timed submitter run --system gpu_dummy --scenario Offline --mode performance --runs-dir "$RESULTS/runs" \
    --json > "$RESULTS/offline-full.json"
  timed python3 bench/raw_offline.py --system gpu_dummy --samples 2048 --profile \
    --out "$RESULTS/profile-offline.json"
  mkdir -p "$RESULTS/smaller-chunk-system"
  edit_descriptor bench/systems/gpu_dummy.json "$RESULTS/smaller-chunk-system/gpu_dummy.json" "
server = setup['scenarios']['Server']
server['engine_args']['max_num_batched_tokens'] = 6144
server['user_conf']['target_qps'] = 58.4
"
  SUBMITTER_SYSTEMS_PATH="$RESULTS/smaller-chunk-system" timed submitter tune-qps --system gpu_dummy \
    --scenario Server --trial-seconds 60 --max-trials 1 --no-confirm --runs-dir "$RESULTS/runs" \
    --json > "$RESULTS/server-smaller-chunk.json"
  timed submitter run --system gpu_dummy --scenario Interactive --mode performance --runs-dir "$RESULTS/runs" \
    --json > "$RESULTS/interactive-full.json"
}

"$@"
python3 bench/summarize_runs.py "$RESULTS/runs" > "$RESULTS/summary.md" 2>&1
log "gpu tune $1 done"
