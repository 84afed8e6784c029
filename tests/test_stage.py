"""`submitter stage`: a tree in the round's layout from real (short) runs, raw runs untouched."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli, write_json

from submitter.errors import SubmitterError, UsageProblem
from submitter.stage.selection import Eligibility
from submitter.stage.staging import StageRequest, stage
from submitter.systems.descriptor import SystemDescriptor

TREE = "open/Demo/results/Demo_1xSynthetic_CPU/llama3.1-8b"
# What a rehearsal with --smoke runs must fail on, and nothing else.
# What a --smoke rehearsal in the open division lacks (the Offline samples-per-query minimum is the closed
# division's, as officially).
TRIAL_RULES = {"PERF-SAMPLE-COUNT", "PERF-MIN-DURATION", "ACC-DATASET"}


def fingerprints(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def request(descriptor: dict[str, Any], runs_root: Path, out: Path, **changes: Any) -> StageRequest:
    settings: dict[str, Any] = {
        "systems": (SystemDescriptor.model_validate(descriptor),),
        "submitter": "Demo",
        "division": "open",
        "round": "v6.1",
        "out": out,
        "runs_root": runs_root,
        "accept": Eligibility(not_submittable=True, trials=True),
    }
    return StageRequest(**{**settings, **changes})


def test_stage_builds_the_v6_tree_copies_without_touching_runs_and_checks_it(
    demo_runs: tuple[dict[str, Any], Path], tmp_path: Path
) -> None:
    descriptor, runs_root = demo_runs
    before = fingerprints(runs_root)
    result = stage(request(descriptor, runs_root, tmp_path / "tree"))
    assert fingerprints(runs_root) == before

    tree = tmp_path / "tree"
    for scenario in ("Offline", "Server", "Interactive"):
        folder = tree / TREE / scenario
        assert sorted(path.name for path in folder.iterdir()) == [
            "README.md", "TEST06", "accuracy", "measurements.json", "performance", "user.conf",
        ]  # fmt: skip
        assert sorted(path.name for path in (folder / "performance" / "run_1").iterdir()) == [
            "mlperf_log_detail.txt", "mlperf_log_summary.txt",
        ]  # fmt: skip
        assert sorted(path.name for path in (folder / "accuracy").iterdir()) == [
            "accuracy.txt", "mlperf_log_accuracy.json", "mlperf_log_detail.txt", "mlperf_log_summary.txt",
        ]  # fmt: skip
        assert (folder / "TEST06" / "verify_accuracy.txt").read_text().splitlines()[:3] == [
            f"First token check pass: {'Skipped' if scenario == 'Offline' else 'True'}",
            "EOS check pass: True",
            "Sample length check pass: True",
        ]
    system_json = json.loads((tree / "open/Demo/systems/Demo_1xSynthetic_CPU.json").read_text())
    assert system_json == SystemDescriptor.model_validate(descriptor).official()
    assert (tree / "open/Demo/documentation/calibration.md").is_file()
    assert (tree / "open/Demo/src/harness/runner.py").is_file()

    # Everything the check finds is what a --smoke rehearsal must lack; the rest of the tree passes.
    assert result.check is not None
    assert {finding.rule for finding in result.check.findings} == TRIAL_RULES
    # ... and each says so: the checker's own fix ("remove it from user.conf") names settings --smoke made.
    assert result.trial_findings == len(result.check.findings)
    for finding in result.check.findings:
        assert "--smoke shortened this run on purpose" in finding.fix and "user.conf" not in finding.fix
        assert "submitter run-all --system fast_cpu` without --smoke" in finding.fix


def test_accuracy_logs_are_truncated_like_the_official_tool_and_kept_whole_beside_the_tree(
    demo_runs: tuple[dict[str, Any], Path], tmp_path: Path
) -> None:
    descriptor, runs_root = demo_runs
    result = stage(request(descriptor, runs_root, tmp_path / "tree"))
    manifest = json.loads((result.staging_dir / "manifest.json").read_text())
    server = next(run for run in result.chosen if run.step.key == "llama3.1-8b/Server/accuracy")
    original = (server.run_dir / "mlperf_log_accuracy.json").read_bytes()
    assert len(original) > 8192

    staged = tmp_path / "tree" / TREE / "Server" / "accuracy"
    text = original.decode()
    assert (staged / "mlperf_log_accuracy.json").read_text() == text[:4096] + "\n\n...\n\n" + text[-4096:]
    assert (staged / "mlperf_log_accuracy.json").stat().st_size == 8199
    accuracy_txt = (staged / "accuracy.txt").read_text()
    assert accuracy_txt == (server.run_dir / "accuracy.txt").read_text() + (
        f"\nhash={hashlib.sha256(original).hexdigest()}\n"
    )
    backup = (
        result.staging_dir / "accuracy-logs/Demo_1xSynthetic_CPU/llama3.1-8b/Server/mlperf_log_accuracy.json"
    )
    assert backup.read_bytes() == original

    entries = {entry["file"]: entry for entry in manifest["files"]}
    assert (
        entries[f"{TREE}/Server/accuracy/mlperf_log_accuracy.json"]["sha256"]
        == hashlib.sha256(original).hexdigest()
    )
    for entry in manifest["files"]:
        assert hashlib.sha256(Path(entry["source"]).read_bytes()).hexdigest() == entry["sha256"]


def test_the_scenario_readme_states_what_ran(demo_runs: tuple[dict[str, Any], Path], tmp_path: Path) -> None:
    descriptor, runs_root = demo_runs
    result = stage(request(descriptor, runs_root, tmp_path / "tree"))
    readme = (tmp_path / "tree" / TREE / "Server" / "README.md").read_text()
    performance = next(run for run in result.chosen if run.step.key == "llama3.1-8b/Server/performance")
    assert f"commit `{performance.record.git.commit}`" in readme
    assert "`submitter run --system fast_cpu --scenario Server --mode performance`" in readme
    assert '"tokens_per_second": 100000' in readme
    assert f"{performance.metric:,.2f} Tokens/s" in readme
    assert "**Not an official result:**" in readme and "the synthetic engine is a timing model" in readme


def test_sources_are_the_runs_commit_from_git(demo_runs: tuple[dict[str, Any], Path], tmp_path: Path) -> None:
    descriptor, runs_root = demo_runs
    result = stage(request(descriptor, runs_root, tmp_path / "tree"))
    commit = result.chosen[0].record.git.commit
    assert commit is not None
    project = Path(__file__).resolve().parents[1]
    at_commit = subprocess.run(
        ["git", "-C", str(project), "show", f"{commit}:harness/runner.py"], capture_output=True, check=True
    ).stdout
    assert (tmp_path / "tree/open/Demo/src/harness/runner.py").read_bytes() == at_commit
    assert not list((tmp_path / "tree/open/Demo/src").glob("tests"))
    assert not [path for path in (tmp_path / "tree").rglob(".*")]


def test_v5_1_layout_and_the_seed_mismatch_it_then_reports(
    demo_runs: tuple[dict[str, Any], Path], tmp_path: Path
) -> None:
    descriptor, runs_root = demo_runs
    result = stage(request(descriptor, runs_root, tmp_path / "tree", round="v5.1"))
    root = tmp_path / "tree/open/Demo"
    assert sorted(path.name for path in root.iterdir()) == [
        "code", "compliance", "documentation", "measurements", "results", "systems",
    ]  # fmt: skip
    measurements = root / "measurements/Demo_1xSynthetic_CPU/llama3.1-8b/Offline"
    assert sorted(path.name for path in measurements.iterdir()) == [
        "Demo_1xSynthetic_CPU.json",
        "README.md",
        "user.conf",
    ]
    assert (root / "compliance/Demo_1xSynthetic_CPU/llama3.1-8b/Server/TEST06/verify_accuracy.txt").is_file()
    assert result.check is not None
    assert "PERF-SEED" in {finding.rule for finding in result.check.findings}
    assert any("made for round v6.1 and staged for v5.1" in note for note in result.notes)


def test_restaging_needs_force_and_replaces_the_tree_whole(
    demo_runs: tuple[dict[str, Any], Path], tmp_path: Path
) -> None:
    descriptor, runs_root = demo_runs
    out = tmp_path / "tree"
    stage(request(descriptor, runs_root, out))
    (out / "open/Demo/stray.txt").write_text("left over")
    with pytest.raises(UsageProblem, match="exists; pass --force"):
        stage(request(descriptor, runs_root, out))
    stage(request(descriptor, runs_root, out, force=True))
    assert not (out / "open/Demo/stray.txt").exists()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["tree", "tree-staging"]


def test_a_run_whose_record_cannot_be_read_is_named_not_passed_over_in_silence(
    demo_runs: tuple[dict[str, Any], Path], tmp_path: Path
) -> None:
    descriptor, _ = demo_runs
    broken = tmp_path / "runs" / "fast_cpu" / "llama3.1-8b" / "Offline" / "TEST06" / "20990101T000000Z"
    broken.mkdir(parents=True)
    (broken / "run.json").write_text("{")
    with pytest.raises(SubmitterError) as raised:
        stage(request(descriptor, tmp_path / "runs", tmp_path / "tree"))
    first = str(raised.value).splitlines()[1]
    assert first.startswith("- fast_cpu llama3.1-8b Offline TEST06: no eligible run in"), first
    assert "of 1 run(s) there, the newest is 20990101T000000Z" in first
    assert "is not a run record this version can read" in first and "remove the folder" in first


def test_trials_and_demo_runs_are_refused_unless_asked_for(
    demo_runs: tuple[dict[str, Any], Path], tmp_path: Path
) -> None:
    descriptor, runs_root = demo_runs
    with pytest.raises(
        SubmitterError, match=r"nothing was staged:\n- fast_cpu llama3.1-8b Offline TEST06: no eligible run"
    ) as raised:
        stage(request(descriptor, runs_root, tmp_path / "tree", accept=Eligibility()))
    assert "a --smoke trial (64 samples" in str(raised.value)
    # Both flags it needs, named at once.
    assert (
        "without --smoke for a submission, or stage it with --allow-trials and --allow-not-submittable"
        in str(raised.value)
    )
    with pytest.raises(
        SubmitterError, match="not submittable: the synthetic engine is a timing model"
    ) as raised:
        stage(request(descriptor, runs_root, tmp_path / "tree", accept=Eligibility(trials=True)))
    assert "stage it with --allow-not-submittable to rehearse" in str(raised.value)
    assert not (tmp_path / "tree").exists()


def test_the_tree_must_match_the_descriptor_identity(
    demo_runs: tuple[dict[str, Any], Path], tmp_path: Path
) -> None:
    descriptor, runs_root = demo_runs
    with pytest.raises(UsageProblem, match="says division 'open', but --division is 'closed'"):
        stage(request(descriptor, runs_root, tmp_path / "tree", division="closed"))


def test_stage_command_exits_1_while_the_check_fails_and_says_so(
    demo_runs: tuple[dict[str, Any], Path], tmp_path: Path
) -> None:
    descriptor, runs_root = demo_runs
    write_json(tmp_path / "fast_cpu.json", descriptor)
    result = run_cli(
        "stage", "--system", "fast_cpu.json", "--submitter", "Demo", "--division", "open", "--out", "tree",
        "--runs-dir", str(runs_root), "--allow-not-submittable", "--allow-trials", "--json", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    document = json.loads(result.stdout)
    assert len(document["runs"]) == 9 and document["check"]["errors"] > 0
    assert "submitter check --round v6.1: FAILS with" in result.stderr
    assert f"{document['check']['errors']} of them made by --smoke trials on purpose" in result.stderr
