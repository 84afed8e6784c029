#!/usr/bin/env bash
# Stage the demo's --smoke runs of one benchmark as a closed-division tree and check it with submitter
# and with the official checker; prints each checker's error messages, numbers masked, counted.
#   bash bench/llm_trees_vs_official.sh BENCHMARK ROUND OFFICIAL_INFERENCE_CHECKOUT
# Run it where `submitter run-all --system demo_cpu --round ROUND --benchmark BENCHMARK --smoke` ran.
set -uo pipefail
benchmark=$1 round=$2 official=$3
systems=$(mktemp -d)
python3 - "$systems" <<'PY'
import json, sys
from submitter.systems.catalog import descriptor_path
descriptor = json.loads(descriptor_path("demo_cpu").read_text())
descriptor["system"]["division"] = "closed"  # the closed division: accuracy targets and audits are checked
open(f"{sys.argv[1]}/demo_cpu.json", "w").write(json.dumps(descriptor, indent=1))
PY
tree=tree-$benchmark-$round
rm -rf "$tree" "$tree-staging"
SUBMITTER_SYSTEMS_PATH=$systems submitter stage --system demo_cpu --round "$round" --benchmark "$benchmark" \
  --allow-not-submittable --allow-trials --out "$tree" > /dev/null 2> stage.err
echo "== submitter check (stage's own check): $(tail -1 stage.err)"
submitter check "$tree" --round "$round" --format json 2>/dev/null \
  | python3 -c "import json,sys,collections; f=json.load(sys.stdin)['findings']; print(collections.Counter(x['rule'] for x in f if x['severity']=='error'))"
echo "== official checker --version $round"
(tree_path=$(realpath "$tree"); cd "$official/tools/submission" && python3 -m submission_checker.main --input "$tree_path" --version "$round" 2>&1) \
  | grep -E 'ERROR|SUMMARY' | grep -v 'Some .* checks' | sed -E 's/.*(ERROR|WARNING)\] //; s#[^ ]*/results/[^/]*/##; s/[0-9]+(\.[0-9]+)?/N/g' \
  | sort | uniq -c
