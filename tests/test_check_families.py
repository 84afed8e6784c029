"""Every benchmark of every round: a minimal valid tree passes `check`, and its summary.csv rows say what the
tree's logs say. Expected values are computed here from what the builder wrote, not by the checker's code.

Each tree was also run through MLCommons' official checker while these tests were written: it accepts every
one of them and writes the same summary.csv rows (Location aside).
"""

from __future__ import annotations

import json
import os
import shutil
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from minitree import (
    ENDPOINTS_FIXTURES,
    MULTISTREAM_SAMPLES_PER_QUERY,
    STREAM,
    MiniTree,
    WrittenResult,
    add_endpoints_result,
    add_power,
    build_tree,
    detail_log,
    power_records,
    scenarios_for,
    system_type_for,
)
from one_judge import assert_review_agrees
from treecopy import set_log_value

from submitter.check.checker import CheckReport, check_tree
from submitter.check.load import LinkState, index_files
from submitter.check.tree import locate
from submitter.report import build_review
from submitter.rounds.models import RoundRules, Scenario
from submitter.rounds.registry import available_rounds, load_round
from submitter.rule_registry import Severity

# Seconds and milliseconds of the units summary.csv names (wan reports seconds, other stream scenarios ms).
NS_PER_UNIT = {"ms": 1_000_000, "s": 1_000_000_000}
EDGE_SCENARIOS = ("SingleStream", "MultiStream", "Offline")


def _family_cases() -> list[pytest.ParameterSet]:
    """(round, benchmark, system type table, Server or Interactive) for every benchmark with a scenario table;
    benchmarks that ask for one of Server/Interactive are built once with each."""
    cases = []
    for round_name in available_rounds():
        for name, bench in load_round(round_name).benchmarks.items():
            if not bench.scenarios:
                continue  # open division only: no scenario table for any system type
            table, scenarios = next(iter(bench.scenarios.items()))
            for one_of in scenarios.one_of_required or (None,):
                suffix = f"-{one_of}" if one_of else ""
                cases.append(pytest.param(round_name, name, table, one_of, id=f"{round_name}-{name}{suffix}"))
    return cases


def _errors(report: CheckReport) -> list[str]:
    return [f"{f.rule} {f.path}: {f.message}" for f in report.findings if f.severity is Severity.ERROR]


def _row(report: CheckReport, result: WrittenResult) -> dict[str, str]:
    (row,) = [r for r in report.results if (r.benchmark, r.scenario) == (result.folder, result.scenario)]
    assert row.valid, f"{result.folder}/{result.scenario} is invalid"
    return row.csv[0]


def _units(rules: RoundRules, result: WrittenResult) -> str:
    scenario = Scenario(result.scenario)
    return result.bench.units.get(scenario) or rules.results.units[scenario]


def expected_result(rules: RoundRules, result: WrittenResult) -> float:
    """The metric from the logged records: the benchmark's own key for the scenario LoadGen ran, else the
    round's; stream latencies from ns into the unit the result is reported in."""
    logged = result.logged
    key = result.bench.result_keys.get(logged) or rules.results.keys[logged]
    value = result.performance[key]
    if logged in STREAM:
        unit = _units(rules, result).split("(")[1].rstrip(")")
        value /= NS_PER_UNIT[unit]
    return value


def expected_accuracy(result: WrittenResult) -> str:
    """The official column: `metric: value` per target metric as accuracy.txt prints it, two spaces apart."""
    return "  ".join(f"{metric}: {value}" for metric, value in result.accuracy.items())


def assert_row(report: CheckReport, result: WrittenResult) -> None:
    rules = report.rules
    row = _row(report, result)
    assert float(row["Result"]) == pytest.approx(expected_result(rules, result), rel=1e-12)
    assert row["Units"] == _units(rules, result)
    assert (row["Model"], row["MlperfModel"]) == (result.folder, result.bench.name)
    # The official writer compares the folder with effective_scenario as written: Interactive runs, which
    # LoadGen logs as Server, read as inferred too.
    assert row["inferred"] == ("0" if result.scenario == result.logged.value else "1")
    assert row["Accuracy"] == expected_accuracy(result)


