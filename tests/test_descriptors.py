"""The shipped descriptors and one test per descriptor rule, on broken copies of a shipped one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli, write_json

from submitter.errors import SubmitterError
from submitter.fileformats.run_mode import Mode
from submitter.fileformats.run_record import RunRecord
from submitter.rounds.models import Scenario
from submitter.systems.catalog import descriptor_path, find_descriptors
from submitter.systems.validate import load_descriptor, validate_file


def descriptor_data(system_id="dell_xe8640_h100"):
    return json.loads(descriptor_path(system_id).read_text())


def validate(tmp_path, data, name=None):
    path = write_json(tmp_path / f"{name or data['id']}.json", data)
    return validate_file(path)


def errors(findings):
    return {f.rule for f in findings if f.severity == "error"}


def test_three_descriptors_ship_with_the_package():
    assert set(find_descriptors()) >= {"dell_xe8640_h100", "ibm_gx3_l40s", "demo_cpu"}


def test_validate_all_exits_0(tmp_path):
    result = run_cli("systems", "validate", "--all", cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    assert "0 error(s)" in result.stdout


def test_unknown_facts_are_reported_not_invented(tmp_path):
    result = run_cli("systems", "validate", "dell_xe8640_h100", cwd=tmp_path)
    assert result.returncode == 0
    assert "SYS-UNFILLED warning cooling" in result.stdout
    strict = run_cli("systems", "validate", "--strict", "dell_xe8640_h100", cwd=tmp_path)
    assert strict.returncode == 1


def test_the_h100_descriptor_states_the_issue_facts():
    descriptor = load_descriptor(descriptor_path("dell_xe8640_h100"))
    system = descriptor.system
    assert system["accelerator_memory_configuration"] == "HBM3"
    assert system["other_software_stack"]["NVIDIA driver"] == "570.148.08"
    assert descriptor.benchmarks["llama3.1-8b"].model_path == "RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8"
    assert descriptor.submitter == "RedHat" and descriptor.division == "closed"


def test_official_refuses_unknown_meaningful_facts():
    with pytest.raises(SubmitterError, match="cooling"):
        load_descriptor(descriptor_path("dell_xe8640_h100")).official()


def test_official_writes_unknown_optional_facts_as_empty():
    data = descriptor_data("demo_cpu")
    data["system"]["hw_notes"] = None
    official = type(load_descriptor(descriptor_path("demo_cpu"))).model_validate(data).official()
    assert official["hw_notes"] == ""


def test_scenario_engine_args_override_and_null_removes():
    setup = load_descriptor(descriptor_path("ibm_gx3_l40s")).benchmarks["llama3.1-8b"]
    server = setup.engine_args_for(Scenario.SERVER)
    assert server["gpu_memory_utilization"] == 0.96
    assert "max_num_seqs" not in server
    assert setup.engine_args_for(Scenario.OFFLINE)["max_num_seqs"] == 512


def test_fixed_user_conf_keys_are_rejected(tmp_path):
    data = descriptor_data()
    data["benchmarks"]["llama3.1-8b"]["scenarios"]["Server"]["user_conf"]["ttft_latency"] = 5000
    assert "DESC-USER-CONF" in errors(validate(tmp_path, data))


def test_short_min_duration_is_rejected(tmp_path):
    data = descriptor_data()
    data["benchmarks"]["llama3.1-8b"]["scenarios"]["Server"]["user_conf"]["min_duration"] = 120000
    (finding,) = [f for f in validate(tmp_path, data) if f.rule == "DESC-USER-CONF"]
    assert "600000" in finding.message


def test_unknown_round(tmp_path):
    data = descriptor_data()
    data["round"] = "v7.0"
    assert errors(validate(tmp_path, data)) == {"DESC-ROUND"}


def test_a_benchmark_no_round_has_is_an_error(tmp_path):
    data = descriptor_data()
    data["benchmarks"]["llama9-1t"] = data["benchmarks"]["llama3.1-8b"]
    assert errors(validate(tmp_path, data)) == {"DESC-BENCHMARK"}


def test_a_benchmark_of_another_round_is_a_warning_unless_it_is_not_submitted(tmp_path):
    data = descriptor_data()
    data["round"] = "v6.1"
    data["benchmarks"]["mixtral-8x7b"] = dict(data["benchmarks"]["llama3.1-8b"])
    findings = validate(tmp_path, data)
    assert not errors(findings)
    (warning,) = [f for f in findings if f.rule == "DESC-BENCHMARK-ROUND"]
    assert "v5.1, v6.0" in warning.message and "--round v6.0" in warning.fix
    data["benchmarks"]["mixtral-8x7b"]["submit"] = False
    assert "DESC-BENCHMARK-ROUND" not in {f.rule for f in validate(tmp_path, data)}


def test_scenario_must_fit_the_system_type(tmp_path):
    data = descriptor_data()
    data["benchmarks"]["llama3.1-8b"]["scenarios"]["SingleStream"] = {}
    assert errors(validate(tmp_path, data)) == {"DESC-SCENARIO"}


def test_missing_required_scenario_is_a_warning(tmp_path):
    data = descriptor_data()
    del data["benchmarks"]["llama3.1-8b"]["scenarios"]["Server"]
    findings = validate(tmp_path, data)
    (coverage,) = [f for f in findings if f.rule == "DESC-SCENARIO-COVERAGE"]
    assert coverage.severity == "warning" and "one of Interactive or Server" in coverage.message


def test_parallelism_must_fit_the_accelerators(tmp_path):
    data = descriptor_data()
    data["benchmarks"]["llama3.1-8b"]["replicas"] = 2
    assert errors(validate(tmp_path, data)) == {"DESC-PARALLELISM"}


def test_id_must_match_the_file_name(tmp_path):
    assert errors(validate(tmp_path, descriptor_data(), name="other_name")) == {"DESC-ID"}


def test_wrong_types_become_findings_and_the_system_block_is_still_linted(tmp_path):
    data = descriptor_data()
    data["benchmarks"]["llama3.1-8b"]["backend"] = "tensorrt"
    data["system"]["accelerator_memory_configuration"] = "GDDR6"
    findings = validate(tmp_path, data)
    assert errors(findings) == {"DESC-SCHEMA", "SYS-MEMORY-TYPE"}
    assert any(f.field == "benchmarks.llama3.1-8b.backend" for f in findings)


@pytest.mark.parametrize("missing", ["system", "id"])
def test_a_descriptor_missing_a_key_is_judged_as_a_descriptor(tmp_path, missing):
    """Not as an official system file: that would ask to remove id, round and benchmarks (35 findings)."""
    data = descriptor_data()
    del data[missing]
    findings = validate(tmp_path, data, name="dell_xe8640_h100")
    found = [(f.rule, f.field, f.message) for f in findings if f.severity == "error"]
    assert found == [("DESC-SCHEMA", missing, "is missing")]


def test_inside_a_checkout_its_own_descriptors_are_read_and_named(tmp_path, monkeypatch):
    """After `pip install .`, an edit to the checkout's systems/*.json takes effect there at once."""
    checkout = tmp_path / "checkout"
    (checkout / "submitter").mkdir(parents=True)
    (checkout / "submitter" / "__init__.py").write_text("")
    (checkout / "pyproject.toml").write_text('[project]\nname = "submitter"\n')
    (checkout / "systems").mkdir()
    edited = descriptor_data("demo_cpu")
    edited["system"]["system_name"] = "Edited in the checkout"
    write_json(checkout / "systems" / "demo_cpu.json", edited)
    (checkout / "runs").mkdir()
    inside = run_cli("systems", "show", "demo_cpu", cwd=checkout / "runs")
    assert inside.returncode == 0, inside.stderr
    assert json.loads(inside.stdout)["system"]["system_name"] == "Edited in the checkout"
    assert inside.stderr.strip() == f"demo_cpu: {checkout / 'systems' / 'demo_cpu.json'}"
    outside = run_cli("systems", "show", "demo_cpu", cwd=tmp_path)
    assert json.loads(outside.stdout)["system"]["system_name"] != "Edited in the checkout"
    monkeypatch.chdir(tmp_path)  # outside any checkout: the installed copy
    assert outside.stderr.strip() == f"demo_cpu: {descriptor_path('demo_cpu')}"


