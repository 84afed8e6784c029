"""FlashInfer's kernels that vLLM compiles on a Hopper host's first engine start, compiled here instead.

A lent GPU host starts bare, and FlashInfer compiles its kernels there on first use, inside the lease:
`trtllm_comm` for vLLM's all-reduce + RMSNorm fusion on every compiled tensor-parallel start (173 s for
qwen3-vl on four H100s, 3 min 8 s for mixtral on two), `sampling` for the top-k/top-p sampler (about 2
minutes of qwen3-vl's eager start). nvcc needs no GPU: this compiles them on a CPU machine for the lent GPUs'
architecture into the layout FlashInfer loads before it compiles anything (`flashinfer/data/aot/<name>/
<name>.so`, its own ahead-of-time folder), packed with a manifest of what built them.

    # here, with the staged site's Python (the host's FlashInfer), CUDA 13's nvcc, and cuRAND's headers
    # (pip's nvidia-curand) where the toolkit has none:
    NVCC_APPEND_FLAGS=-I$VENV/lib/python3.12/site-packages/nvidia/cu13/include \\
    CUDA_HOME=/usr/local/cuda-13.0 PYTHONPATH=/tmp/wprof/site $VENV/bin/python \\
        bench/flashinfer_aot.py build --out .stage/flashinfer/flashinfer-aot.tgz
    # on the host, in the call that carries .stage/flashinfer (bench/unpack_site.sh does it):
    PYTHONPATH=/tmp/site python3 bench/flashinfer_aot.py install .stage/flashinfer/flashinfer-aot.tgz

`install` puts the kernels in place only where the FlashInfer version and the GPUs' architecture are the
ones they were built for; otherwise it says why and leaves FlashInfer to compile, as without it.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

MANIFEST = "manifest.json"
# The modules the leases' first engine starts were seen compiling (bench/RESULTS.md: mixtral, qwen3-vl).
MODULES = ("trtllm_comm", "sampling")


def _generators() -> dict[str, Callable[[], Any]]:
    from flashinfer.jit.comm import gen_trtllm_comm_module
    from flashinfer.jit.sampling import gen_sampling_module

    return {"trtllm_comm": gen_trtllm_comm_module, "sampling": gen_sampling_module}


def _nvcc_version(cuda_home: Path) -> str:
    shown = subprocess.run([f"{cuda_home}/bin/nvcc", "--version"], capture_output=True, text=True, check=True)
    # "Cuda compilation tools, release 13.0, V13.0.88"
    return next(line for line in shown.stdout.splitlines() if "release" in line)


def _link_against_a_driver_stub(spec: Any) -> None:
    """FlashInfer links its modules with -lcuda, the GPU driver, which a CPU machine lacks (and a toolkit
    without its stubs folder too). Compile the objects, then give the linker a stand-in libcuda.so.1 that
    defines the driver functions they call: the module then loads the host's real driver by that name."""
    spec.write_ninja()
    ninja = ["ninja", "-C", str(spec.build_dir), "-f", str(spec.ninja_path)]
    targets = subprocess.run([*ninja, "-t", "targets", "all"], capture_output=True, text=True, check=True)
    outputs = [line.split(":")[0] for line in targets.stdout.splitlines()]
    objects = [output for output in outputs if output.endswith(".o")]
    subprocess.run([*ninja, *objects], check=True)
    named = subprocess.run(["nm", "-u", "--format=just-symbols", *objects], capture_output=True, text=True)
    calls = sorted({name for name in named.stdout.split() if re.fullmatch(r"cu[A-Z]\w*", name)})
    stub = Path(tempfile.mkdtemp(prefix="libcuda-stub-"))
    source = stub / "libcuda.c"
    source.write_text("".join(f"void {name}(void) {{}}\n" for name in calls))
    subprocess.run(
        ["cc", "-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o", str(stub / "libcuda.so"), str(source)],
        check=True,
    )
    os.environ["LIBRARY_PATH"] = os.pathsep.join(filter(None, [str(stub), os.environ.get("LIBRARY_PATH")]))
    print(f"{spec.name}: linked against a stand-in libcuda.so.1 ({len(calls)} driver calls)")