@pytest.mark.parametrize(("round_name", "benchmark", "table", "one_of"), _family_cases())
def test_every_benchmark_has_a_valid_minimal_tree(tmp_path, round_name, benchmark, table, one_of):
    bench = load_round(round_name).benchmarks[benchmark]
    scenarios = scenarios_for(bench, table, one_of)
    tree = build_tree(
        tmp_path, round_name, [("Sys", benchmark, s) for s in scenarios], system_type=system_type_for(table)
    )
    report = check_tree(tmp_path)
    assert report.rules.name == round_name, report.detection
    assert _errors(report) == []
    assert sorted(r.scenario for r in report.results) == sorted(scenarios)
    assert all(r.valid for r in report.results)
    for result in tree.results:
        assert_row(report, result)
    assert assert_review_agrees(tmp_path) == len(scenarios)


def test_the_cases_cover_every_round_and_each_server_or_interactive_choice():
    ids = {case.id for case in _family_cases()}
    assert {case_id.split("-")[0] for case_id in ids} == set(available_rounds())
    assert {"v6.0-gpt-oss-120b-Server", "v6.0-gpt-oss-120b-Interactive", "v6.1-e2e-rag-db"} <= ids
    assert not any("dlrm-v2" in case_id for case_id in ids if case_id.startswith("v6.0"))


def test_a_minimal_tree_has_no_finding_at_all(tmp_path):
    build_tree(tmp_path, "v6.0", [("Sys", "resnet", s) for s in EDGE_SCENARIOS], system_type="edge")
    assert check_tree(tmp_path).findings == []


def _open_tree(tmp_path: Path, round_name: str) -> MiniTree:
    """An open submitter's own name for resnet, mapped in its model_mapping.json."""
    return build_tree(
        tmp_path,
        round_name,
        [("Sys", "OrgNet-v2", "Offline")],
        division="open",
        model_mapping={"OrgNet-v2": "resnet"},
        system_type="edge",
    )


@pytest.mark.parametrize("round_name", available_rounds())
def test_open_division_maps_its_own_benchmark_name(tmp_path, round_name):
    tree = _open_tree(tmp_path, round_name)
    report = check_tree(tmp_path)
    assert _errors(report) == [] and [r.valid for r in report.results] == [True]
    result = tree.result()
    assert result.audits == {}  # the open division is not audited
    assert_row(report, result)
    assert _row(report, result)["MlperfModel"] == "resnet"


@pytest.mark.parametrize("round_name", available_rounds())
def test_open_division_without_the_mapping_is_an_unknown_benchmark(tmp_path, round_name):
    tree = _open_tree(tmp_path, round_name)
    (tree.submitter_dir / tree.rules.model_names.open_mapping_file).unlink()
    report = check_tree(tmp_path, round_name)
    assert "STRUCT-BENCHMARK" in {f.rule for f in report.findings}
    assert [r.valid for r in report.results] == [False]


@pytest.mark.parametrize("round_name", available_rounds())
def test_llama3_1_8b_folder_name_resolves_to_llama3_1_8b(tmp_path, round_name):
    tree = build_tree(tmp_path, round_name, [("Sys", "llama3_1-8b", s) for s in ("Offline", "Server")])
    report = check_tree(tmp_path)
    assert _errors(report) == [] and all(r.valid for r in report.results)
    for result in tree.results:
        assert result.bench.name == "llama3.1-8b"
        assert_row(report, result)


@pytest.mark.parametrize("round_name", available_rounds())
def test_a_link_to_the_code_folder_counts_as_one(tmp_path, round_name):
    """v6 rounds name it src/, v5.1 code/: a link of that name to the other counts (as officially)."""
    tree = build_tree(
        tmp_path, round_name, [("Sys", "resnet", s) for s in EDGE_SCENARIOS], system_type="edge"
    )
    code = tree.code_dir
    other = code.with_name("code" if code.name == "src" else "src")
    code.rename(other)
    assert "STRUCT-CODE" in {f.rule for f in check_tree(tmp_path, round_name).findings}
    os.symlink(other.name, code)
    report = check_tree(tmp_path)
    assert _errors(report) == [] and all(r.valid for r in report.results)
    assert [(f.rule, f.severity, f.path) for f in report.findings] == [
        ("HYG-SYMLINK", Severity.WARNING, code.relative_to(tmp_path).as_posix())
    ]