def test_user_folders_come_before_shipped_descriptors(tmp_path):
    data = descriptor_data("demo_cpu")
    data["system_desc_id"] = "Mine_1xSynthetic"
    write_json(tmp_path / "demo_cpu.json", data)
    env = {"SUBMITTER_SYSTEMS_PATH": str(tmp_path)}
    result = run_cli("systems", "show", "demo_cpu", cwd=tmp_path, env=env)
    assert result.returncode == 0
    assert json.loads(result.stdout)["system_desc_id"] == "Mine_1xSynthetic"


def test_an_unknown_id_names_a_search_folder_that_does_not_exist(tmp_path):
    env = {"SUBMITTER_SYSTEMS_PATH": str(tmp_path / "my-systems")}  # a typo, or never created
    result = run_cli("systems", "show", "mine", cwd=tmp_path, env=env)
    assert result.returncode == 2
    assert f"$SUBMITTER_SYSTEMS_PATH names {tmp_path / 'my-systems'}: not a folder" in result.stderr


def test_a_descriptor_saved_with_a_byte_order_mark_is_named_so(tmp_path):
    path = tmp_path / "demo_cpu.json"
    path.write_bytes(b"\xef\xbb\xbf" + descriptor_path("demo_cpu").read_bytes())
    result = run_cli("systems", "validate", str(path), cwd=tmp_path)
    assert result.returncode == 1
    assert "starts with a byte-order mark (BOM); fix: save it as UTF-8 without a BOM" in result.stdout


