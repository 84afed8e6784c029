#!/usr/bin/env bash
# On a lent GPU host, in the call that carries the last part: unpack vLLM and the project's dependencies
# (the xz archive of an installed site-packages folder, built here by bench/stage_site.sh, that the earlier
# calls copied to /tmp as site.00, site.01, ...) into /tmp/site, prove that it imports, and remove the parts.
# Where earlier calls also copied ray's wheel in parts (/tmp/ray.whl.0, .1, ... from .stage/ray, for the Ray
# cluster runs), it is put back together and installed beside vLLM (its dependencies are in the site already).
#
#     bash bench/unpack_site.sh && (QPS=37 setsid nohup bash bench/gpu_topology.sh llama2-70b-99.9 \
#         > /tmp/gpu-topology.log 2>&1 &); sleep 60; cat /tmp/gpu-topology/progress.txt
#
# It runs in the foreground on purpose: a job the call leaves in the background is killed when the call
# ends unless it has a session of its own (setsid), and `a && b &` puts the whole chain in the background.
# Only the long run starts detached, after this has finished.
#
# Where the call also carried FlashInfer's kernels compiled ahead of time (bench/flashinfer_aot.py, packed as
# .stage/flashinfer/flashinfer-aot.tgz), they go into the site's FlashInfer, so that the first engine start
# does not compile them.
set -euo pipefail
shopt -s nullglob
parts=(/tmp/site.[0-9]*)
if [ "${#parts[@]}" -eq 0 ]; then
  echo "no /tmp/site.NN parts: copy each .stage/site/pNN/site.NN to /tmp in its own call first" >&2
  exit 2
fi
rm -rf /tmp/site
mkdir -p /tmp/site
cat "${parts[@]}" | tar xJ -C /tmp/site
PYTHONPATH=/tmp/site python3 -c "import vllm, pydantic; print(f'vllm {vllm.__version__} in /tmp/site')"
rm -f "${parts[@]}"
kernels="$(dirname "$0")/../.stage/flashinfer/flashinfer-aot.tgz"
if [ -f "$kernels" ]; then  # a saving, never a reason for the lease's run not to start
  PYTHONPATH=/tmp/site python3 "$(dirname "$0")/flashinfer_aot.py" install "$kernels" \
    || echo "FlashInfer's pack not installed: FlashInfer compiles on first use" >&2
fi

ray_parts=(/tmp/ray.whl.[0-9]*)
if [ "${#ray_parts[@]}" -gt 0 ]; then
  wheel=/tmp/ray-2.60.0-cp312-cp312-manylinux2014_x86_64.whl  # pip reads the version and tags from the name
  cat "${ray_parts[@]}" > "$wheel"
  python3 -m pip install -q --no-deps --target /tmp/site "$wheel"
  PYTHONPATH=/tmp/site python3 -c "import ray; print(f'ray {ray.__version__} in /tmp/site')"
  rm -f "${ray_parts[@]}" "$wheel"
fi
