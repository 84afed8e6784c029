"""Bad input stops a run before it starts, with a clear message and nothing left on disk."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import msgspec
import pytest
from harness_helpers import SHORT, fake_nvidia_smi, fast_descriptor, write_dataset

from harness.ledger import read_events
from harness.runner import RunRequest, execute, plan_run
from submitter.errors import SubmitterError, UsageProblem
from submitter.fileformats.run_mode import Mode
from submitter.rounds.models import Scenario
from submitter.systems.descriptor import SystemDescriptor


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    return write_dataset(tmp_path / "dataset.json", samples=16)


def request_for(descriptor: dict, tmp_path: Path, dataset: Path | None, **changes: object) -> RunRequest:
    fields = {
        "system": SystemDescriptor.model_validate(descriptor),
        "benchmark": "llama3.1-8b",
        "scenario": Scenario.OFFLINE,
        "mode": Mode.PERFORMANCE,
        "dataset": dataset,
        "smoke": SHORT,
        "runs_root": tmp_path / "runs",
    }
    fields.update(changes)
    return RunRequest(**fields)  # type: ignore[arg-type]


def test_missing_dataset_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageProblem, match=r"dataset .*nothing.json does not exist.*submitter data synth"):
        plan_run(request_for(fast_descriptor(), tmp_path, tmp_path / "nothing.json"))
    assert not (tmp_path / "runs").exists()


def test_dataset_without_token_ids_names_the_record(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps([{"tok_input": [128000, 5]}, {"input": "text only"}]))
    with pytest.raises(SubmitterError, match=r"record 1: tok_input must be a non-empty list of token ids"):
        plan_run(request_for(fast_descriptor(), tmp_path, broken))


def test_prompt_longer_than_the_benchmark_allows_is_refused(tmp_path: Path) -> None:
    long = tmp_path / "long.json"
    long.write_text(json.dumps([{"tok_input": list(range(2541))}]))
    with pytest.raises(SubmitterError, match=r"2541 tokens, more than the benchmark's 2540"):
        plan_run(request_for(fast_descriptor(), tmp_path, long))


def test_user_conf_keys_a_submitter_may_not_set_are_refused(tmp_path: Path, dataset: Path) -> None:
    descriptor = fast_descriptor()
    descriptor["benchmarks"]["llama3.1-8b"]["scenarios"]["Offline"]["user_conf"]["ttft_latency"] = 5000
    with pytest.raises(SubmitterError, match=r"user.conf keys ttft_latency may not be set"):
        plan_run(request_for(descriptor, tmp_path, dataset))


def test_a_leftover_audit_config_in_the_working_directory_is_refused(
    tmp_path: Path, dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "audit.config").write_text("*.*.mode = 2\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SubmitterError, match=r"audit.config exists: .*remove or rename"):
        plan_run(request_for(fast_descriptor(), tmp_path, dataset))


def test_loadgen_release_without_the_rounds_seeds_is_refused(tmp_path: Path, dataset: Path) -> None:
    descriptor = fast_descriptor()
    descriptor["round"] = "v5.1"
    with pytest.raises(
        SubmitterError, match=r"LoadGen 6.0.17 is installed, but round v5.1 needs a release from 5.1.0"
    ):
        plan_run(request_for(descriptor, tmp_path, dataset))


def test_gpu_engine_without_a_gpu_is_refused(
    tmp_path: Path, dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi on this PATH
    descriptor = fast_descriptor(backend="vllm", model_path=str(tmp_path))
    with pytest.raises(SubmitterError, match=r"backend vllm needs 1 GPU\(s\) .* nvidia-smi reports none"):
        plan_run(request_for(descriptor, tmp_path, dataset))


def test_unknown_scenario_lists_the_ones_set_up(tmp_path: Path, dataset: Path) -> None:
    descriptor = fast_descriptor()
    del descriptor["benchmarks"]["llama3.1-8b"]["scenarios"]["Interactive"]
    with pytest.raises(UsageProblem, match=r"no Interactive scenario .* it has: Offline, Server"):
        plan_run(request_for(descriptor, tmp_path, dataset, scenario=Scenario.INTERACTIVE))


def test_seeds_loadgen_really_sets_are_checked_before_the_engine_starts(
    tmp_path: Path, dataset: Path
) -> None:
    """The worker compares the seeds LoadGen loaded with the round's; on mismatch nothing stays behind."""
    plan = plan_run(request_for(fast_descriptor(), tmp_path, dataset))
    wrong_seeds = msgspec.structs.replace(plan.rules.loadgen.seeds, qsl_rng_seed=1)
    wrong_rules = msgspec.structs.replace(
        plan.rules, loadgen=msgspec.structs.replace(plan.rules.loadgen, seeds=wrong_seeds)
    )
    with pytest.raises(
        SubmitterError, match=r"the installed LoadGen sets seeds .* requires .*'qsl_rng_seed': 1"
    ):
        execute(dataclasses.replace(plan, rules=wrong_rules))
    runs = tmp_path / "runs"
    assert sorted(path.name for path in runs.iterdir()) == ["ledger.jsonl"]
    last = read_events(runs)[-1]
    assert (last.event, last.status, last.valid) == ("run-finished", "refused", False)
    assert "qsl_rng_seed" in (last.detail or "")