def build(modules: list[str], arch: str, out: Path) -> None:
    import flashinfer

    cuda_home = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))  # where FlashInfer's JIT finds nvcc
    generators = _generators()
    manifest = {
        "flashinfer": flashinfer.__version__,
        "cuda_arch_list": arch,
        "nvcc": _nvcc_version(cuda_home),
        "modules": modules,
        "built": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    with tarfile.open(partial, "w:gz") as packed:
        for name in modules:
            spec = generators[name]()
            began = time.monotonic()
            if not (cuda_home / "lib64" / "stubs" / "libcuda.so").exists():
                _link_against_a_driver_stub(spec)
            spec.build(verbose=False)
            library = spec.jit_library_path
            print(f"{name}: built in {time.monotonic() - began:.0f} s, {library.stat().st_size / 1e6:.1f} MB")
            packed.add(library, arcname=f"{name}/{name}.so")
        text = json.dumps(manifest, indent=2).encode()
        entry = tarfile.TarInfo(MANIFEST)
        entry.size = len(text)
        packed.addfile(entry, io.BytesIO(text))
    partial.replace(out)
    print(f"{out}: {out.stat().st_size / 1e6:.1f} MB, {json.dumps(manifest)}")


def _gpu_arches() -> set[str]:
    try:
        listed = subprocess.run(
            ["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"], capture_output=True, text=True
        )
    except FileNotFoundError:
        return set()
    if listed.returncode != 0:
        return set()
    return {line.strip() for line in listed.stdout.splitlines() if line.strip()}


def install(packed_path: Path) -> int:
    import flashinfer
    from flashinfer.jit import env as jit_env

    aot_dir = jit_env.FLASHINFER_AOT_DIR  # where FlashInfer looks before it compiles (JitSpec.aot_path)
    with tarfile.open(packed_path) as packed:
        manifest = json.load(packed.extractfile(MANIFEST))  # type: ignore[arg-type]
        built_for = {manifest["cuda_arch_list"].rstrip("af")}  # "9.0a" is built for compute capability 9.0
        if manifest["flashinfer"] != flashinfer.__version__:
            mismatch = f"FlashInfer {manifest['flashinfer']}, this is {flashinfer.__version__}"
        elif (arches := _gpu_arches()) != built_for:
            mismatch = f"compute capability {sorted(built_for)}, these GPUs are {sorted(arches)}"
        else:
            mismatch = ""
        if mismatch:
            print(f"{packed_path}: built for {mismatch}; not installed, FlashInfer compiles on first use")
            return 0
        kernels = [member for member in packed if member.name != MANIFEST]
        packed.extractall(aot_dir, members=kernels, filter="data")
    missing = [name for name in manifest["modules"] if not (aot_dir / name / f"{name}.so").exists()]
    if missing:
        print(f"{packed_path}: FlashInfer does not see {missing} in {aot_dir}", file=sys.stderr)
        return 1
    modules = ", ".join(manifest["modules"])
    print(f"FlashInfer {flashinfer.__version__}: {modules} in {aot_dir}, loaded instead of compiled")
    print(f"  (built {manifest['built']}, {manifest['nvcc']})")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    actions = parser.add_subparsers(dest="action", required=True)
    building = actions.add_parser("build", help="compile the modules here and pack them")
    building.add_argument("--out", type=Path, required=True, help="the .tgz to write")
    building.add_argument("--arch", default="9.0a", help="FLASHINFER_CUDA_ARCH_LIST (H100 and H200: 9.0a)")
    building.add_argument("--modules", nargs="+", choices=MODULES, default=list(MODULES))
    installing = actions.add_parser("install", help="put packed modules into this site's FlashInfer")
    installing.add_argument("packed", type=Path)
    args = parser.parse_args()
    if args.action == "build":
        # FlashInfer reads the target architectures once, when it is first imported: here, just below.
        os.environ["FLASHINFER_CUDA_ARCH_LIST"] = args.arch
    try:
        import flashinfer  # noqa: F401
    except ImportError as exc:
        parser.error(f"FlashInfer does not import here ({exc}): put the staged site on PYTHONPATH")
    if args.action == "build":
        nvcc = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "bin" / "nvcc"
        if not nvcc.is_file():
            parser.error(f"no nvcc at {nvcc}: set CUDA_HOME to a CUDA 13 toolkit")
        build(args.modules, args.arch, args.out)
        return 0
    if not args.packed.is_file():
        parser.error(f"no file {args.packed}: make the pack with build")
    try:
        return install(args.packed)
    except (tarfile.TarError, KeyError, json.JSONDecodeError) as exc:
        parser.error(f"{args.packed} is no pack of this script's ({type(exc).__name__}): make one with build")
    except OSError as exc:
        print(f"cannot install {args.packed}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
