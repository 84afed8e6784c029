"""Real LoadGen runs on the CPU with the synthetic engine: every scenario in every mode, short."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness_helpers import (
    accuracy_records,
    detail_records,
    fast_descriptor,
    short_run,
    token_ids,
    write_dataset,
)

from harness.engines.synthetic import answer_tokens
from harness.progress import PROGRESS_FILE
from harness.runner import FinishedRun
from submitter.fileformats.run_mode import Mode
from submitter.fileformats.run_record import RunRecord
from submitter.rounds.models import Scenario

SCENARIOS = (Scenario.OFFLINE, Scenario.SERVER, Scenario.INTERACTIVE)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("harness")


@pytest.fixture(scope="module")
def dataset(workspace: Path) -> Path:
    return write_dataset(workspace / "dataset.json")


_RUNS: dict[tuple[Scenario, Mode], FinishedRun] = {}


@pytest.fixture
def finished(request: pytest.FixtureRequest, workspace: Path, dataset: Path) -> FinishedRun:
    """One run per (scenario, mode), made once for the module."""
    key = request.param
    if key not in _RUNS:
        _RUNS[key] = short_run(fast_descriptor(), *key, dataset=dataset, runs_root=workspace / "runs")
    return _RUNS[key]


# llama3.1-8b's modes: performance, accuracy and its round's audit (TEST06).
ALL_RUNS = [
    (scenario, mode) for scenario in SCENARIOS for mode in (Mode.PERFORMANCE, Mode.ACCURACY, Mode.TEST06)
]


@pytest.mark.parametrize("finished", ALL_RUNS, indirect=True, ids=lambda key: f"{key[0]}-{key[1]}")
def test_every_scenario_and_mode_finishes_valid(finished: FinishedRun) -> None:
    record = finished.record
    assert record.status == "completed"
    assert record.valid, record.problems
    assert record.exit_status == 0
    assert not record.submittable and any("smoke" in reason for reason in record.not_submittable)
    assert record.loadgen.outcome is not None and record.loadgen.outcome.errors == []


@pytest.mark.parametrize("finished", ALL_RUNS, indirect=True, ids=lambda key: f"{key[0]}-{key[1]}")
def test_run_json_matches_the_logs(finished: FinishedRun) -> None:
    on_disk = RunRecord.model_validate(json.loads((finished.run_dir / "run.json").read_text()))
    assert on_disk == finished.record
    log = detail_records(finished.run_dir)
    outcome = on_disk.loadgen.outcome
    assert outcome is not None
    assert outcome.effective == {
        k.removeprefix("effective_"): v for k, v in log.items() if k.startswith("effective_")
    }
    assert outcome.requested == {
        k.removeprefix("requested_"): v for k, v in log.items() if k.startswith("requested_")
    }
    assert outcome.validity == log.get("result_validity")
    assert outcome.loadgen_version == log["loadgen_version"]
    if outcome.metric is not None:
        assert outcome.metric_value == log[outcome.metric]
    loadgen = on_disk.loadgen
    target_qps = loadgen.user_conf["target_qps"]
    user_conf = (finished.run_dir / "user.conf").read_text().strip()
    assert user_conf == f"{loadgen.model}.{loadgen.scenario}.target_qps = {target_qps}"
    # The trace is off: LoadGen leaves an empty file.
    assert (finished.run_dir / "mlperf_log_trace.json").stat().st_size == 0


@pytest.mark.parametrize(
    "finished",
    [(Scenario.OFFLINE, Mode.PERFORMANCE), (Scenario.SERVER, Mode.PERFORMANCE)],
    indirect=True,
    ids=["Offline", "Server"],
)
def test_progress_file_ends_with_the_tests_own_counts(finished: FinishedRun) -> None:
    progress = json.loads((finished.run_dir / PROGRESS_FILE).read_text())
    harness = finished.record.harness
    assert harness is not None
    assert (progress["issued"], progress["completed"], progress["tokens"]) == (
        harness.samples_issued,
        harness.samples_completed,
        harness.tokens,
    )
    assert progress["completed"] > 0
    # The rate over the middle half of the answers, the same in both.
    assert harness.steady is not None and progress["steady"] == harness.steady.model_dump()
    # Written just after LoadGen's test ends, so within a moment of the test's own length.
    assert harness.loadgen_test_s is not None
    assert abs(progress["elapsed_s"] - harness.loadgen_test_s) < 1.0


@pytest.mark.parametrize(
    "finished", [(Scenario.INTERACTIVE, Mode.PERFORMANCE)], indirect=True, ids=["Interactive"]
)
def test_interactive_uses_interactive_latency_limits(finished: FinishedRun) -> None:
    log = detail_records(finished.run_dir)
    assert finished.record.loadgen.model == "llama3_1-8b-interactive"
    assert log["requested_scenario"] == "Server"
    assert log["requested_server_ttft_latency"] == 500_000_000
    assert log["requested_server_tpot_latency"] == 30_000_000


@pytest.mark.parametrize("finished", [(Scenario.SERVER, Mode.PERFORMANCE)], indirect=True, ids=["Server"])
def test_server_uses_server_latency_limits_and_round_seeds(finished: FinishedRun) -> None:
    log = detail_records(finished.run_dir)
    assert log["requested_server_ttft_latency"] == 2_000_000_000
    assert log["requested_server_tpot_latency"] == 100_000_000
    assert log["effective_qsl_rng_seed"] == 2085463073848966840
    assert log["result_validity"] == "VALID"


@pytest.mark.parametrize(
    "finished",
    [(Scenario.OFFLINE, Mode.ACCURACY), (Scenario.SERVER, Mode.ACCURACY)],
    indirect=True,
    ids=["Offline", "Server"],
)
def test_accuracy_mode_logs_every_sample_once_with_the_engine_tokens(finished: FinishedRun) -> None:
    records = accuracy_records(finished.run_dir)
    assert sorted(record["qsl_idx"] for record in records) == list(range(64))
    for record in records:
        ids = token_ids(record["data"])
        assert ids == answer_tokens(record["qsl_idx"], 128)
        assert record["token_count"] == len(ids)
        if finished.record.scenario is Scenario.SERVER:
            # The first token reported to LoadGen is the first token generated.
            assert token_ids(record["token_data"]) == ids[:1]


@pytest.mark.parametrize(
    "finished",
    [(scenario, Mode.TEST06) for scenario in SCENARIOS],
    indirect=True,
    ids=[str(scenario) for scenario in SCENARIOS],
)
def test_test06_passes_the_audit_file_and_the_log_confirms_it(finished: FinishedRun) -> None:
    outcome = finished.record.loadgen.outcome
    assert outcome is not None
    assert outcome.audit_found and outcome.audit_mismatches == []
    assert finished.record.loadgen.audit_config is not None
    assert finished.record.loadgen.audit_config.endswith("compliance/TEST06/audit.config")
    log = detail_records(finished.run_dir)
    assert log["requested_accuracy_log_sampling_target"] == 100
    assert log["requested_accuracy_log_rng_seed"] == 720381539243781796
    assert len(accuracy_records(finished.run_dir)) == 100


@pytest.mark.parametrize("finished", [(Scenario.OFFLINE, Mode.PERFORMANCE)], indirect=True, ids=["Offline"])
def test_performance_runs_are_not_audited(finished: FinishedRun) -> None:
    outcome = finished.record.loadgen.outcome
    assert outcome is not None and not outcome.audit_found
    assert finished.record.loadgen.audit_config is None


@pytest.mark.parametrize("finished", [(Scenario.OFFLINE, Mode.PERFORMANCE)], indirect=True, ids=["Offline"])
def test_run_json_records_where_and_how_it_ran(finished: FinishedRun) -> None:
    record = finished.record
    assert record.versions["mlcommons-loadgen"] == "6.0.17"
    assert record.versions["python"]
    assert record.git.commit is None or len(record.git.commit) == 40
    assert record.engine.backend == "synthetic"
    assert record.engine.sampling["max_tokens"] == 128 and record.engine.sampling["temperature"] == 0
    assert record.loadgen.overrides["performance_sample_count_override"] == 64
    assert (
        record.harness is not None and record.harness.samples_completed == record.harness.samples_issued > 0
    )
    parts = finished.run_dir.parts[-5:-1]
    assert parts == ("fast_cpu", "llama3.1-8b", "Offline", "performance")
