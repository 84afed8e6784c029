#!/usr/bin/env bash
# llama2-70b, mixtral-8x7b and llama3.1-405b on one lent GPU: dummy FP8 weights (405b with 16 of its 126
# layers: the whole model needs eight GPUs), synthetic data with each benchmark's length profile, short
# (--smoke) runs of Offline (and Server) in every mode through `submitter run-all`, round v6.0.
# Run from the checkout on the host after vLLM is in /tmp/site and the round's LoadGen wheel is carried
# in .stage/loadgen (here: pip download --no-deps --only-binary :all: --python-version 3.12
# --platform manylinux_2_28_x86_64 -d .stage/loadgen mlcommons-loadgen==6.0.15):
#   bash bench/gpu_llms.sh BENCHMARK [more run-all options, e.g. --scenario Offline]
set -uo pipefail
benchmark=$1; shift
export RESULTS=/tmp/gpu-llms
source bench/gpu_host.sh
export SUBMITTER_LOADGEN_DIR=/tmp/loadgen
[ -d /tmp/loadgen/6.0.15 ] || python3 -m pip install -q --no-deps --target /tmp/loadgen/6.0.15 .stage/loadgen/*.whl
case $benchmark in
  llama2-70b-99) model=/tmp/dummy-llama2-70b-fp8 data=/tmp/openorca-synthetic.pkl samples=1000 layers=() ;;
  mixtral-8x7b) model=/tmp/dummy-mixtral-8x7b-fp8 data=/tmp/mixtral-synthetic.pkl samples=1000 layers=() ;;
  llama3.1-405b) model=/tmp/dummy-llama3.1-405b-16-layers-fp8 data=/tmp/llama3.1-405b-synthetic.pkl samples=32 layers=(--layers 16) ;;
esac
timed submitter data dummy-model --benchmark "$benchmark" --precision fp8 "${layers[@]}" --out "$model"
timed submitter data synth --benchmark "$benchmark" --round v6.0 --samples "$samples" --out "$data"
timed submitter run-all --system gpu_llm_dummy --benchmark "$benchmark" --smoke --runs-dir "$RESULTS/runs" --json "$@" \
  > "$RESULTS/$benchmark.json"
python3 bench/summarize_runs.py "$RESULTS/runs" > "$RESULTS/summary.md"
log "done $benchmark"
