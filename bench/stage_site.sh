#!/usr/bin/env bash
# Here, before a lease: turn the wheels ../shared/device/stage-vllm.sh staged (.stage/partNN, the tar of
# vLLM and the project's dependencies for the host's Python 3.12) into the parts bench/unpack_site.sh puts
# back together on the host: the packages installed into one site-packages folder, xz-compressed, split into
# .stage/site/pNN/site.NN. xz makes the installed site about a quarter smaller than the wheels, so fewer
# calls carry it, and the host unpacks it in about a minute instead of running pip. Also fetches py-spy's
# wheel into .stage/tools (bench/gpu_host.sh installs it for the busy-process profiles).
#
#     bash ../shared/device/stage-vllm.sh && bash bench/stage_site.sh
#
# PART_MB (default 56) keeps each part plus the checkout under one call's 64 MiB. It prints the calls.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
stage=$root/.stage
shopt -s nullglob
wheel_parts=("$stage"/part[0-9]*/part[0-9]*)
if [ "${#wheel_parts[@]}" -eq 0 ]; then
  echo "no .stage/partNN: run bash ../shared/device/stage-vllm.sh first" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/wheels" "$work/site"
cat "${wheel_parts[@]}" | tar x -C "$work/wheels"
# The host's interpreter, not this one's: pip installs for CPython 3.12 on the host's glibc (2.35).
platforms=()
for tag in manylinux_2_{35,34,31,28,27,26,24,17,5} manylinux2014 manylinux1 linux; do
  platforms+=(--platform "${tag}_x86_64")
done
python3 -m pip install -q --no-index --no-deps --no-compile --only-binary :all: --python-version 3.12 \
  --implementation cp "${platforms[@]}" --target "$work/site" "$work/wheels"/*.whl
echo "installed $(ls "$work/wheels" | wc -l) wheels: $(du -sh "$work/site" | cut -f1)"

rm -rf "$stage/site"
mkdir -p "$stage/site"
tar c -C "$work/site" . | xz -T0 -6 | split -b "${PART_MB:-56}M" -d -a 2 - "$work/site."
calls=()
for part in "$work"/site.[0-9]*; do
  name=$(basename "$part")
  dir=$stage/site/p${name#site.}
  mkdir -p "$dir" && mv "$part" "$dir/"
  calls+=("carry [\".stage/site/p${name#site.}\"]: cp .stage/site/p${name#site.}/$name /tmp/")
done

rm -rf "$stage/tools"
python3 -m pip download -q --no-deps --only-binary :all: --python-version 3.12 --implementation cp \
  "${platforms[@]}" -d "$stage/tools" py-spy \
  || echo "py-spy's wheel not fetched: the leases run without busy-process profiles" >&2

echo "staged the site in ${#calls[@]} parts under .stage/site; one call each, back to back:"
printf '  %s\n' "${calls[@]}"
echo "the last call carries its part with .stage/tools and runs bash bench/unpack_site.sh first"
