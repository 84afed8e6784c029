#!/usr/bin/env bash
# Here, before a lease whose engines start tensor-parallel: FlashInfer's first-start kernels compiled on this
# CPU machine for Hopper (bench/flashinfer_aot.py build) into .stage/flashinfer/flashinfer-aot.tgz, which the
# call carrying the site's last part also carries and bench/unpack_site.sh installs. It saves about 3 minutes
# of every such lease's first engine start. About 10 minutes on 2 cores (6 of them nvcc), 1.1 GB of memory.
#
#     bash bench/stage_flashinfer.sh
#
# Needs .stage/site (bench/stage_site.sh: the host's FlashInfer), a Python 3.12 (PYTHON312, default python3.12
# on PATH, else pyenv's in ~/.pyenv) and CUDA 13's nvcc (CUDA_HOME, default /usr/local/cuda-13.0). FlashInfer imports torch
# and a few packages the host's Python has beside the staged site: they go into a venv of their own at the
# versions of ../shared/device/device-freeze.txt, with pip's nvidia-curand for the headers the toolkit lacks.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
freeze=$root/../shared/device/device-freeze.txt
cuda_home=${CUDA_HOME:-/usr/local/cuda-13.0}
is_312() { "$1" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' 2> /dev/null; }
python=${PYTHON312:-}
if [ -z "$python" ]; then  # a pyenv shim named python3.12 may be on PATH and fail: take one that runs
  for candidate in python3.12 "$HOME"/.pyenv/versions/3.12.*/bin/python3.12; do
    if is_312 "$candidate"; then python=$candidate && break; fi
  done
fi
shopt -s nullglob
parts=("$root"/.stage/site/p[0-9]*/site.[0-9]*)
if [ "${#parts[@]}" -eq 0 ]; then
  echo "no .stage/site parts: run bash ../shared/device/stage-vllm.sh && bash bench/stage_site.sh first" >&2
  exit 2
fi
if [ ! -x "$cuda_home/bin/nvcc" ]; then
  echo "no nvcc in $cuda_home/bin: set CUDA_HOME to a CUDA 13 toolkit" >&2
  exit 2
fi
if [ -z "$python" ] || ! is_312 "$python"; then
  echo "no Python 3.12 (the host's): set PYTHON312 to one" >&2
  exit 2
fi
if [ ! -f "$freeze" ]; then
  echo "no $freeze: the host's package versions are read from it" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/site"
cat "${parts[@]}" | tar xJ -C "$work/site"
"$python" -m venv "$work/venv"
mapfile -t pinned < <(grep -E '^(torch|filelock|numpy|packaging|nvidia-ml-py|tqdm|requests|setuptools|ninja|nvidia-curand)==' "$freeze")
"$work/venv/bin/pip" install -q "${pinned[@]}"
# The PATH entry gives FlashInfer's build the venv's ninja; its build folder is ours, not ~/.cache/flashinfer,
# so that nothing built before is taken for this build's.
PATH=$work/venv/bin:$PATH CUDA_HOME=$cuda_home PYTHONPATH=$work/site FLASHINFER_WORKSPACE_BASE=$work \
  NVCC_APPEND_FLAGS=-I$work/venv/lib/python3.12/site-packages/nvidia/cu13/include \
  "$work/venv/bin/python" "$root/bench/flashinfer_aot.py" build --out "$root/.stage/flashinfer/flashinfer-aot.tgz"
echo "carry .stage/flashinfer with the site's last part; bench/unpack_site.sh installs it"
