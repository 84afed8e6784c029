"""`submitter run` and `submitter data` as a user runs them, in fresh processes."""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import run_cli, write_json
from harness_helpers import fast_descriptor

from submitter.workspace import RUNS


def systems_dir(tmp_path: Path, descriptor: dict) -> dict[str, str]:
    folder = tmp_path / "systems"
    folder.mkdir()
    write_json(folder / f"{descriptor['id']}.json", descriptor)
    return {"SUBMITTER_SYSTEMS_PATH": str(folder)}


@pytest.mark.slow
def test_data_synth_writes_the_real_format_with_the_real_length_profile(tmp_path: Path) -> None:
    result = run_cli("data", "synth", "--out", "cnn.json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    records = json.loads((tmp_path / "cnn.json").read_text())
    assert len(records) == 13368
    assert set(records[0]) == {"instruction", "input", "tok_input", "output"}
    lengths = [len(record["tok_input"]) for record in records]
    assert max(lengths) == 2540
    assert abs(statistics.mean(lengths) - 778) < 778 * 0.03
    assert all(record["tok_input"][0] == 128000 for record in records)


def test_data_dummy_model_writes_the_architecture_and_a_marker(tmp_path: Path) -> None:
    result = run_cli("data", "dummy-model", "--out", "model", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    config = json.loads((tmp_path / "model" / "config.json").read_text())
    assert config["architectures"] == ["LlamaForCausalLM"] and config["num_hidden_layers"] == 32
    assert (tmp_path / "model" / "submitter-dummy-weights.json").is_file()


def test_run_prints_run_json_on_stdout_and_a_verdict_on_stderr(tmp_path: Path) -> None:
    env = systems_dir(tmp_path, fast_descriptor())
    assert run_cli("data", "synth", "--out", "data.json", "--samples", "300", cwd=tmp_path).returncode == 0
    result = run_cli(
        "run", "--system", "fast_cpu", "--scenario", "Offline", "--mode", "performance",
        "--dataset", "data.json", "--smoke", "--smoke-samples", "100", "--json", cwd=tmp_path, env=env,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert record["valid"] and record["scenario"] == "Offline" and record["mode"] == "performance"
    assert record["dataset"]["samples"] == 100 and record["loadgen"]["overrides"]["min_query_count"] == 100
    assert record["command_line"][:2] == ["submitter", "run"]
    assert "Offline performance: valid" in result.stderr and "not submittable" in result.stderr
    run_json = next((tmp_path / RUNS).rglob("run.json"))
    assert json.loads(run_json.read_text()) == record


def test_unknown_system_is_a_usage_error(tmp_path: Path) -> None:
    result = run_cli(
        "run", "--system", "nope", "--scenario", "Offline", "--mode", "performance", cwd=tmp_path
    )
    assert result.returncode == 2
    assert "no system descriptor with id 'nope'" in result.stderr and "Traceback" not in result.stderr


def test_a_killed_run_is_recorded_as_interrupted_never_as_complete(tmp_path: Path) -> None:
    descriptor = fast_descriptor()
    descriptor["benchmarks"]["llama3.1-8b"]["scenarios"]["Server"]["user_conf"]["target_qps"] = 20
    env = {**os.environ, **systems_dir(tmp_path, descriptor)}
    assert run_cli("data", "synth", "--out", "data.json", "--samples", "300", cwd=tmp_path).returncode == 0
    command = [sys.executable, "-m", "submitter", "run", "--system", "fast_cpu", "--scenario", "Server"]
    process = subprocess.Popen(
        [*command, "--mode", "performance", "--dataset", "data.json", "--smoke"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    progress: list[Path] = []
    deadline = time.monotonic() + 30
    while not progress and time.monotonic() < deadline:
        time.sleep(0.2)
        progress = list((tmp_path / RUNS).rglob("progress.json"))
    assert progress, "LoadGen's test never began"
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    record = json.loads((progress[0].parent / "run.json").read_text())
    assert record["status"] == "interrupted" and record["valid"] is False
    # How far it got, from the last progress.json the worker wrote: in run.json and on the terminal.
    last = json.loads(progress[0].read_text())
    so_far = f"{last['completed']:,} of {last['issued']:,} samples answered {last['elapsed_s']:,} s into"
    assert so_far in record["problems"][0] and so_far in stderr


@pytest.mark.slow
def test_accuracy_command_scores_a_real_accuracy_run(tmp_path: Path) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers

    model = tmp_path / "model"
    model.mkdir()
    tokenizer = Tokenizer(models.WordLevel({f"w{i}": i for i in range(128256)}, unk_token="w0"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer.save(str(model / "tokenizer.json"))
    env = systems_dir(tmp_path, fast_descriptor())
    assert run_cli("data", "synth", "--out", "data.json", "--samples", "40", cwd=tmp_path).returncode == 0
    ran = run_cli(
        "run", "--system", "fast_cpu", "--scenario", "Offline", "--mode", "accuracy",
        "--dataset", "data.json", "--smoke", "--json", cwd=tmp_path, env=env,
    )  # fmt: skip
    # The synthetic engine has no tokenizer: the run is logged, not scored (exit 1), and says how to score it.
    assert ran.returncode == 1 and "logged, NOT scored" in ran.stderr, ran.stderr
    assert "submitter accuracy" in json.loads(ran.stdout)["accuracy"]["note"]
    run_dir = next((tmp_path / RUNS).rglob("run.json")).parent
    result = run_cli("accuracy", str(run_dir), "--model", "model", "--json", cwd=tmp_path)
    # Random ids decoded as "w123 w456 ..." share nothing with the English references: accuracy fails.
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["result"]["gen_num"] == 40 and report["result"]["rouge1"] == "0.0"
    assert "accuracy FAILS" in result.stderr
    assert "'gen_len': " in (run_dir / "accuracy.txt").read_text()
