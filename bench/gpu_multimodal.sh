#!/usr/bin/env bash
# whisper and qwen3-vl-235b-a22b on one lent GPU: dummy weights in model folders with the real processors and
# tokenizers (bench/multimodal_model_folders.py, built on the developer's machine and carried in
# .stage/mm: whisper-large-v3 whole, Qwen3-VL with 24 of its 94 text layers in FP8, since the whole model needs
# two to four H200), synthetic data with each benchmark's profile, short (--smoke) runs of every mode through
# `submitter run-all`, round v6.1. Run from the checkout on the host after vLLM is in /tmp/site:
#   bash bench/gpu_multimodal.sh BENCHMARK [more run-all options, e.g. --scenario Offline]
set -uo pipefail
benchmark=$1; shift
export RESULTS=/tmp/gpu-multimodal
source bench/gpu_host.sh
# The evaluators' own dependencies (pure Python but rapidfuzz), not in the vLLM set.
[ -d /tmp/site/whisper_normalizer ] || pip install -q --no-deps --target /tmp/site .stage/mm/wheels/*.whl
mkdir -p /tmp/mm && cp -r .stage/mm/whisper-large-v3 .stage/mm/qwen3-vl-24-layers /tmp/mm/
case $benchmark in
  whisper) data=/tmp/whisper-synthetic/dev-all-repack.json samples=300 ;;
  qwen3-vl-235b-a22b) data=/tmp/qwen3-vl-synthetic samples=300 ;;
esac
mkdir -p "$(dirname "$data")"
[ -e "$data" ] || timed submitter data synth --benchmark "$benchmark" --round v6.1 --samples "$samples" --out "$data"
timed submitter run-all --system gpu_multimodal_dummy --benchmark "$benchmark" --smoke --runs-dir "$RESULTS/runs" --json "$@" \
  > "$RESULTS/$benchmark.json"
python3 bench/summarize_runs.py "$RESULTS/runs" > "$RESULTS/summary.md"
log "done $benchmark"
