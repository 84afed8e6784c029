"""An accuracy run is scored with the model's own tokenizer: found where the model is, refused when the
model named cannot exist, and never reported as valid when nothing scored it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import run_cli, write_json
from harness_helpers import fast_descriptor, write_dataset

from submitter.evaluation.detokenize import find_tokenizer


def test_a_model_folder_with_a_tokenizer_is_found(tmp_path: Path) -> None:
    (tmp_path / "model").mkdir()
    assert find_tokenizer(str(tmp_path / "model")) is None
    (tmp_path / "model" / "tokenizer.json").write_text("{}")
    assert find_tokenizer(str(tmp_path / "model")) == tmp_path / "model"


def test_a_hub_name_is_found_in_the_newest_snapshot_of_the_cache(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    assert find_tokenizer("RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8") is None
    snapshots = tmp_path / "hub" / "models--RedHatAI--Meta-Llama-3.1-8B-Instruct-FP8" / "snapshots"
    for number, name in enumerate(("older", "newer")):
        (snapshots / name).mkdir(parents=True)
        (snapshots / name / "tokenizer.json").write_text("{}")
        os.utime(snapshots / name, (1_000_000 + number, 1_000_000 + number))
    assert find_tokenizer("RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8") == snapshots / "newer"


@pytest.mark.parametrize("model", ["/nonexistent/model", "./not/here", "~/nowhere/model"])
def test_an_accuracy_run_against_a_model_path_that_does_not_exist_is_refused(tmp_path: Path, model) -> None:
    systems = tmp_path / "systems"
    systems.mkdir()
    write_json(systems / "fast_cpu.json", fast_descriptor())
    result = run_cli(
        "run", "--system", "fast_cpu", "--scenario", "Offline", "--mode", "accuracy", "--smoke",
        "--model", model, "--runs-dir", "runs", cwd=tmp_path, env={"SUBMITTER_SYSTEMS_PATH": str(systems)},
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert f"--model {model} does not exist" in result.stderr and "tokenizer.json" in result.stderr
    assert not (tmp_path / "runs").exists()


def test_an_accuracy_run_that_nothing_scored_is_not_reported_valid(tmp_path: Path) -> None:
    systems = tmp_path / "systems"
    systems.mkdir()
    write_json(systems / "fast_cpu.json", fast_descriptor())
    (tmp_path / "bare-model").mkdir()  # a model folder without the tokenizer that scores the run
    write_dataset(tmp_path / "data.json")
    result = run_cli(
        "run", "--system", "fast_cpu", "--scenario", "Offline", "--mode", "accuracy", "--smoke",
        "--model", "bare-model", "--dataset", "data.json", "--runs-dir", "runs", cwd=tmp_path,
        env={"SUBMITTER_SYSTEMS_PATH": str(systems)},
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert "Offline accuracy: logged, NOT scored" in result.stderr
    assert "submitter accuracy" in result.stderr and ": valid" not in result.stderr
    assert list(tmp_path.glob("runs/*/*/Offline/accuracy/*/mlperf_log_accuracy.json")), "the log is kept"
