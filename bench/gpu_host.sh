# shellcheck shell=bash
# Sourced by the GPU bench scripts after they set RESULTS: the environment on the lent host (vLLM in
# /tmp/site, the bench descriptors), the data, and the helpers that log what finished when.
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 SUBMITTER_SYSTEMS_PATH=$PWD/bench/systems
mkdir -p "$RESULTS"

source "$(dirname "${BASH_SOURCE[0]}")/gpu_helpers.sh"

# Compile and JIT caches an earlier lease on the same kind of GPU brought back (keep_caches in gpu_helpers.sh),
# carried as .stage/cache and copied to /tmp in a call of their own, as the site's parts are.
if [ -f /tmp/caches.tgz ]; then
  tar xzf /tmp/caches.tgz -C ~ && log "caches of an earlier lease unpacked"
fi
# py-spy, for profile_busy (gpu_helpers.sh), where its wheel was carried as .stage/tools.
if ! command -v py-spy > /dev/null && compgen -G ".stage/tools/py_spy-*.whl" > /dev/null; then
  python3 -m pip install -q --no-deps --target /tmp/pyspy .stage/tools/py_spy-*.whl && export PATH=$PATH:/tmp/pyspy/bin
fi
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader > "$RESULTS/gpus.txt"
# nvidia-smi's total and reserved memory beside the free and total CUDA reports (bytes), of which vLLM takes
# gpu_memory_utilization: the memory plan takes the total less the reserved share (bench/RESULTS.md, "The
# memory plan beside vLLM's own accounting").
{ nvidia-smi --query-gpu=index,memory.total,memory.reserved,memory.used --format=csv,noheader
  python3 -c "import torch; [print(i, *torch.cuda.mem_get_info(i)) for i in range(torch.cuda.device_count())]"
} > "$RESULTS/gpu-memory.txt" 2>&1
# Which CPUs are hyper-threads of one core, and the GPUs' NUMA nodes: what CPU shares are made of.
{ lscpu; lscpu --extended; nvidia-smi topo -m; } > "$RESULTS/cpus.txt" 2>&1
[ -f /tmp/synthetic-cnn-eval.json ] || submitter data synth --out /tmp/synthetic-cnn-eval.json
# llama3.1-8b's stand-in in the precision Red Hat submitted (static FP8 scales: issue 37), written every time so
# that no stand-in of another precision lingers at the path the bench descriptors name.
submitter data dummy-model --precision published --out /tmp/dummy-llama3.1-8b > /dev/null
log "data ready"