def test_wrong_synthetic_engine_arguments_name_the_field(tmp_path: Path, dataset: Path) -> None:
    descriptor = fast_descriptor(engine_args={"tokens_per_second": -5, "speed": 3})
    with pytest.raises(
        SubmitterError, match=r"engine_args for backend synthetic are wrong: tokens_per_second: .*; speed"
    ):
        plan_run(request_for(descriptor, tmp_path, dataset))


def test_model_directory_without_weights_is_refused_unless_marked_dummy(tmp_path: Path) -> None:
    from harness.preflight import resolve_model
    from harness.stand_in_models import write_dummy_model

    model = tmp_path / "model"
    model.mkdir()
    with pytest.raises(UsageProblem, match=r"has no config.json"):
        resolve_model("vllm", str(model))
    (model / "config.json").write_text("{}")
    with pytest.raises(UsageProblem, match=r"has no weight files .*submitter data dummy-model"):
        resolve_model("vllm", str(model))
    (model / "model-00001-of-00002.safetensors").write_bytes(b"")
    assert resolve_model("vllm", str(model)) == (str(model.resolve()), False)
    dummy = write_dummy_model(tmp_path / "dummy", "llama3.1-8b")
    assert resolve_model("vllm-async", str(dummy)) == (str(dummy.resolve()), True)


def test_hub_model_must_be_in_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.preflight import resolve_model

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(UsageProblem, match=r"neither a local directory nor in the Hugging Face cache"):
        resolve_model("vllm", "RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8")
    (tmp_path / "models--RedHatAI--Meta-Llama-3.1-8B-Instruct-FP8" / "snapshots" / "abc").mkdir(parents=True)
    assert resolve_model("vllm", "RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8")[1] is False
    # Engines that load no model in-process take the name as given.
    assert resolve_model("openai", "served-name") == ("served-name", False)


def test_a_full_run_needs_the_whole_dataset(tmp_path: Path, dataset: Path) -> None:
    with pytest.raises(SubmitterError, match=r"has 16 records; llama3.1-8b runs on 13368 .*use --smoke"):
        plan_run(request_for(fast_descriptor(), tmp_path, dataset, smoke=None))


def test_gpus_are_the_ones_cuda_visible_devices_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.environment import gpus

    fake_nvidia_smi(tmp_path, [(f"NVIDIA H200 #{index}", 143771) for index in range(4)])
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert [gpu.name for gpu in gpus()] == [f"NVIDIA H200 #{index}" for index in range(4)]
    assert gpus()[2].bus_id == "00000000:38:00.0" and gpus()[2].memory_bytes == 143771 << 20
    # CUDA numbers the GPUs in CUDA_VISIBLE_DEVICES' order, whatever nvidia-smi's.
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,1")
    assert [(gpu.index, gpu.name) for gpu in gpus()] == [(3, "NVIDIA H200 #3"), (1, "NVIDIA H200 #1")]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert gpus() == []


def test_replicas_are_placed_within_the_gpus_the_run_was_given(monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.engines.base import EngineSpec, Generation
    from harness.engines.registry import create_engine
    from harness.engines.replicas import ProcessReplicas

    generation = Generation(max_tokens=128, min_tokens=1, eos_token_id=128009)
    spec = EngineSpec(backend="vllm", model="m", generation=generation, replicas=2, tensor_parallel_size=2)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert [ProcessReplicas(spec, create_engine, on_gpus=True)._devices(r) for r in (0, 1)] == ["0,1", "2,3"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,5,6,7")
    assert [ProcessReplicas(spec, create_engine, on_gpus=True)._devices(r) for r in (0, 1)] == ["4,5", "6,7"]


def test_a_shallower_dummy_model_says_so_in_what_the_run_records(tmp_path: Path) -> None:
    from harness.stand_in_models import dummy_description, write_dummy_model

    shallow = write_dummy_model(tmp_path / "shallow", "llama3.1-405b", precision="fp8", layers=16)
    config = json.loads((shallow / "config.json").read_text())
    assert config["num_hidden_layers"] == 16 and config["quantization_config"]["quant_method"] == "fp8"
    assert dummy_description(shallow) == "dummy (random) weights, 16 of 126 layers"
    whole = write_dummy_model(tmp_path / "whole", "llama2-70b-99")  # the -99 variant's architecture
    assert dummy_description(whole) == "dummy (random) weights"
    with pytest.raises(UsageProblem, match="--layers must be between 1 and 126"):
        write_dummy_model(tmp_path / "deeper", "llama3.1-405b", layers=127)
