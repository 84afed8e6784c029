#!/usr/bin/env bash
# Waits on a lent host for a lease script started detached (gpu_topology.sh, gpu_llama8b_scenarios.sh, ...) and
# brings back what it has done so far, in one device call:
#   bash bench/lease_wait.sh /tmp/gpu-topology [SECONDS]
# It returns once the script has ended or SECONDS (default 560, inside a call's 10 minutes) have passed, prints
# the script's progress file, the running test's progress.json and the host's last load reading, and, where $OUT
# is set, packs the folder's files worth bringing back into $OUT/NAME.tgz: every out/ folder, the progress and
# load files, each run's run.json, progress.json and summary, and the last 2 MB of each log, compressed.
#
# A lent host goes back 30 s after a call ends. The twelfth lease (bench/RESULTS.md) lost a gpt-oss-120b run
# 3 minutes into it because its next poll went out a little later than that: the host was bare. So every call
# after the one that starts the run goes out in the same batch of calls, each this script, and each brings the
# latest state back, which stays here even if a later call finds the host gone:
#   call 5: ... (setsid nohup bash bench/gpu_topology.sh B > /tmp/gpu-topology.log 2>&1 &); bash bench/lease_wait.sh /tmp/gpu-topology 500
#   calls 6, 7, ...: bash bench/lease_wait.sh /tmp/gpu-topology   (as many as the lease's minutes hold)
# A call after the script ended returns at once with the final files.
set -uo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: bash bench/lease_wait.sh RESULTS_DIR [SECONDS]" >&2
  exit 2
fi
results=${1%/} limit=${2:-560}
if ! [[ $limit =~ ^[0-9]+$ ]]; then
  echo "lease_wait: SECONDS must be a whole number of seconds, not '$limit'" >&2
  exit 2
fi
# The call that starts the script may run this right after: the script makes its folder in its first seconds.
for _ in $(seq 1 $((limit < 10 ? limit : 10))); do
  if [ -d "$results" ]; then break; fi
  sleep 1
done
if [ ! -d "$results" ]; then
  echo "lease_wait: no folder $results: the lease script makes it as it starts; its own log (the file its output" \
    "was sent to) says why it did not" >&2
  exit 2
fi

# The script's process id, written by gpu_helpers.sh when the script sourced it.
pid=$(cat "$results/script.pid" 2> /dev/null)
running() { [ -n "$pid" ] && kill -0 "$pid" 2> /dev/null; }
started=$SECONDS
while running && [ $((SECONDS - started)) -lt "$limit" ]; do sleep 2; done
if running; then
  echo "== $results: the lease script (process $pid) is still running after $((SECONDS - started)) s"
elif [ -n "$pid" ]; then
  echo "== $results: the lease script (process $pid) has ended"
else
  echo "== $results: no script.pid, so whether its lease script still runs is unknown"
fi
tail -n 25 "$results/progress.txt" 2> /dev/null
newest=$(find "$results" -name progress.json -printf '%T@ %p\n' 2> /dev/null | sort -n | tail -1 | cut -d' ' -f2-)
if [ -n "$newest" ]; then
  echo "-- ${newest#"$results"/}: $(tr -d ' \n' < "$newest")"
fi
if [ -f "$results/host-load.txt" ]; then  # a reading begins with its time (watch_host, gpu_helpers.sh)
  echo "-- the host's last load reading:"
  tac "$results/host-load.txt" | sed '/^[0-9][0-9]:[0-9][0-9]:[0-9][0-9]$/q' | tac
fi

if [ -n "${OUT:-}" ]; then
  bundle=$(mktemp -d)
  (
    cd "$results" || exit
    {
      find . -maxdepth 1 -type f \( -name '*.txt' -o -name '*.json' -o -name '*.md' \) -print0
      find . -type f \( -path '*/out/*' -o -name run.json -o -name progress.json -o -name mlperf_log_summary.txt \
        -o -name ledger.jsonl \) -print0
    } | sort -zu | xargs -0r cp --parents -t "$bundle"
    find . -name '*.log' -type f -print0 | while IFS= read -r -d '' log; do
      mkdir -p "$bundle/$(dirname "$log")"
      tail -c 2000000 "$log" | xz -6 > "$bundle/$log.tail.xz"
    done
  )
  archive="$OUT/$(basename "$results").tgz"
  tar czf "$archive" -C "$bundle" .
  rm -rf "$bundle"
  size=$(stat -c %s "$archive")
  echo "-- packed into $archive: $size bytes"
  if [ "$size" -gt $((16 * 1024 * 1024)) ]; then
    echo "lease_wait: $archive is over the 16 MiB a file brought back may have: bring back $results/out alone" >&2
  fi
fi
