from __future__ import annotations

import json
import re
from pathlib import Path

import mlperf_loadgen as lg
import pytest
from conftest import run_cli

from submitter.rounds.models import Scenario, SystemTypeTable, UnknownBenchmarkError
from submitter.rounds.registry import UnknownRoundError, available_rounds, load_round


def test_the_three_rounds_are_known_in_order():
    assert available_rounds() == ("v5.1", "v6.0", "v6.1")


def test_each_round_has_the_benchmarks_its_checker_lists():
    v51, v60, v61 = (set(load_round(name).benchmarks) for name in available_rounds())
    assert len(v51) == 19 and {"resnet", "rgat", "whisper", "pointpainting", "dlrm-v2-99.9"} <= v51
    assert v60 - v51 == {
        "gpt-oss-120b",
        "qwen3-vl-235b-a22b",
        "wan-2.2-t2v-a14b",
        "dlrm-v3",
        "yolo-95",
        "yolo-99",
    }
    assert v60 - v61 == {
        "llama2-70b-99",
        "mixtral-8x7b",
        "llama3.1-405b",
        "retinanet",
        "dlrm-v2-99",
        "dlrm-v2-99.9",
        "pointpainting",
    }
    assert v61 - v60 == {"qwen3.6-27b", "e2e-rag-qna", "e2e-rag-db"}


def test_a_pack_states_scenario_tables_whole():
    """v6.0 keeps retinanet's datacenter-edge table only and leaves dlrm-v2 to the open division."""
    assert set(load_round("v5.1").benchmark("retinanet").scenarios) == set(SystemTypeTable)
    assert set(load_round("v6.0").benchmark("retinanet").scenarios) == {SystemTypeTable.DATACENTER_EDGE}
    assert load_round("v6.0").benchmark("dlrm-v2-99").scenarios == {}
    assert load_round("v6.1").benchmark("stable-diffusion-xl").extra_accuracy_files == {}
    assert len(load_round("v6.0").benchmark("stable-diffusion-xl").extra_accuracy_files["images"]) == 10


@pytest.mark.parametrize("name", available_rounds())
def test_every_metric_a_round_judges_has_a_pattern(name):
    rules = load_round(name)
    for bench in rules.benchmarks.values():
        bounds = [*bench.accuracy.targets, *bench.accuracy.upper_limits]
        bounds += [b for scenario in bench.accuracy.targets_by_scenario.values() for b in scenario]
        assert {b.metric for b in bounds} <= set(rules.accuracy_patterns), bench.name
        assert set(bench.compliance_tests) <= set(rules.compliance), bench.name


def test_folder_names_resolve_as_the_official_checker_resolves_them():
    rules = load_round("v5.1")
    assert rules.benchmark_name("llama3_1-8b") == "llama3.1-8b"
    assert rules.benchmark_name("mobilenet-v1-precision_float-1.0-128") == "resnet"
    assert rules.benchmark_name("bert-99.9-int8") == "bert-99.9"
    assert rules.benchmark_name("llama3_1-70b-fp8_dyn", {"llama3_1-70b-fp8_dyn": "llama2-70b-99"}) == (
        "llama2-70b-99"
    )
    assert rules.benchmark_name("my-model") == "my-model"


def test_qwen3_vl_interactive_has_its_own_target_and_sample_count_in_v6_1():
    bench = load_round("v6.1").benchmark("qwen3-vl-235b-a22b")
    (interactive,) = bench.accuracy.targets_for(Scenario.INTERACTIVE)
    assert interactive.threshold == 0.7878 * 0.99
    assert bench.accuracy.targets_for(Scenario.OFFLINE)[0].threshold == 0.7903 * 0.99
    assert bench.dataset.accuracy_sample_count_by_scenario["Interactive"] == 8000
    assert bench.latency_constraint_ns[Scenario.INTERACTIVE] == 1_500_000_000


def test_each_round_has_its_own_seeds():
    seeds = {name: load_round(name).loadgen.seeds for name in available_rounds()}
    assert len({s.qsl_rng_seed for s in seeds.values()}) == 3
    assert seeds["v6.1"].schedule_rng_seed == 16159082839903944936  # above 2**63: needs the quoted form


def test_deepseek_needs_server_in_v5_1_but_one_of_server_or_interactive_later():
    v51 = load_round("v5.1").benchmark("deepseek-r1").scenarios[SystemTypeTable.DATACENTER]
    v61 = load_round("v6.1").benchmark("deepseek-r1").scenarios[SystemTypeTable.DATACENTER]
    assert Scenario.SERVER in v51.required
    assert v61.required == (Scenario.OFFLINE,)
    assert set(v61.one_of_required) == {Scenario.SERVER, Scenario.INTERACTIVE}


