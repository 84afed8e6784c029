#!/usr/bin/env bash
# The vLLM engines for real on a GPU host: dummy FP8 Llama-3.1-8B weights, synthetic CNN/DailyMail-shaped
# data, short (--smoke) LoadGen runs of every scenario and mode, and the openai engine against `vllm serve`.
# Run from the checkout on the host, after vLLM is installed into /tmp/site (../shared/device/README.md):
#   setsid nohup bash bench/gpu_smoke.sh > /tmp/gpu-smoke.log 2>&1 &
# Results: /tmp/gpu-smoke/runs/**/run.json and the LoadGen logs beside them.
set -uo pipefail
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
export RESULTS=/tmp/gpu-smoke
mkdir -p "$RESULTS/systems"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -m submitter data synth --out /tmp/synthetic-cnn-eval.json
python3 -m submitter data dummy-model --precision published --out /tmp/dummy-llama3.1-8b
export SUBMITTER_SYSTEMS_PATH=$PWD/bench/systems:$RESULTS/systems

run() {
  local started=$SECONDS
  python3 -m submitter run --runs-dir "$RESULTS/runs" --smoke "$@"
  echo "== exit $? after $((SECONDS - started)) s: $*"
}
run --system gpu_dummy --scenario Offline --mode performance
run --system gpu_dummy --scenario Server --mode performance
run --system gpu_dummy --scenario Interactive --mode performance
run --system gpu_dummy --scenario Offline --mode TEST06
run --system gpu_dummy --scenario Server --mode TEST06
run --system gpu_dummy --scenario Offline --mode accuracy
run --system gpu_dummy --scenario Server --mode accuracy

# The openai engine against a real `vllm serve` of the same dummy model.
python3 - <<'PY'
import json, os
d = json.load(open("bench/systems/gpu_dummy.json"))
d["id"] = "gpu_dummy_openai"
setup = d["benchmarks"]["llama3.1-8b"]
setup["backend"] = "openai"
setup["engine_args"] = {"endpoints": ["http://127.0.0.1:8000"], "extra_body": {"ignore_eos": True}}
for scenario in setup["scenarios"].values():
    scenario.pop("backend", None)
    scenario.pop("engine_args", None)
json.dump(d, open(os.environ["RESULTS"] + "/systems/gpu_dummy_openai.json", "w"), indent=1)
PY
python3 -m vllm.entrypoints.openai.api_server --model /tmp/dummy-llama3.1-8b --load-format dummy \
  --skip-tokenizer-init --max-model-len 2668 --port 8000 > /tmp/vllm-serve.log 2>&1 &
server=$!
for _ in $(seq 1 120); do curl -sf http://127.0.0.1:8000/v1/models > /dev/null && break; sleep 2; done
run --system gpu_dummy_openai --scenario Server --mode performance
kill $server
python3 bench/summarize_runs.py "$RESULTS/runs"
echo "== gpu smoke done"
