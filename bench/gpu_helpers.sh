# shellcheck shell=bash
# Sourced by the GPU bench scripts (through gpu_host.sh): what finished when goes to stderr and
# $RESULTS/progress.txt, never to stdout, so a command's `--json` output redirected into a file stays JSON.
began=$SECONDS
# The script's process id, by which bench/lease_wait.sh tells whether it still runs.
echo "$$" > "$RESULTS/script.pid"

log() { echo "$(date -u +%H:%M:%S) +$((SECONDS - began))s $*" | tee -a "$RESULTS/progress.txt" >&2; }
timed() {
  local started=$SECONDS
  "$@"
  log "exit $? after $((SECONDS - started)) s: $*"
}
submitter() { python3 -m submitter "$@"; }
# COMMAND in the background, stopped with SIGTERM where it still runs STOP_AFTER seconds after the script began
# (run-all and tune-qps record the test as interrupted and exit 130), so that what it did is gathered while the
# lease lasts: the eleventh lease's run was still going when the lease ended (bench/RESULTS.md). Without
# STOP_AFTER it runs to its end; past it, it does not start. Its exit status is the command's.
#   until_deadline COMMAND...
until_deadline() {
  if [ -n "${STOP_AFTER:-}" ] && [ $((SECONDS - began)) -ge "$STOP_AFTER" ]; then
    log "STOP_AFTER=$STOP_AFTER s passed: not started: $*"
    return 130
  fi
  "$@" &
  local command=$!
  if [ -n "${STOP_AFTER:-}" ]; then
    (
      while kill -0 "$command" 2> /dev/null; do
        if [ $((SECONDS - began)) -ge "$STOP_AFTER" ]; then
          log "STOP_AFTER=$STOP_AFTER s reached: stopping it, to gather what it did within the lease"
          pkill -TERM -P "$command"  # the command's python, not the shell function that waits for it
          break
        fi
        sleep 2
      done
    ) &
  fi
  wait "$command"
}
# A copy of bench/systems/SYSTEM.json with one scenario's target_qps changed, written to folder DIR (for
# SUBMITTER_SYSTEMS_PATH). Where REPLICAS is given, the copy holds only that benchmark, with that many replicas
# (each of TP GPUs where TP is given) and the system description counting the GPUs they use:
#   descriptor_at_rate SYSTEM BENCHMARK SCENARIO QPS DIR [REPLICAS [TP]]
descriptor_at_rate() {
  mkdir -p "$5"
  python3 - "$@" <<'EOF'
import json, sys
system, benchmark, scenario, qps, folder, *replicas = sys.argv[1:]
descriptor = json.load(open(f"bench/systems/{system}.json"))
setup = descriptor["benchmarks"][benchmark]
setup["scenarios"][scenario]["user_conf"]["target_qps"] = float(qps)
if replicas:
    setup["replicas"] = int(replicas[0])
    if len(replicas) > 1:
        setup["tensor_parallel_size"] = int(replicas[1])
    group = setup.get("tensor_parallel_size", 1) * setup.get("pipeline_parallel_size", 1)
    descriptor["system"]["accelerators_per_node"] = str(setup["replicas"] * group)
    descriptor["benchmarks"] = {benchmark: setup}
open(f"{folder}/{system}.json", "w").write(json.dumps(descriptor, indent=2))
EOF
}
# The checkout's state as git sees it on the host, beside run.json's `git` (which once said `dirty: false`
# after the host's copy of a descriptor was edited: bench/RESULTS.md, the ninth lease): out/git-status.txt.
git_status() {
  mkdir -p "$RESULTS/out"
  { git rev-parse HEAD && git status --porcelain; } > "$RESULTS/out/git-status.txt" 2>&1
}
# The files of one run to bring back, in $RESULTS/out as NAME.run.json, NAME.mlperf_log_summary.txt,
# NAME.accuracy.txt and NAME.progress.json (those the run has): keep_run RUN_DIR NAME
keep_run() {
  mkdir -p "$RESULTS/out"
  for file in run.json mlperf_log_summary.txt accuracy.txt progress.json; do
    if [ -f "$1/$file" ]; then cp "$1/$file" "$RESULTS/out/$2.$file"; fi
  done
}
# What the host's CPUs and GPUs do while a plan runs, every 30 s into $RESULTS/host-load.txt: the load average,
# the busiest processes, each GPU's utilisation and the running test's progress.json on one line (samples done,
# samples/s), which a poll reads to tell early whether the run ends within the lease. A run held back by its
# CPUs shows here, not in LoadGen's log (four whisper replicas on four H100s: load average 146 on 64 cores,
# GPUs at 47-54 %).
watch_host() {
  local progress
  while true; do
    progress=$(find "$RESULTS/runs" -name progress.json -printf '%T@ %p\n' 2> /dev/null | sort -n | tail -1 |
      cut -d' ' -f2-)
    {
      date -u +%H:%M:%S
      cat /proc/loadavg
      top -bn1 -o %CPU | sed -n 8,13p
      nvidia-smi --query-gpu=index,utilization.gpu,memory.used --format=csv,noheader
      if [ -n "$progress" ]; then tr -d ' \n' < "$progress" && echo; fi
    } >> "$RESULTS/host-load.txt" 2>&1
    sleep 30
  done
}
# Where the busiest Python processes spend their time, once per plan: PROFILE_AFTER seconds (default 60) after
# LoadGen's first test began (its mlperf_log_detail.txt appeared under $RESULTS/runs), py-spy samples every
# process above 50 % CPU for 20 s without pausing it, into $RESULTS/out/profiles/PID-NAME.txt (collapsed stacks
# with sample counts, one line per stack and thread). Only where py-spy is installed: gpu_host.sh installs it
# from its wheel, carried as .stage/tools (pip download --no-deps --only-binary :all: py-spy). whisper's two
# replicas added samples at 37 per second each against 49 for one alone (bench/RESULTS.md, 2026-11-26); the
# profiles say in which calls.
profile_busy() {
  command -v py-spy > /dev/null || return 0
  until find "$RESULTS/runs" -name mlperf_log_detail.txt 2> /dev/null | grep -q .; do sleep 5; done
  sleep "${PROFILE_AFTER:-60}"
  mkdir -p "$RESULTS/out/profiles"
  local pid name
  while read -r pid name; do
    py-spy record --pid "$pid" --duration 20 --rate 100 --nonblocking --threads --format raw \
      --output "$RESULTS/out/profiles/$pid-$name.txt" > /dev/null 2>> "$RESULTS/out/profiles/py-spy.log" &
  done < <(ps -eo pid=,pcpu=,comm= --sort=-pcpu | awk '$2 > 50 && ($3 ~ /python|VLLM/) {print $1, $3}')
  wait
  log "profiled $(find "$RESULTS/out/profiles" -name '*.txt' | wc -l) busy process(es)"
}
# One run-all plan of SYSTEM's BENCHMARK (more run-all arguments after them): its dry run (placement, memory
# estimate, samples and minutes) into the progress file first, then the plan (watched by watch_host), and what
# to bring back gathered in $RESULTS/out: the outcome, the summary, what vLLM said of memory beside preflight's
# estimate, the host's load, the ledger, each run's files (named by its mode) and the log's tail, compressed.
#   run_and_gather SYSTEM BENCHMARK [RUN-ALL ARGUMENTS...]
run_and_gather() {
  local system=$1 benchmark=$2
  shift 2
  local plan=(run-all --system "$system" --benchmark "$benchmark" "$@" --runs-dir "$RESULTS/runs")
  submitter "${plan[@]}" --dry-run >> "$RESULTS/progress.txt" 2>&1
  watch_host &
  local watcher=$!
  profile_busy &
  local profiler=$!
  until_deadline timed submitter "${plan[@]}" --json > "$RESULTS/run-all.json" 2> "$RESULTS/run-all.log"
  kill "$watcher" "$profiler" 2> /dev/null
  python3 bench/summarize_runs.py "$RESULTS/runs" > "$RESULTS/summary.md"
  grep -E "Available KV cache memory|GPU KV cache size|Model loading took|per GPU|replica\(s\)|CUDA graph|torch.compile took|Actual usage is" \
    "$RESULTS/run-all.log" > "$RESULTS/memory.txt"
  mkdir -p "$RESULTS/out"
  cp "$RESULTS/gpus.txt" "$RESULTS/summary.md" "$RESULTS/memory.txt" "$RESULTS/progress.txt" "$RESULTS/run-all.json" \
    "$RESULTS/host-load.txt" "$RESULTS/out/"
  if [ -f "$RESULTS/gpu-memory.txt" ]; then cp "$RESULTS/gpu-memory.txt" "$RESULTS/out/"; fi
  cp "$RESULTS/runs/ledger.jsonl" "$RESULTS/out/ledger.jsonl"
  if [ -f "$RESULTS/cpus.txt" ]; then cp "$RESULTS/cpus.txt" "$RESULTS/out/"; fi
  git_status
  local run
  for run in "$RESULTS"/runs/"$system"/"$benchmark"/*/*/*/; do
    keep_run "$run" "$(basename "$(dirname "$run")")"
  done
  tail -c 2000000 "$RESULTS/run-all.log" | xz -9 > "$RESULTS/out/run-all.log.xz"
}
# A scenario's highest VALID rate (Server or Interactive) from RATE: `submitter tune-qps`, short trials then the
# best at full length on one engine, watched as run_and_gather's plan is; what to bring back gathered in
# $RESULTS/out: the search (tune-qps.json), the summary, the host's load, the ledger and each run's files
# (named by its start time), and the log's tail, compressed. The best rate goes into the progress file.
#   tune_and_gather SYSTEM BENCHMARK SCENARIO RATE [TUNE-QPS ARGUMENTS...]
tune_and_gather() {
  local system=$1 benchmark=$2 scenario=$3 rate=$4
  shift 4
  mkdir -p "$RESULTS/out"
  watch_host &
  local watcher=$!
  profile_busy &
  local profiler=$!
  until_deadline timed submitter tune-qps --system "$system" --benchmark "$benchmark" --scenario "$scenario" --start "$rate" \
    "$@" --runs-dir "$RESULTS/runs" --json > "$RESULTS/out/tune-qps.json" 2> "$RESULTS/tune-qps.log"
  kill "$watcher" "$profiler" 2> /dev/null
  python3 bench/summarize_runs.py "$RESULTS/runs" > "$RESULTS/out/summary.md"
  local file
  for file in gpus.txt gpu-memory.txt cpus.txt host-load.txt runs/ledger.jsonl; do
    if [ -f "$RESULTS/$file" ]; then cp "$RESULTS/$file" "$RESULTS/out/"; fi
  done
  git_status
  local run
  for run in "$RESULTS"/runs/"$system"/"$benchmark"/"$scenario"/*/*/; do keep_run "$run" "$(basename "$run")"; done
  tail -c 2000000 "$RESULTS/tune-qps.log" | xz -9 > "$RESULTS/out/tune-qps.log.xz"
  log "$benchmark $scenario: $(python3 -c "import json, sys; d = json.load(sys.stdin); \
print(f\"best {d['best_qps']} qps, confirmed at full length: {d['confirmed_full_length']}\")" \
    < "$RESULTS/out/tune-qps.json" 2> /dev/null)"
  cp "$RESULTS/progress.txt" "$RESULTS/out/"
}
# The host's compile and JIT caches (vLLM's torch.compile artifacts, FlashInfer's and Triton's kernels): their
# sizes in $RESULTS/out/caches.txt and, where they pack into 40 MB or less, /tmp/gpu-caches/caches.tgz. Bring
# that back and carry it to the next lease on the same kind of GPU (.stage/cache, copied to /tmp/caches.tgz in
# a call of its own), where gpu_host.sh unpacks it before any engine starts. A cold whisper start was 166 s on
# four H100s and 41 s with the caches, most of the difference nvcc building kernels after CUDA-graph capture.
# Called once, after a script's last plan: the caches then hold every engine it started.
keep_caches() {
  local found=() dir
  for dir in .cache/vllm .cache/flashinfer .triton; do
    if [ -d ~/"$dir" ]; then found+=("$dir"); fi
  done
  mkdir -p "$RESULTS/out"
  (cd ~ && du -sh "${found[@]}" /tmp/torchinductor_*) > "$RESULTS/out/caches.txt" 2>&1
  if [ "${#found[@]}" -eq 0 ]; then return 0; fi
  mkdir -p /tmp/gpu-caches
  tar czf /tmp/gpu-caches/caches.tgz -C ~ "${found[@]}"
  if [ "$(stat -c %s /tmp/gpu-caches/caches.tgz)" -gt $((40 * 1024 * 1024)) ]; then
    rm /tmp/gpu-caches/caches.tgz
    echo "caches over 40 MB packed: not kept" >> "$RESULTS/out/caches.txt"
  fi
}
