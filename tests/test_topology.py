"""Topologies from the descriptor, proven before an engine starts: which GPUs each replica gets, that they
are the described kind, that the groups do not overlap, and that the model fits each group's memory."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pandas as pd
import pytest
from conftest import run_cli, write_json
from harness_helpers import fake_nvidia_smi
from test_descriptors import descriptor_data, errors, validate

from harness.model_size import Precision, model_size
from harness.stand_in_models import stand_in_config
from harness.topology import GIB, check_fits, described_gpus, memory_fit, place, replica_slices
from submitter.errors import SubmitterError
from submitter.fileformats.run_record import Gpu
from submitter.systems.descriptor import BenchmarkSetup

H100 = ("NVIDIA H100 80GB HBM3", 81559)
H200 = ("NVIDIA H200", 143771)
L40S = ("NVIDIA L40S", 46068)
SXM_SYSTEM = {"accelerator_model_name": "NVIDIA H100-SXM-80GB", "accelerator_memory_capacity": "80 GB"}


def host(kind: tuple[str, int], count: int) -> list[Gpu]:
    name, mib = kind
    return [
        Gpu(index=n, name=name, memory=f"{mib} MiB", driver="580.159.04", bus_id=f"00000000:{n:02X}:00.0")
        for n in range(count)
    ]


def setup(**fields: object) -> BenchmarkSetup:
    return BenchmarkSetup.model_validate(
        {"backend": "vllm", "model_path": "m", "scenarios": {"Offline": {}}, **fields}
    )


def test_replicas_take_consecutive_groups_unless_the_descriptor_names_them() -> None:
    two_by_two = setup(tensor_parallel_size=2, replicas=2)
    placement = place(two_by_two, host(H100, 4), SXM_SYSTEM, "here")
    assert [[gpu.index for gpu in group] for group in placement.groups] == [[0, 1], [2, 3]]
    assert placement.visible_devices == "0,1,2,3"
    assert placement.records()[1].bus_ids == ["00000000:02:00.0", "00000000:03:00.0"]
    assert placement.describe() == "2 replica(s) of TP=2 on GPUs 0,1 | 2,3 (4x NVIDIA H100 80GB HBM3)"
    # Across PCIe switches, say: each pair under its own switch.
    chosen = place(
        setup(tensor_parallel_size=2, replicas=2, gpu_groups=[[0, 2], [1, 3]]), host(H100, 4), {}, ""
    )
    assert chosen.visible_devices == "0,2,1,3"
    # The engines' own rule (replica r: the r-th run of a group's size) lands each replica on its group.
    assert replica_slices(chosen.visible_devices.split(","), 2, 2) == [["0", "2"], ["1", "3"]]


def test_too_few_gpus_another_kind_or_size_are_refused_before_the_engine_starts() -> None:
    with pytest.raises(
        SubmitterError, match=r"2 replica\(s\) x 4 \(tensor\) x 1 \(pipeline\) = 8 GPU\(s\) .* 4 can"
    ):
        place(setup(tensor_parallel_size=4, replicas=2), host(H100, 4), SXM_SYSTEM, "here")
    pcie = {"accelerator_model_name": "NVIDIA H100-PCIe-80GB", "accelerator_memory_capacity": "80 GB"}
    with pytest.raises(
        SubmitterError,
        match=r"GPU 0 is a NVIDIA H100 80GB HBM3, but the descriptor describes NVIDIA H100-PCIe",
    ):
        place(setup(), host(H100, 1), pcie, "here")
    h200_described = {
        "accelerator_model_name": "NVIDIA H200-SXM-141GB",
        "accelerator_memory_capacity": "141 GB",
    }
    assert place(setup(), host(H200, 1), h200_described, "here").gpus[0].name == "NVIDIA H200"
    bigger = {"accelerator_model_name": "NVIDIA H100-SXM-80GB", "accelerator_memory_capacity": "94 GB"}
    with pytest.raises(SubmitterError, match=r"GPU 0 has 79.6 GiB, but the descriptor describes 94 GB"):
        place(setup(), host(H100, 1), bigger, "here")
    with pytest.raises(
        SubmitterError, match=r"gpu_groups name GPU\(s\) 4, 5, which are not among .* \(0, 1, 2, 3\)"
    ):
        place(setup(tensor_parallel_size=2, gpu_groups=[[4, 5]]), host(H100, 4), {}, "here")


def test_gpu_groups_must_partition_the_replicas(tmp_path: Path) -> None:
    data = descriptor_data()
    data["system"]["accelerators_per_node"] = "4"
    benchmark = data["benchmarks"]["llama3.1-8b"]
    benchmark.update(tensor_parallel_size=2, replicas=2, gpu_groups=[[0, 1], [2, 3]])
    assert "DESC-GPU-GROUPS" not in errors(validate(tmp_path, data))
    for broken in ([[0, 1], [1, 2]], [[0, 1]], [[0, 1], [2]], [[0, 0], [2, 3]]):
        benchmark["gpu_groups"] = broken
        findings = [f for f in validate(tmp_path, data) if f.rule == "DESC-GPU-GROUPS"]
        assert findings and all(f.severity == "error" for f in findings), broken
    benchmark["gpu_groups"] = [[0, 1], [1, 2]]
    (overlap,) = [f for f in validate(tmp_path, data) if f.rule == "DESC-GPU-GROUPS"]
    assert "GPU 1 is also in group 0" in overlap.message


def _fit(
    benchmark: str,
    gpus: list[Gpu],
    tp: int,
    replicas: int = 1,
    mean_tokens: int | None = None,
    **args: object,
):
    config, _ = stand_in_config(benchmark, precision="published")
    placement = place(setup(tensor_parallel_size=tp, replicas=replicas), gpus, {}, "")
    engine_args = {"max_model_len": 2048, "max_num_seqs": 256, "max_num_batched_tokens": 8192, **args}
    return memory_fit(model_size(config), Precision.of(config), placement, engine_args, mean_tokens)


def test_the_memory_estimate_says_which_topologies_hold_a_model() -> None:
    # llama2-70b in FP8 (about 65 GiB): TP=2 on L40S (45 GiB each) holds it, one L40S does not.
    l40s_pair = _fit(
        "llama2-70b-99", host(L40S, 4), tp=2, replicas=2, kv_cache_dtype="fp8", gpu_memory_utilization=0.92
    )
    assert l40s_pair.fits and l40s_pair.weights == pytest.approx(65.0 / 2 * GIB, rel=0.02)
    # Independently: what is left of 0.92 x 45 GiB after half the weights and the reserve, over the KV
    # cache of one 2,048-token sequence on one of two ranks (80 layers x 4 heads x 256 bytes a token).
    left = 0.92 * 46068 * (1 << 20) - l40s_pair.weights - l40s_pair.reserve
    assert l40s_pair.sequences == int(left // (2048 * 80 * 4 * 256))
    assert not _fit("llama2-70b-99", host(L40S, 1), tp=1).fits
    # With the data set's mean sequence: the same KV cache over sequences of 500 tokens.
    with_mean = _fit(
        "llama2-70b-99", host(L40S, 4), tp=2, replicas=2, mean_tokens=500, kv_cache_dtype="fp8",
        gpu_memory_utilization=0.92,
    )  # fmt: skip
    assert with_mean.mean_sequences == int(left // (500 * 80 * 4 * 256)) > with_mean.sequences
    shown = f"{with_mean.mean_sequences:,} at the data set's mean of 500 (max_num_seqs 256)"
    assert shown in with_mean.describe() and "data set" not in l40s_pair.describe()
    assert with_mean.record().mean_sequences == with_mean.mean_sequences and l40s_pair.mean_sequences is None
    # llama3.1-405b in FP8 (about 382 GiB): four H200s hold it, four H100s do not.
    assert _fit("llama3.1-405b", host(H200, 4), tp=4, max_model_len=20000).fits
    too_small = _fit("llama3.1-405b", host(H100, 4), tp=4, max_model_len=20000)
    assert not too_small.fits and too_small.kv_cache < 0
    assert "KV cache -" in too_small.describe()


def test_deepseek_r1_at_full_depth_needs_eight_h200s() -> None:
    """All 61 layers in the published FP8 blocks: about 627 GiB of weights, the KV cache of latent attention
    kept whole on every rank. Eight H200s hold it with room for sequences of the benchmark's full length;
    four cannot hold even the weights, and the refusal says how many GPUs would."""
    config, _ = stand_in_config("deepseek-r1", precision="published")
    weights = model_size(config).weight_bytes(Precision.of(config))
    budget = 0.92 * H200[1] * (1 << 20)
    assert 4 * budget < weights < 8 * budget
    eight = _fit("deepseek-r1", host(H200, 8), tp=8, max_model_len=23200, gpu_memory_utilization=0.92)
    assert eight.fits and eight.weights == pytest.approx(weights / 8, rel=0.01)
    # Every rank keeps each token's 512 + 64 latent vector in 61 layers, in 16 bits.
    assert eight.sequences == int((budget - eight.weights - eight.reserve) // (23200 * 61 * 576 * 2))
    four = _fit("deepseek-r1", host(H200, 4), tp=4, max_model_len=23200, gpu_memory_utilization=0.92)
    assert not four.fits
    with pytest.raises(SubmitterError, match=r"weights alone .* it spans 4 now") as refusal:
        check_fits(four, "here")
    # The GPUs it asks for are the fewest whose room, once the reserve is taken, holds all the weights.
    needed = int(re.search(r"at least (\d+) GPUs", str(refusal.value)).group(1))
    room = budget - four.reserve
    assert (needed - 1) * room < weights <= needed * room


def test_described_gpus_are_what_the_system_description_says() -> None:
    gpus = described_gpus({**SXM_SYSTEM, "accelerators_per_node": "8", "number_of_nodes": "1"})
    assert len(gpus) == 8 and gpus[7].index == 7 and gpus[0].memory_bytes == 80 * GIB


@pytest.mark.parametrize(
    ("system", "shape"),
    [
        ("dell_r760xa_l40s", "2 replica(s) of TP=2 on GPUs 0,1 | 2,3 (4x NVIDIA L40S)"),
        (
            "supermicro_as4125gs_h100pcie",
            "2 replica(s) of TP=4 on GPUs 0,1,2,3 | 4,5,6,7 (8x NVIDIA H100-PCIe-80GB)",
        ),
        (
            "azure_nd_h100_v5",
            "4 replica(s) of TP=2 on GPUs 0,1 | 2,3 | 4,5 | 6,7 (8x NVIDIA H100-SXM-80GB)",
        ),
        (
            "azure_nd_h200_v5",
            "8 replica(s) of TP=1 on GPUs 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 (8x NVIDIA H200-SXM-141GB)",
        ),
    ],
)
def test_shipped_multi_gpu_descriptors_plan_for_their_host(tmp_path: Path, system: str, shape: str) -> None:
    """`run-all --dry-run --described-gpus` proves placement and memory on the descriptor's own GPUs, with
    a full-depth stand-in in the published precision and a trial dataset (round v6.1's llama2-70b)."""
    command = _dry_run_on_described_gpus(tmp_path, system)
    result = run_cli(*command, "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    runs = json.loads(result.stdout)["runs"]
    topologies = [run["topology"] for run in runs]
    assert len(topologies) == 3 and all(topology == topologies[0] for topology in topologies)
    # The engine sees the GPUs placed; vLLM's engine core starts with one torch thread (harness.cpu_shares).
    placed = ",".join(str(gpu) for replica in topologies[0]["replicas"] for gpu in replica["gpus"])
    environments = [run["environment"] for run in runs]
    assert all(
        env["OMP_NUM_THREADS"] == "1" and env["CUDA_VISIBLE_DEVICES"] == placed for env in environments
    )
    estimate = topologies[0]["memory_estimate"]
    assert estimate["sequences"] >= 1 and estimate["weights_gib"] > 0
    # The synthetic records carry their answers' lengths: the estimate also counts sequences of their mean.
    records = pd.read_pickle(tmp_path / "data.pkl")
    mean = records["tok_input"].map(len).mean() + records["tok_output_length"].mean()
    assert estimate["mean_sequence_tokens"] == round(mean)
    assert estimate["mean_sequences"] > estimate["sequences"]  # the mean is far below max_model_len
    assert f"llama2-70b-99.9 Offline: {shape}; per GPU" in run_cli(*command, cwd=tmp_path).stdout


def test_dummy_weights_on_data_without_answer_lengths_are_named_in_the_plan(tmp_path: Path) -> None:
    """Random weights generate each sample's recorded answer length; a data set without those lengths makes
    every answer max_tokens long (llama2-70b: 1,024 where the benchmark's answers average 294.45 tokens),
    which the plan says before the engine starts."""
    command = _dry_run_on_described_gpus(tmp_path, "dell_r760xa_l40s")
    note = "every sample generates 1,024 tokens, 3.5x the benchmark's mean answer (294)"
    with_lengths = run_cli(*command, cwd=tmp_path)
    assert with_lengths.returncode == 0, with_lengths.stderr
    assert note not in with_lengths.stdout + with_lengths.stderr
    records = pd.read_pickle(tmp_path / "data.pkl")
    records.drop(columns=["tok_output_length"]).to_pickle(tmp_path / "data.pkl")
    without = run_cli(*command, cwd=tmp_path)
    assert without.returncode == 0, without.stderr
    assert note in without.stdout


def test_a_descriptor_sets_its_engine_threads_itself(tmp_path: Path) -> None:
    descriptor = descriptor_data("dell_r760xa_l40s")
    descriptor["id"] = "l40s_eight_threads"
    for setup in descriptor["benchmarks"].values():
        setup["environment"] = {"OMP_NUM_THREADS": "8", "TOKENIZERS_PARALLELISM": "false"}
    path = write_json(tmp_path / "l40s_eight_threads.json", descriptor)
    result = run_cli(*_dry_run_on_described_gpus(tmp_path, str(path)), "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    environments = [run["environment"] for run in json.loads(result.stdout)["runs"]]
    assert environments and all(
        environment
        == {"OMP_NUM_THREADS": "8", "TOKENIZERS_PARALLELISM": "false", "CUDA_VISIBLE_DEVICES": "0,1,2,3"}
        for environment in environments
    )


def _dry_run_on_described_gpus(tmp_path: Path, system: str) -> tuple[str, ...]:
    """`run-all --dry-run --described-gpus` of the system's llama2-70b-99.9 Offline runs in round v6.1, on a
    full-depth stand-in in the published precision and 64 synthetic records."""
    model, data = tmp_path / "llama2-70b", tmp_path / "data.pkl"
    made = run_cli(
        "data",
        "dummy-model",
        "--benchmark",
        "llama2-70b-99.9",
        "--precision",
        "published",
        "--out",
        str(model),
        cwd=tmp_path,
    )
    assert made.returncode == 0, made.stderr
    synth = run_cli(
        "data", "synth", "--benchmark", "llama2-70b-99.9", "--samples", "64", "--out", str(data), cwd=tmp_path
    )
    assert synth.returncode == 0, synth.stderr
    return (
        "run-all", "--system", system, "--round", "v6.1", "--benchmark", "llama2-70b-99.9", "--scenario",
        "Offline", "--model", str(model), "--dataset", str(data), "--smoke", "--dry-run", "--described-gpus",
    )  # fmt: skip


def test_a_plan_whose_model_does_not_fit_is_refused_with_the_estimate(tmp_path: Path) -> None:
    descriptor = descriptor_data("dell_r760xa_l40s")
    descriptor["id"] = "one_l40s_each"
    for setup in descriptor["benchmarks"].values():
        setup.update(tensor_parallel_size=1, replicas=4)
    path = write_json(tmp_path / "one_l40s_each.json", descriptor)
    result = run_cli(*_dry_run_on_described_gpus(tmp_path, str(path)), cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "the model does not fit: per GPU" in result.stderr and "tensor_parallel_size" in result.stderr
    assert "Traceback" not in result.stderr
    plain = run_cli("run-all", "--system", str(path), "--described-gpus", cwd=tmp_path)
    assert plain.returncode == 2 and "use it with --dry-run" in plain.stderr


def test_the_eight_h200_deepseek_descriptor_plans_its_runs_and_four_gpus_are_refused(tmp_path: Path) -> None:
    """bench/systems/gpu_deepseek_8xh200_dummy.json, the device run of deepseek-r1 at full depth with CUDA
    graphs: `run-all --dry-run --described-gpus` plans every run on one TP=8 group of its eight H200s, and
    the same descriptor with TP=4 is refused before anything runs."""
    path = Path(__file__).resolve().parents[1] / "bench" / "systems" / "gpu_deepseek_8xh200_dummy.json"
    descriptor = json.loads(path.read_text())
    assert "enforce_eager" not in json.dumps(descriptor["benchmarks"]["deepseek-r1"])
    model, data = tmp_path / "deepseek-r1", tmp_path / "data.pkl"
    for command in (
        (
            "data",
            "dummy-model",
            "--benchmark",
            "deepseek-r1",
            "--precision",
            "published",
            "--out",
            str(model),
        ),
        ("data", "synth", "--benchmark", "deepseek-r1", "--out", str(data)),
    ):
        made = run_cli(*command, cwd=tmp_path)
        assert made.returncode == 0, made.stderr
    dry_run = ("--model", str(model), "--dataset", str(data), "--dry-run", "--described-gpus")

    planned = run_cli("run-all", "--system", str(path), *dry_run, "--json", cwd=tmp_path)
    assert planned.returncode == 0, planned.stderr
    runs = json.loads(planned.stdout)["runs"]
    assert {run["step"] for run in runs} == {
        f"deepseek-r1/{scenario}/{mode}"
        for scenario in ("Offline", "Server")
        for mode in ("TEST06", "accuracy", "performance")
    }
    for run in runs:
        topology = run["topology"]
        assert topology["tensor_parallel_size"] == 8 and len(topology["replicas"]) == 1
        assert topology["replicas"][0]["gpus"] == list(range(8))
        assert topology["memory_estimate"]["sequences"] >= 1

    descriptor["id"] = "deepseek_on_four"
    descriptor["benchmarks"]["deepseek-r1"]["tensor_parallel_size"] = 4
    four = write_json(tmp_path / "deepseek_on_four.json", descriptor)
    refused = run_cli("run-all", "--system", str(four), *dry_run, cwd=tmp_path)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    # Named by the file it came from, not by a catalog place it is not in.
    assert "deepseek_on_four.json Offline: the model does not fit" in refused.stderr
    assert "systems/deepseek_on_four.json" not in refused.stderr and "at least 5 GPUs" in refused.stderr


def test_preflight_reserves_what_the_vision_tower_s_pass_holds(tmp_path: Path) -> None:
    """The reserve of a model with a vision tower grows by the largest images' pixels and encoder outputs,
    read from the checkpoint's preprocessor_config.json; without that file the tower's pass is not counted."""
    from harness.media import image_pixel_limits
    from harness.preflight import check_memory

    config, _ = stand_in_config("qwen3-vl-235b-a22b", precision="published")
    write_json(tmp_path / "config.json", config)
    placement = place(setup(tensor_parallel_size=4), host(H200, 4), {}, "")
    args = {"max_model_len": 32_768, "max_num_seqs": 256, "max_num_batched_tokens": 16_384}
    without = check_memory(str(tmp_path), None, args, placement, "here")
    write_json(
        tmp_path / "preprocessor_config.json",
        {"size": {"longest_edge": 16_777_216, "shortest_edge": 65_536}, "patch_size": 16},
    )
    counted = check_memory(str(tmp_path), None, args, placement, "here")
    assert without is not None and counted is not None
    one_image = 65_536 * 1_536 * 4 + 16_384 * 16_384 * 2
    assert counted.reserve - without.reserve == one_image
    assert counted.kv_cache == without.kv_cache - one_image
    # Both spellings of the processor's limits; none stated, none counted.
    assert image_pixel_limits({"min_pixels": 3_136, "max_pixels": 12_845_056}) == (3_136, 12_845_056)
    assert image_pixel_limits({"size": {"shortest_edge": 65_536, "longest_edge": 16_777_216}}) == (
        65_536,
        16_777_216,
    )
    assert image_pixel_limits({"size": {}}) is None


def test_the_plan_takes_the_memory_cuda_offers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """vLLM takes gpu_memory_utilization of the total CUDA reports, which leaves out nvidia-smi's reserved
    share; the plan does the same where nvidia-smi reports that share, and takes the whole total elsewhere."""
    from harness.environment import gpus

    fake_nvidia_smi(tmp_path, [("NVIDIA H100 80GB HBM3", 81559)] * 2)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    found = gpus()
    assert [gpu.reserved for gpu in found] == ["454 MiB", "454 MiB"]
    assert found[0].memory_bytes == 81559 << 20 and found[0].usable_bytes == (81559 - 454) << 20
    placement = place(setup(tensor_parallel_size=2), found, {}, "")
    args = {"max_model_len": 2048, "max_num_seqs": 256, "gpu_memory_utilization": 0.9}
    config, _ = stand_in_config("llama2-70b-99", precision="published")
    fit = memory_fit(model_size(config), Precision.of(config), placement, args)
    assert fit.gpu_bytes == (81559 - 454) << 20
    assert "(0.9 of 79.2)" in fit.describe()
    # Where nvidia-smi has no figure for it, the total.
    unreported = Gpu(name="NVIDIA H100 80GB HBM3", memory="81559 MiB", driver="d", reserved="[N/A]")
    assert unreported.usable_bytes == 81559 << 20
    # A driver that does not know the field refuses the query: the GPUs are listed without it.
    smi = tmp_path / "nvidia-smi"
    smi.write_text(smi.read_text().replace("'memory.reserved': '454 MiB'", "").replace(", }", "}"))
    listed = [(gpu.index, gpu.reserved, gpu.usable_bytes) for gpu in gpus()]
    assert listed == [(0, None, 81559 << 20), (1, None, 81559 << 20)]
