"""What a newcomer's second hour ran into: a mistyped model path that ran a whole plan unscored, fixes that
blame a user.conf which sets nothing, flags named one per attempt, a dataset hint only some benchmarks gave,
and a descriptor named where it is not."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli
from minitree import build_tree
from treecopy import set_log_value

from submitter.check.checker import check_tree
from submitter.fileformats.run_record import read_record
from submitter.stage.selection import Eligibility

ROOT = Path(__file__).resolve().parents[1]


def test_a_missing_model_path_shaped_like_a_hub_id_is_refused_before_anything_runs(tmp_path: Path) -> None:
    (tmp_path / "demo-data").mkdir()
    made = run_cli(
        "data", "synth", "--out", "demo-data/cnn_synthetic.json", "--samples", "64", "--demo-model",
        "demo-data/model", cwd=tmp_path,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    result = run_cli(
        "run-all", "--system", "demo_cpu", "--benchmark", "llama3.1-8b", "--model", "demo-data/nope-model",
        "--smoke", "--dry-run", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert "--model demo-data/nope-model does not exist" in result.stderr
    assert not (tmp_path / "work" / "runs" / "demo_cpu").exists()


@pytest.mark.parametrize(
    ("set_in_user_conf", "fix"), [(False, "the run was shortened otherwise"), (True, "remove")]
)
def test_a_shortened_run_s_fix_names_user_conf_only_where_it_sets_the_value(
    tmp_path: Path, set_in_user_conf: bool, fix: str
) -> None:
    tree = build_tree(tmp_path, "v6.1", [("Sys", "llama3.1-8b", "Offline")])
    result = tree.result("llama3.1-8b", "Offline")
    set_log_value(result.performance_log, "effective_min_duration_ms", 1000)
    if set_in_user_conf:
        user_conf = result.performance_log.parents[2] / "user.conf"
        user_conf.write_text(user_conf.read_text() + "*.Offline.min_duration = 1000\n")
    (finding,) = [f for f in check_tree(tmp_path).findings if f.rule == "PERF-MIN-DURATION"]
    assert finding.fix.startswith(fix if set_in_user_conf else "user.conf does not set min_duration")
    if not set_in_user_conf:
        assert fix in finding.fix and "--smoke" in finding.fix


def test_staging_names_every_flag_a_run_needs_at_once(demo_runs: tuple[dict, Path]) -> None:
    _, runs = demo_runs
    run_dir = next(runs.glob("fast_cpu/llama3.1-8b/Offline/performance/*"))
    record = read_record(run_dir)
    assert record is not None
    rejection = Eligibility().why_not("fast_cpu", run_dir, record, dataset_size=13368)
    assert rejection is not None
    assert "--allow-trials and --allow-not-submittable" in rejection.remedy
    assert "a --smoke trial" in rejection.reason and "not submittable" in rejection.reason
    assert (
        Eligibility(trials=True)
        .why_not("fast_cpu", run_dir, record, 13368)
        .remedy.startswith(  # type: ignore[union-attr]
            "stage it with --allow-not-submittable"
        )
    )


@pytest.mark.parametrize(("benchmark", "dataset"), [("whisper", "nope.json"), ("qwen3-vl-235b-a22b", "nope")])
def test_a_missing_dataset_of_every_benchmark_suggests_data_synth(
    tmp_path: Path, benchmark: str, dataset: str
) -> None:
    result = run_cli(
        "run", "--system", "demo_cpu", "--benchmark", benchmark, "--scenario", "Offline",
        "--mode", "performance", "--smoke", "--dataset", dataset, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert f"submitter data synth --benchmark {benchmark} --out" in result.stderr


def test_tune_qps_names_the_descriptor_file_it_read(monkeypatch: pytest.MonkeyPatch) -> None:
    from submitter.cli.tune import _descriptor_shown

    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("SUBMITTER_SYSTEMS_PATH", str(ROOT / "bench" / "systems"))
    assert _descriptor_shown("redhat_h100_dummy") == "bench/systems/redhat_h100_dummy.json"


@pytest.mark.parametrize(("planted", "suggests_allow"), [("hidden", False), ("leak", True)])
def test_package_suggests_allow_only_where_a_remaining_error_can_be_allowed(
    tmp_path: Path, planted: str, suggests_allow: bool
) -> None:
    scenarios = ("Offline", "Server")
    build_tree(tmp_path / "tree", "v6.1", [("Sys", "llama3.1-8b", s) for s in scenarios], submitter="Org")
    submitter_folder = tmp_path / "tree" / "closed" / "Org"
    if planted == "hidden":  # HYG-DOT-FILE: MLCommons' own rule, which no --allow lifts
        (submitter_folder / ".notes").write_text("to do\n")
    else:  # LEAK-SECRET: a real-looking password, which may be a false positive
        (submitter_folder / "README.md").write_text("password: 'Tr0ub4dor&3-horse'\n")
    result = run_cli(
        "package", str(submitter_folder), "--round", "v6.1", "--dry-run", "--out", "out", cwd=tmp_path
    )
    assert result.returncode == 1, result.stderr
    assert "nothing written: fix the findings above" in result.stderr
    assert ("--allow" in result.stderr) is suggests_allow, result.stderr