def test_links_to_folders_are_followed_until_they_loop(tmp_path):
    """A link into another folder is walked like a folder; one back into its own ancestry is reported once."""
    tree = build_tree(tmp_path, "v6.0", [("Sys", "resnet", s) for s in EDGE_SCENARIOS], system_type="edge")
    shared = tree.submitter_dir / "documentation" / "shared"
    shared.mkdir()
    (shared / ".hidden").write_text("x\n")
    os.symlink("../documentation/shared", tree.code_dir / "shared")  # walked: its dot file is found
    (tree.code_dir / "deeper").mkdir()
    os.symlink("../..", tree.code_dir / "deeper" / "up")  # back to the submitter folder: a loop
    report = check_tree(tmp_path)
    code = tree.code_dir.relative_to(tmp_path).as_posix()
    links = {f.path: f.message for f in report.findings if f.rule == "HYG-SYMLINK"}
    assert set(links) == {f"{code}/shared", f"{code}/deeper/up"}
    assert "loops back on itself" in links[f"{code}/deeper/up"]
    assert "loops" not in links[f"{code}/shared"]
    names = {f.path for f in report.findings if f.rule == "HYG-NAME"}
    assert f"{code}/shared/.hidden" in names
    assert _errors(report) == [] and all(r.valid for r in report.results)


def test_a_link_to_a_sibling_folder_indexes_what_the_folder_holds(tmp_path):
    """`src -> code` is indexed as the same entries under src/: files and sizes, folders, links, loops."""
    tree = build_tree(tmp_path, "v6.0", [("Sys", "resnet", s) for s in EDGE_SCENARIOS], system_type="edge")
    code = tree.submitter_dir / "code"
    tree.code_dir.rename(code)
    (code / "pkg" / "empty").mkdir(parents=True)
    (code / "pkg" / ".env").write_text("A=1\n")
    (code / "pkg" / "big.bin").write_bytes(b"x" * 1234)
    os.symlink("..", code / "pkg" / "up")  # back into its ancestry: a loop under either name
    os.symlink("missing", code / "pkg" / "dangling")
    os.symlink("code", tree.submitter_dir / "src")
    index = index_files(locate(tmp_path, None))
    top = tree.submitter_dir.relative_to(tmp_path).as_posix()

    def under(entries, folder):
        prefix = f"{top}/{folder}"
        return {path[len(prefix) :] for path in entries if path == prefix or path.startswith(prefix + "/")}

    def sized(folder):
        prefix = f"{top}/{folder}"
        return {(p[len(prefix) :], n) for p, n in index.files.items() if p.startswith(prefix + "/")}

    assert under(index.files, "src") == under(index.files, "code") and sized("src") == sized("code")
    assert under(index.dirs, "src") == under(index.dirs, "code")
    assert under(index.empty_dirs, "src") == under(index.empty_dirs, "code") == {"/pkg/empty"}
    assert {p.removeprefix(f"{top}/src"): s for p, s in index.symlinks.items() if "/src/" in p} == {
        p.removeprefix(f"{top}/code"): s for p, s in index.symlinks.items() if "/code/" in p
    }
    assert index.symlinks[f"{top}/src/pkg/up"] is LinkState.LOOP
    assert index.symlinks[f"{top}/src/pkg/dangling"] is LinkState.BROKEN
    assert index.files_in(f"{top}/src/pkg") == index.files_in(f"{top}/code/pkg") == [".env", "big.bin"]
    assert index.files[f"{top}/src/pkg/big.bin"] == 1234


@pytest.mark.parametrize(
    "round_name", [name for name in available_rounds() if load_round(name).layout.name == "v6"]
)
def test_a_v6_tree_with_both_code_and_src_is_detected_as_v6(tmp_path, round_name):
    tree = build_tree(
        tmp_path, round_name, [("Sys", "resnet", s) for s in EDGE_SCENARIOS], system_type="edge"
    )
    shutil.copytree(tree.code_dir, tree.submitter_dir / "code")
    report = check_tree(tmp_path)
    assert report.rules.name == round_name
    assert report.detection is not None and "the v6 directory layout agrees" in report.detection.reason
    assert report.findings == []


def _inferred(result: WrittenResult) -> float:
    """The official formulas for an edge result inferred from another scenario's run."""
    log = result.performance
    if (result.scenario, result.logged) == ("Offline", Scenario.SINGLE_STREAM):
        return log["result_qps_without_loadgen_overhead"]
    if (result.scenario, result.logged) == ("Offline", Scenario.MULTI_STREAM):
        mean_ms = log["result_mean_query_latency_ns"] / 1_000_000
        return log["effective_samples_per_query"] * 1000 / mean_ms
    assert (result.scenario, result.logged) == ("MultiStream", Scenario.SINGLE_STREAM)
    return log["early_stopping_latency_ms"] * MULTISTREAM_SAMPLES_PER_QUERY / 1_000_000


@pytest.mark.parametrize("round_name", available_rounds())
@pytest.mark.parametrize(
    ("scenario", "logged"),
    [("Offline", "SingleStream"), ("Offline", "MultiStream"), ("MultiStream", "SingleStream")],
)
def test_an_edge_result_inferred_from_another_run(tmp_path, round_name, scenario, logged):
    specs = [("Sys", "resnet", s) for s in EDGE_SCENARIOS if s != scenario]
    tree = build_tree(tmp_path, round_name, [*specs, ("Sys", "resnet", scenario, logged)], system_type="edge")
    report = check_tree(tmp_path)
    assert _errors(report) == []
    result = tree.result("resnet", scenario)
    row = _row(report, result)
    assert float(row["Result"]) == pytest.approx(_inferred(result), rel=1e-12)
    assert row["inferred"] == "1" and row["Units"] == _units(report.rules, result)


def test_an_inferred_result_of_a_datacenter_system_is_rejected(tmp_path):
    specs = [("Sys", "resnet", "SingleStream"), ("Sys", "resnet", "MultiStream"), ("Sys", "resnet", "Server")]
    build_tree(tmp_path, "v6.0", [*specs, ("Sys", "resnet", "Offline", "SingleStream")], system_type="edge")
    edge = check_tree(tmp_path, "v6.0")
    assert "STRUCT-SCENARIOS" in {f.rule for f in edge.findings}  # Server is not an edge scenario
    system = tmp_path / "closed/Org/systems/Sys.json"
    system.write_text(system.read_text().replace('"edge"', '"datacenter,edge"'))
    assert _errors(check_tree(tmp_path, "v6.0")) == []
    system.write_text(system.read_text().replace('"datacenter,edge"', '"datacenter"'))
    report = check_tree(tmp_path, "v6.0")
    assert "PERF-SCENARIO" in {f.rule for f in report.findings}


def _mean_watts(spl: str, window: tuple[float, float]) -> float:
    """The mean of spl.txt's Watts samples strictly inside LoadGen's power window."""
    from test_check_power import T0

    begin, end = (T0 + timedelta(seconds=s) for s in window)
    watts = [
        float(fields[3])
        for fields in (line.split(",") for line in spl.splitlines())
        if begin < datetime.strptime(fields[1], "%m-%d-%Y %H:%M:%S.%f") < end
    ]
    return sum(watts) / len(watts)


def test_a_power_result_adds_a_row_in_its_power_unit(tmp_path):
    from test_check_power import RANGING_WINDOW, TESTING_WINDOW, Session, stamp

    tree = build_tree(tmp_path, "v6.1", [("Sys", "resnet", s) for s in EDGE_SCENARIOS], system_type="edge")
    result = tree.result("resnet", "Offline")
    session = Session()
    for run, window in (("run_1", TESTING_WINDOW), ("ranging", RANGING_WINDOW)):
        records = power_records(result, stamp(window[0]), stamp(window[1]))
        session.texts[f"{run}/mlperf_log_detail.txt"] = detail_log(records)
    add_power(tree, result, session.files())
    report = check_tree(tmp_path)
    assert report.findings == []
    (row,) = [r for r in report.results if r.scenario == "Offline"]
    performance, power = row.csv
    assert float(performance["Result"]) == pytest.approx(expected_result(report.rules, result))
    assert float(power["Result"]) == pytest.approx(
        _mean_watts(session.texts["run_1/spl.txt"], TESTING_WINDOW)
    )
    assert (power["Units"], power["has_power"], power["design_power_watts"]) == ("Watts", "True", "2000")
    assert performance["design_power_watts"] == "2000"