def test_llama3_1_8b_numbers():
    bench = load_round("v6.1").benchmark("llama3.1-8b")
    assert bench.dataset.size == bench.dataset.performance_sample_count == 13368
    assert bench.loadgen_models[Scenario.INTERACTIVE] == "llama3_1-8b-interactive"
    thresholds = {b.metric: b.threshold for b in bench.accuracy.targets}
    assert thresholds["ROUGE1"] == 38.7792 * 0.99
    assert bench.accuracy.upper_limits[0].threshold == pytest.approx(8984408.4)
    assert bench.token_latency_limits[Scenario.INTERACTIVE].ttft_ms == 500
    assert bench.compliance_tests == ("TEST06",)
    rules = load_round("v6.1")
    assert rules.result_key(bench, Scenario.INTERACTIVE) == "result_completed_tokens_per_second"
    assert rules.units(bench, Scenario.INTERACTIVE) == "Tokens/s"


def test_unknown_round_and_benchmark_are_usage_errors():
    with pytest.raises(UnknownRoundError):
        load_round("v4.0")
    with pytest.raises(UnknownBenchmarkError):
        load_round("v6.1").benchmark("mixtral-8x7b")


def test_the_leading_v_is_optional():
    assert load_round("6.1") is load_round("v6.1")


def _detail_log_values(log: Path) -> dict[str, object]:
    values: dict[str, object] = {}
    for line in log.read_text().splitlines():
        record = json.loads(line.removeprefix(":::MLLOG "))
        values.setdefault(record["key"], record["value"])
    return values


def test_v5_1_seeds_are_those_in_red_hats_published_logs(redhat_tree):
    seeds = load_round("v5.1").loadgen.seeds
    for log in redhat_tree.glob("results/*/llama3.1-8b/*/performance/run_1/mlperf_log_detail.txt"):
        values = _detail_log_values(log)
        assert values["effective_qsl_rng_seed"] == seeds.qsl_rng_seed
        assert values["effective_sample_index_rng_seed"] == seeds.sample_index_rng_seed
        assert values["effective_schedule_rng_seed"] == seeds.schedule_rng_seed


def test_v6_1_seeds_are_what_the_pinned_loadgen_writes(tmp_path):
    """Run the real LoadGen wheel for a moment and read the seeds from its detail log."""
    rules = load_round("v6.1")
    user_conf = tmp_path / "user.conf"
    user_conf.write_text("")
    settings = lg.TestSettings()
    settings.scenario = lg.TestScenario.Offline
    # The first FromConfig of a process loads the mlperf.conf embedded in the wheel: the seeds.
    assert settings.FromConfig(str(user_conf), "llama3_1-8b", "Offline") == 0
    settings.mode = lg.TestMode.PerformanceOnly
    settings.min_duration_ms = 0
    settings.min_query_count = 1
    settings.performance_sample_count_override = 8
    settings.use_token_latencies = False

    def issue(samples):
        lg.QuerySamplesComplete([lg.QuerySampleResponse(s.id, 0, 0) for s in samples])

    sut = lg.ConstructSUT(issue, lambda: None)
    qsl = lg.ConstructQSL(8, 8, lambda _: None, lambda _: None)
    log_settings = lg.LogSettings()
    log_settings.log_output.outdir = str(tmp_path)
    log_settings.enable_trace = False
    lg.StartTestWithLogSettings(sut, qsl, settings, log_settings, str(tmp_path / "no-audit.config"))
    lg.DestroyQSL(qsl)
    lg.DestroySUT(sut)

    values = _detail_log_values(tmp_path / "mlperf_log_detail.txt")
    assert values["effective_qsl_rng_seed"] == rules.loadgen.seeds.qsl_rng_seed
    assert values["effective_sample_index_rng_seed"] == rules.loadgen.seeds.sample_index_rng_seed
    assert values["effective_schedule_rng_seed"] == rules.loadgen.seeds.schedule_rng_seed
    assert str(values["loadgen_version"]).startswith(rules.loadgen.version)


def test_rounds_list_names_every_round(tmp_path):
    result = run_cli("rounds", "list", cwd=tmp_path)
    assert result.returncode == 0
    for name in available_rounds():
        assert re.search(rf"^{re.escape(name)}\s", result.stdout, re.MULTILINE)


def test_rounds_show_prints_values_with_their_sources(tmp_path):
    result = run_cli("rounds", "show", "v6.1", "llama3.1-8b", cwd=tmp_path)
    assert result.returncode == 0
    assert "ROUGE1 >= 38.391408 (= 38.7792 x 0.99)" in result.stdout
    assert "Interactive p99 TTFT / TPOT" in result.stdout and "< 500 ms / < 30 ms" in result.stdout
    assert "MODEL_CONFIG['v6.1']" in result.stdout  # sources name the round being shown


def test_rounds_show_json_round_trips_the_rules(tmp_path):
    result = run_cli("rounds", "show", "v6.1", "--json", cwd=tmp_path)
    assert result.returncode == 0
    assert json.loads(result.stdout)["loadgen"]["seeds"]["qsl_rng_seed"] == 2085463073848966840


@pytest.mark.parametrize("args", [("rounds", "show", "v9.9"), ("rounds", "show", "v6.1", "mixtral-8x7b")])
def test_rounds_show_rejects_unknown_names_with_exit_2(tmp_path, args):
    result = run_cli(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr
