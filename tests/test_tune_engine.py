"""`submitter tune-engine`: a search over engine arguments on the synthetic engine's memory-bound timing
model, whose answers the model's own arithmetic predicts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli, write_json
from harness_helpers import fast_descriptor, short_run, write_dataset

from harness.engines.synthetic import SyntheticArgs
from harness.ledger import read_events
from harness.loadgen_settings import Smoke
from harness.search_space import Dimension, SearchSpace, parse_space, space_for
from harness.tune_engine import EngineSearch, ran_on, tune_engine
from submitter.errors import SubmitterError, UsageProblem
from submitter.fileformats.run_mode import Mode
from submitter.rounds.models import Scenario
from submitter.systems.backends import BACKENDS
from submitter.systems.descriptor import SystemDescriptor
from submitter.systems.validate import load_descriptor

# A decode step reads the weights (2 ms) and each running sequence's KV cache (0.05 ms at 16 bits); 64
# sequences' cache fits at 16 bits. Prompts are taken 512 tokens a step; CPU scheduling costs 1 ms a step
# unless overlapped.
MEMORY_BOUND = {
    "step_weights_ms": 2.0,
    "step_kv_ms_per_sequence": 0.05,
    "kv_cache_sequences": 64,
    "max_num_seqs": 64,
    "time_to_first_token_ms": 1,
    "scheduling_ms": 1.0,
    "async_scheduling": False,
}


def memory_bound_descriptor(**changes: Any) -> dict[str, Any]:
    return fast_descriptor(engine_args={**MEMORY_BOUND, **changes})


def test_the_memory_bound_step_follows_its_arithmetic() -> None:
    auto = SyntheticArgs.model_validate(MEMORY_BOUND)
    assert auto.running_sequences == 64
    assert auto.step_s == pytest.approx((2.0 + 64 * 0.05 + 1.0) / 1000)
    # FP8: twice the sequences fit, each read at half the cost; more slots than fit do not run.
    fp8 = SyntheticArgs.model_validate({**MEMORY_BOUND, "kv_cache_dtype": "fp8", "max_num_seqs": 512})
    assert fp8.running_sequences == 128
    assert fp8.step_s == pytest.approx((2.0 + 128 * 0.025 + 1.0) / 1000)
    overlapped = SyntheticArgs.model_validate({**MEMORY_BOUND, "async_scheduling": True})
    assert overlapped.step_s == pytest.approx((2.0 + 64 * 0.05) / 1000)
    # The throughput form is unchanged: a full engine makes tokens_per_second.
    assert SyntheticArgs(tokens_per_second=16000, max_num_seqs=64).step_s == pytest.approx(64 / 16000)


@pytest.mark.parametrize(
    "args",
    [
        {"step_weights_ms": 2.0},
        {"step_weights_ms": 2.0, "step_kv_ms_per_sequence": 0.1, "tokens_per_second": 100.0},
        {"kv_cache_dtype": "int4"},
    ],
)
def test_an_incoherent_timing_model_is_refused(args: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        SyntheticArgs.model_validate(args)


def test_an_fp8_cache_doubles_offline_throughput_where_the_step_stays_the_same(tmp_path: Path) -> None:
    """64 sequences at 16 bits and 128 at FP8 take the same 5.2-ms step (2 + 64 x 0.05 = 2 + 128 x 0.025,
    scheduling overlapped), so FP8 runs twice the sequences in the same time: twice the tokens/s."""
    dataset = write_dataset(tmp_path / "data.json", samples=256)
    one_pass = Smoke(samples=256)
    figures = {}
    for dtype in ("auto", "fp8"):
        descriptor = memory_bound_descriptor(kv_cache_dtype=dtype, max_num_seqs=128, async_scheduling=True)
        finished = short_run(
            descriptor, Scenario.OFFLINE, Mode.PERFORMANCE, dataset, tmp_path / dtype, one_pass
        )
        assert finished.record.valid, finished.record.problems
        assert finished.record.loadgen.outcome is not None
        figures[dtype] = finished.record.loadgen.outcome.metric_value
    # 256 samples of 128 tokens: 4 waves of 64 against 2 waves of 128, each 127 steps plus a first token.
    assert figures["fp8"] / figures["auto"] == pytest.approx(2.0, rel=0.1)


def test_prompts_taken_in_chunks_reach_their_first_token_later(tmp_path: Path) -> None:
    """A prompt of L tokens in chunks of C costs ceil(L/C) - 1 extra steps before its first token, and
    holds its slot that much longer: Offline throughput falls by the same share."""
    dataset = write_dataset(tmp_path / "data.json", samples=128)
    prompts = json.loads(dataset.read_text())
    lengths = [len(record["tok_input"]) for record in prompts]
    figures = {}
    for chunk in (4096, 64):
        descriptor = memory_bound_descriptor(
            max_num_batched_tokens=chunk, max_num_seqs=128, kv_cache_dtype="fp8"
        )
        finished = short_run(
            descriptor, Scenario.OFFLINE, Mode.PERFORMANCE, dataset, tmp_path / str(chunk), Smoke(samples=128)
        )
        assert finished.record.loadgen.outcome is not None
        figures[chunk] = finished.record.loadgen.outcome.metric_value
    assert max(lengths) <= 4096  # one chunk each: no extra steps
    extra_steps = sum(-(-length // 64) - 1 for length in lengths) / len(lengths)
    # Every sample runs at once (128 slots), so the pass lasts as long as its slowest sample.
    slowest = max(-(-length // 64) - 1 for length in lengths)
    assert extra_steps > 1
    # Chunks of 64 make the loss large (a quarter), well beyond the wall clock's noise on a loaded machine.
    assert figures[64] / figures[4096] == pytest.approx(127 / (127 + slowest), rel=0.1)


def test_the_shipped_search_spaces_cover_every_engine_that_runs_on_a_gpu() -> None:
    for name, info in BACKENDS.items():
        if info.needs_gpu:
            space = space_for(name)
            assert {"kv_cache_dtype", "max_num_seqs", "max_num_batched_tokens"} <= {
                dimension.arg for dimension in space.dimensions
            }
    # The synthetic engine's space names only arguments its timing model takes.
    synthetic = {dimension.arg for dimension in space_for("synthetic").dimensions}
    assert synthetic <= set(SyntheticArgs.model_fields)
    with pytest.raises(UsageProblem, match="--space"):
        space_for("openai")


def test_space_options_parse_as_json_values_in_their_order() -> None:
    space = parse_space(
        ("max_num_seqs=256,512", "kv_cache_dtype=fp8,auto", "attention_backend=null,FLASHINFER")
    )
    assert [(d.arg, d.values) for d in space.dimensions] == [
        ("max_num_seqs", (256, 512)),
        ("kv_cache_dtype", ("fp8", "auto")),
        ("attention_backend", (None, "FLASHINFER")),
    ]
    for wrong in ("max_num_seqs", "=1,2", "max_num_seqs="):
        with pytest.raises(UsageProblem, match="ARG=V1,V2"):
            parse_space((wrong,))
    with pytest.raises(UsageProblem, match="twice"):
        parse_space(("max_num_seqs=1", "max_num_seqs=2"))
    assert parse_space(("replicas=1,2",)).dimensions[0].values == (1, 2)
    for wrong in ("replicas=0,1", "replicas=null", "tensor_parallel_size=two"):
        with pytest.raises(UsageProblem, match="whole numbers"):
            parse_space((wrong,))


def _search(tmp_path: Path, descriptor: dict[str, Any], space: SearchSpace, **changes: Any) -> EngineSearch:
    source = write_json(tmp_path / "fast_cpu.json", descriptor)
    return EngineSearch(
        system=SystemDescriptor.model_validate(descriptor),
        scenario=changes.pop("scenario", Scenario.OFFLINE),
        source=source,
        out=tmp_path / "tuned",
        space=space,
        samples=256,
        dataset=write_dataset(tmp_path / "data.json", samples=256),
        runs_root=tmp_path / "runs",
        **changes,
    )


def test_the_search_keeps_what_pays_and_writes_a_copy_with_its_evidence(tmp_path: Path) -> None:
    space = SearchSpace(
        (
            Dimension(arg="kv_cache_dtype", values=("auto", "fp8"), default="auto"),
            # Beyond what fits (128 at FP8) more slots change nothing: not kept (min_gain).
            Dimension(arg="max_num_seqs", values=(128, 256)),
            Dimension(arg="async_scheduling", values=(True, False), default=True),
            # The synthetic engine refuses this value: the trial says why, the search goes on.
            Dimension(arg="max_num_batched_tokens", values=(0, 4096)),
        )
    )
    # CPU scheduling at 2 ms a step, so that the smallest gain the model predicts is 29 % (FP8 at 64
    # sequences). The engine keeps its schedule on the wall clock, and on CI's loaded two cores one trial
    # once came out 8 % slow: gains count from 12 %, and the measured ratios hold to the model within 12 %.
    noise = 0.12
    descriptor = memory_bound_descriptor(scheduling_ms=2.0)
    search = _search(tmp_path, descriptor, space, min_gain=noise)
    original = search.source.read_bytes()
    seen = []
    result = tune_engine(search, seen.append)

    assert seen == result.trials and result.baseline is result.trials[0]
    tried = [trial.changes for trial in result.trials]
    # kv_cache_dtype "auto" is the descriptor's (unset, the default): not tried again; async false is the
    # descriptor's own value once async true has been tried.
    assert tried == [
        {},
        {"kv_cache_dtype": "fp8"},
        {"kv_cache_dtype": "fp8", "max_num_seqs": 128},
        {"kv_cache_dtype": "fp8", "max_num_seqs": 256},
        {"kv_cache_dtype": "fp8", "max_num_seqs": 128, "async_scheduling": True},
        {"kv_cache_dtype": "fp8", "max_num_seqs": 128, "async_scheduling": True, "max_num_batched_tokens": 0},
        {
            "kv_cache_dtype": "fp8",
            "max_num_seqs": 128,
            "async_scheduling": True,
            "max_num_batched_tokens": 4096,
        },
    ]
    scores = [trial.score for trial in result.trials]
    assert scores[5] is None and "max_num_batched_tokens" in (result.trials[5].problem or "")

    # Tokens/s is running sequences over the step (the ttft of 1 ms aside): the model's arithmetic.
    def per_step(running: int, kv_ms: float, scheduling_ms: float) -> float:
        return running / (2.0 + running * kv_ms + scheduling_ms)

    assert scores[1] / scores[0] == pytest.approx(per_step(64, 0.025, 2) / per_step(64, 0.05, 2), rel=noise)
    assert scores[2] / scores[1] == pytest.approx(per_step(128, 0.025, 2) / per_step(64, 0.025, 2), rel=noise)
    assert scores[3] == pytest.approx(scores[2], rel=noise)  # 256 slots, 128 fit
    assert scores[4] / scores[2] == pytest.approx(
        per_step(128, 0.025, 0) / per_step(128, 0.025, 2), rel=noise
    )
    # Prompts shorter than 4096 tokens take one step either way: no gain, so not kept.
    assert scores[6] == pytest.approx(scores[4], rel=noise)
    assert result.best is result.trials[4]
    assert result.best.best_so_far

    # The copy: the original's file with the best changes on the scenario and the rate it measured.
    assert search.source.read_bytes() == original
    assert result.descriptor_copy == search.out / "fast_cpu.json"
    copy = json.loads(result.descriptor_copy.read_text())
    offline = copy["benchmarks"]["llama3.1-8b"]["scenarios"]["Offline"]
    assert offline["engine_args"] == result.best.changes
    assert offline["user_conf"]["target_qps"] == pytest.approx(result.best.samples_per_second, rel=1e-3)
    assert Path(offline["tuned_from"]) == search.out / "evidence.json"  # written beside it, checked below
    tuned = (
        load_descriptor(result.descriptor_copy).benchmarks["llama3.1-8b"].engine_args_for(Scenario.OFFLINE)
    )
    assert tuned == result.best.engine_args

    # The evidence: every trial with the runs behind it, which exist.
    evidence = json.loads((search.out / "evidence.json").read_text())
    assert [trial["changes"] for trial in evidence["trials"]] == tried
    assert evidence["best"]["changes"] == result.best.changes and not evidence["interrupted"]
    for trial in evidence["trials"]:
        for run_dir in trial["run_dirs"]:
            assert (Path(run_dir) / "run.json").is_file()
    assert evidence["ran_on"]["versions"]["mlcommons-loadgen"]
    # On a GPU host the record lists its GPUs, which the evidence carries as JSON.
    first_run = Path(evidence["trials"][0]["run_dirs"][0]) / "run.json"
    record = json.loads(first_run.read_text())
    record["gpus"] = [{"name": "NVIDIA H200", "memory": "143771 MiB", "driver": "580.159.04"}]
    write_json(first_run, record)
    assert json.dumps(ran_on(evidence["trials"][0]["run_dirs"]))
    assert ran_on(evidence["trials"][0]["run_dirs"])["gpus"][0]["name"] == "NVIDIA H200"

    # The ledger: one tune-trial line per configuration between tune-started and tune-finished.
    events = [event for event in read_events(search.runs_root) if event.event.startswith("tune-")]
    assert [event.event for event in events] == ["tune-started"] + ["tune-trial"] * 7 + ["tune-finished"]
    assert events[2].valid and 'kv_cache_dtype="fp8"' in (events[2].detail or "")
    assert events[6].valid is False
    assert "best" in (events[-1].detail or "")


def test_a_descriptor_whose_own_setting_fails_stops_the_search_with_the_reason(tmp_path: Path) -> None:
    space = SearchSpace((Dimension(arg="max_num_seqs", values=(128,)),))
    # An argument the synthetic engine does not take: the descriptor's own setting cannot run.
    descriptor = memory_bound_descriptor(attention_backend="FLASHINFER")
    search = _search(tmp_path, descriptor, space)
    with pytest.raises(SubmitterError, match=r"own setting has no score.*attention_backend"):
        tune_engine(search, lambda trial: None)
    evidence = json.loads((search.out / "evidence.json").read_text())
    assert len(evidence["trials"]) == 1 and evidence["best"] is None
    assert not (search.out / "fast_cpu.json").exists()


@pytest.mark.slow
def test_a_server_search_scores_each_engine_by_its_best_valid_rate(tmp_path: Path) -> None:
    """With the memory-bound step, FP8 doubles the running sequences: at 16 bits 64 run at 6.2 ms a step,
    64 / (128 x 6.2 ms) = 81 answers/s; at FP8 128 run at the same step, 161 answers/s."""
    space = SearchSpace(
        (
            Dimension(arg="kv_cache_dtype", values=("auto", "fp8"), default="auto"),
            # 32 slots at a 3-ms step: 32 / (128 x 3 ms) = 83 answers/s, under what FP8 holds.
            Dimension(arg="max_num_seqs", values=(32,)),
        )
    )
    descriptor = memory_bound_descriptor(max_num_seqs=128)
    descriptor["benchmarks"]["llama3.1-8b"]["scenarios"]["Server"]["user_conf"]["target_qps"] = 60
    search = _search(
        tmp_path,
        descriptor,
        space,
        scenario=Scenario.SERVER,
        # 8 s: at 1.45 times capacity the wait for a slot grows past the 2-s TTFT limit.
        trial=Smoke(samples=64, min_duration_ms=8000, server_min_queries=512),
        qps_trials=3,
        qps_step=1.4,
    )
    result = tune_engine(search, lambda trial: None)
    baseline, fp8, fewer_slots = result.trials
    assert baseline.score is not None and fp8.score is not None
    # From 60 by 1.4: 84 holds at 16 bits (4 % over capacity, too little to show in 8 s), 117.6 does not,
    # and bisection stays under it. FP8 starts at the rate it must hold to win and holds 1.4 times that.
    assert 84 <= baseline.score < 117.6
    assert fp8.score >= 1.4 * baseline.score * 1.01 * 0.999
    assert result.best is fp8 and len(fp8.run_dirs) >= 2  # several rates on the one engine
    # It fails the rate it must hold to win: one trial, no more.
    assert fewer_slots.score is None and len(fewer_slots.run_dirs) == 1
    records = [json.loads((Path(run) / "run.json").read_text()) for run in fp8.run_dirs]
    assert [record["harness"]["engine_test_number"] for record in records] == list(range(1, len(records) + 1))
    copy = json.loads((search.out / "fast_cpu.json").read_text())
    server = copy["benchmarks"]["llama3.1-8b"]["scenarios"]["Server"]
    assert server["user_conf"]["target_qps"] == fp8.score and server["engine_args"] == {
        "kv_cache_dtype": "fp8"
    }


def test_the_command_prints_the_evidence_as_json_and_refuses_a_malformed_space(tmp_path: Path) -> None:
    write_json(tmp_path / "fast_cpu.json", memory_bound_descriptor())
    write_dataset(tmp_path / "data.json", samples=64)
    common = ("tune-engine", "--system", "fast_cpu.json", "--scenario", "Offline", "--dataset", "data.json")
    wrong = run_cli(*common, "--space", "max_num_seqs", cwd=tmp_path)
    assert wrong.returncode == 2 and "ARG=V1,V2" in wrong.stderr and "Traceback" not in wrong.stderr
    done = run_cli(
        *common,
        "--samples",
        "64",
        "--space",
        "kv_cache_dtype=fp8",
        "--out",
        "tuned",
        "--runs-dir",
        "runs",
        "--json",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    evidence = json.loads(done.stdout)
    assert [trial["changes"] for trial in evidence["trials"]] == [{}, {"kv_cache_dtype": "fp8"}]
    assert 'best: kv_cache_dtype="fp8"' in done.stderr and (tmp_path / "tuned" / "fast_cpu.json").is_file()


def test_replicas_are_searched_on_the_descriptor_and_written_to_the_benchmark(tmp_path: Path) -> None:
    """Two copies of the engine, one process each, hold twice the slots: up to twice the tokens/s (the
    answers' trips between processes take part of a two-second pass on a small CPU)."""
    space = SearchSpace((Dimension(arg="replicas", values=(1, 2)),))
    search = _search(tmp_path, memory_bound_descriptor(async_scheduling=True), space)
    result = tune_engine(search, lambda trial: None)
    single, double = result.trials
    assert double.changes == {"replicas": 2} and double.score is not None and single.score is not None
    assert 1.25 < double.score / single.score < 2.1
    assert result.descriptor_copy is not None
    setup = json.loads(result.descriptor_copy.read_text())["benchmarks"]["llama3.1-8b"]
    assert setup["replicas"] == 2 and "replicas" not in setup["scenarios"]["Offline"].get("engine_args", {})