def test_an_endpoints_result_reports_the_queries_per_second_it_states(tmp_path):
    tree = build_tree(tmp_path, "v6.1", [("Sys", "qwen3-vl-235b-a22b", "Server")])
    fixture = ENDPOINTS_FIXTURES / "qwen3-vl-235b-a22b" / "Offline"
    folder = add_endpoints_result(tree, "Sys", "qwen3-vl-235b-a22b", "Offline", fixture)
    report = check_tree(tmp_path)
    assert report.findings == [] and all(r.valid for r in report.results)
    summary = json.loads((folder / "performance/result_summary.json").read_text())
    scores = json.loads((folder / "accuracy/accuracy_results.json").read_text())["accuracy_scores"]
    (result,) = [r for r in report.results if r.scenario == "Offline"]
    assert result.units == "Samples/s"  # qwen3-vl's results are samples per second
    row = result.csv[0]
    assert float(row["Result"]) == pytest.approx(summary["n_samples_issued"] / (summary["duration_ns"] / 1e9))
    assert row["Accuracy"] == json.dumps(scores[0]["score"]).replace('"', "").strip("{}")
    assert (row["Units"], row["inferred"]) == ("Samples/s", "1")  # endpoints log "offline": not "Offline"


def _llm_offline_endpoints() -> list[str]:
    """v6.1 benchmarks that may come as endpoints results and report Offline in a key of their own (LLMs)."""
    rules = load_round("v6.1")
    return [
        name
        for name, bench in rules.benchmarks.items()
        if bench.endpoints and Scenario.OFFLINE in bench.result_keys and bench.scenarios
    ]


@pytest.mark.parametrize("benchmark", _llm_offline_endpoints())
def test_an_llm_offline_endpoints_result_is_accepted_in_tokens_per_second(tmp_path, benchmark):
    """The official checker's pinned commit looks a benchmark's own Offline key (tokens per second) up
    under the endpoints scenario name "offline", finds none, and reports result_samples_per_second under a
    tokens label; submitter reports the run's tokens per second (`tps`), as the published summary does."""
    bench = load_round("v6.1").benchmarks[benchmark]
    table = next(iter(bench.scenarios))
    others = [s for s in scenarios_for(bench, table) if s != "Offline"]
    tree = build_tree(
        tmp_path, "v6.1", [("Sys", benchmark, s) for s in others], system_type=system_type_for(table)
    )
    folder = add_endpoints_result(tree, "Sys", benchmark, "Offline")
    report = check_tree(tmp_path)
    assert _errors(report) == []
    summary = json.loads((folder / "performance/result_summary.json").read_text())
    (result,) = [r for r in report.results if r.scenario == "Offline"]
    samples_per_second = summary["n_samples_issued"] / (summary["duration_ns"] / 1e9)
    assert summary["tps"] != pytest.approx(samples_per_second)
    assert result.metric == pytest.approx(summary["tps"]) and result.units == "Tokens/s"
    assert float(result.csv[0]["Result"]) == pytest.approx(summary["tps"])


def test_the_llm_offline_endpoints_cases_are_the_endpoints_llms():
    assert {"llama3.1-8b", "gpt-oss-120b"} <= set(_llm_offline_endpoints())


def test_an_accuracy_log_is_judged_by_the_samples_its_qsl_held(tmp_path):
    """LoadGen logs gpt-oss-120b's whole set as asked even when its QSL held fewer: the log covers only
    those, whatever the asked count says."""
    scenarios = ("Offline", "Interactive")
    tree = build_tree(tmp_path, "v6.1", [("Sys", "gpt-oss-120b", scenario) for scenario in scenarios])
    result = tree.result("gpt-oss-120b", "Offline")
    whole = result.bench.dataset.accuracy_sample_count
    assert not _errors(check_tree(tmp_path))
    set_log_value(result.accuracy_log, "effective_accuracy_sample_count", whole)
    set_log_value(result.accuracy_log, "qsl_reported_total_count", 256)
    report = check_tree(tmp_path)
    (finding,) = [finding for finding in report.findings if finding.rule == "ACC-DATASET"]
    assert finding.field == "effective_accuracy_sample_count"
    held = "the QSL held 256 samples (qsl_reported_total_count), so the accuracy log covers 256"
    assert held in finding.message
    assert f"must cover all {whole}" in finding.message
    assert {row.scenario: row.valid for row in report.results} == {"Offline": False, "Interactive": True}


def test_whisper_s_figure_is_named_by_its_unit_except_in_summary_csv(tmp_path):
    """whisper reports result_tokens_per_second, which the official checker and the published summaries
    label Samples/s: summary.csv keeps that label, every other output says Tokens/s."""
    build_tree(tmp_path, "v6.1", [("Sys", "whisper", "Offline")])
    (row,) = check_tree(tmp_path).results
    assert row.valid and row.units == "Tokens/s" and row.csv[0]["Units"] == "Samples/s"
    (reviewed,) = build_review(tmp_path).results
    assert reviewed.units == "Tokens/s"