def test_show_official_of_an_incomplete_system_is_one_clear_error(tmp_path):
    result = run_cli("systems", "show", "dell_xe8640_h100", "--official", cwd=tmp_path)
    assert result.returncode == 1
    assert "cooling" in result.stderr and "Traceback" not in result.stderr


def test_list_shows_every_descriptor(tmp_path):
    result = run_cli("systems", "list", "--json", cwd=tmp_path)
    assert result.returncode == 0
    ids = {row["id"]: row for row in json.loads(result.stdout)}
    assert ids["dell_xe8640_h100"]["system_desc_id"] == "XE8640_1xH100_vLLM"


def test_edge_benchmark_cannot_run_on_a_datacenter_system(tmp_path):
    data = descriptor_data()
    data["benchmarks"]["llama3.1-8b-edge"] = {
        "backend": "vllm",
        "model_path": "m",
        "scenarios": {"Offline": {}},
    }
    findings = [f for f in validate(tmp_path, data) if f.rule == "DESC-SCENARIO"]
    assert [f.field for f in findings] == ["benchmarks.llama3.1-8b-edge"]


def test_a_broken_user_descriptor_does_not_hide_the_others(tmp_path):
    (tmp_path / "broken.json").write_text('{"id": "broken", "system": {},\n')
    write_json(tmp_path / "typed.json", {"id": "typed", "system_desc_id": 5, "round": "v6.1", "system": {}})
    result = run_cli("systems", "list", cwd=tmp_path, env={"SUBMITTER_SYSTEMS_PATH": str(tmp_path)})
    assert result.returncode == 1
    assert "dell_xe8640_h100" in result.stdout
    assert "broken.json:2: is not valid JSON" in result.stderr
    assert "typed.json is not a valid descriptor: system_desc_id is 5" in result.stderr
    assert "Traceback" not in result.stderr


def test_benchmark_descriptors_validate():
    """bench/systems holds the descriptors the GPU benchmark scripts run; they must stay valid."""
    from pathlib import Path

    bench_systems = Path(__file__).resolve().parents[1] / "bench" / "systems"
    for path in sorted(bench_systems.glob("*.json")):
        errors = [f.render() for f in validate_file(path) if f.severity.value == "error"]
        assert errors == [], errors


def test_a_tuned_setting_is_the_one_its_full_length_run_held():
    """A scenario's `tuned_from`, in the shipped and the bench descriptors, names the run.json of a
    full-length VALID run with its rate and engine arguments: an edit to either without a new run fails."""
    checkout = Path(__file__).resolve().parents[1]
    paths = [descriptor_path(system_id) for system_id in find_descriptors()]
    named = 0
    for path in paths + sorted((checkout / "bench" / "systems").glob("*.json")):
        descriptor = load_descriptor(path)
        for benchmark, setup in descriptor.benchmarks.items():
            for scenario, scenario_setup in setup.scenarios.items():
                if scenario_setup.tuned_from is None:
                    continue
                named += 1
                where = f"{path.name} {benchmark} {scenario}"
                run = RunRecord.model_validate_json((checkout / scenario_setup.tuned_from).read_text())
                assert (run.benchmark, run.scenario, run.mode) == (benchmark, scenario, Mode.PERFORMANCE)
                assert run.status == "completed" and run.valid and run.loadgen.overrides == {}, where
                assert run.loadgen.user_conf["target_qps"] == scenario_setup.user_conf["target_qps"], where
                engine_args = setup.engine_args_for(scenario)
                assert {name: run.engine.args.get(name) for name in engine_args} == engine_args, where
    assert named >= 4
