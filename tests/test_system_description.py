"""One test per system rule, each on a broken copy of a valid description."""

from __future__ import annotations

import json

import jsonschema
import pytest
from conftest import run_cli, valid_system, write_json
from hypothesis import given, settings
from hypothesis import strategies as st

from submitter.rounds.registry import load_round
from submitter.systems.lint import SYSTEM_RULES, SystemFile, accelerator_count_in_id
from submitter.systems.official_description import SystemDescription


def lint(data, system_id="Demo_1xSynthetic_CPU", unfilled=frozenset()):
    return SYSTEM_RULES.run(SystemFile(path="sys.json", system_id=system_id, data=data, unfilled=unfilled))


def rules_of(findings):
    return {finding.rule for finding in findings}


def broken(**changes):
    data = valid_system()
    data.update(changes)
    return data


def test_schema_has_the_35_official_keys_and_26_meaningful():
    assert len(SystemDescription.official_keys()) == 35
    assert len(SystemDescription.meaningful_keys()) == 26
    schema = SystemDescription.json_schema()
    assert "accelerator_on-chip_memories" in schema["required"]
    assert schema["properties"]["cooling"]["x-meaningful"] is True


def test_a_valid_description_has_no_findings():
    assert lint(valid_system()) == []


def test_red_hats_published_descriptions_pass_the_schema(redhat_tree):
    validator = jsonschema.Draft202012Validator(SystemDescription.json_schema())
    for path in sorted((redhat_tree / "systems").glob("*.json")):
        assert list(validator.iter_errors(json.loads(path.read_text()))) == [], path.name


def test_missing_key_is_named():
    data = valid_system()
    del data["cooling"]
    (finding,) = lint(data)
    assert (finding.rule, finding.field) == ("SYS-MISSING", "cooling")


def test_misspelled_key_is_missing_and_gets_a_rename_hint():
    data = valid_system()
    data["accelerator_on_chip_memories"] = data.pop("accelerator_on-chip_memories")
    findings = lint(data)
    assert rules_of(findings) == {"SYS-MISSING", "SYS-UNKNOWN-KEY"}
    hint = next(f for f in findings if f.rule == "SYS-UNKNOWN-KEY")
    assert "accelerator_on-chip_memories" in hint.fix


def test_empty_meaningful_field_fails_like_the_official_checker():
    (finding,) = lint(broken(framework=""))
    assert finding.rule == "SYS-EMPTY" and "meaningful" in finding.message


def test_empty_free_field_is_allowed():
    assert lint(broken(hw_notes="")) == []


def test_wrong_type_names_the_expected_type():
    (finding,) = lint(broken(system_name=["a", "list"]))
    assert finding.rule == "SYS-SCHEMA" and "a non-empty string" in finding.message


@pytest.mark.parametrize("placeholder", ["-", "NA", "N/A", "TBD", "undefined", "  "])
def test_placeholders_in_meaningful_fields_are_errors(placeholder):
    (finding,) = lint(broken(cooling=placeholder))
    assert (finding.rule, finding.field) == ("SYS-PLACEHOLDER", "cooling")


def test_a_system_without_accelerators_may_say_n_a_of_their_facts():
    """A CPU-only system's accelerator fields are "N/A" in published trees (the summary carries null)."""
    cpu = {
        "accelerators_per_node": "0",
        **{
            key: "N/A"
            for key in ("accelerator_model_name", "accelerator_memory_capacity", "accelerator_frequency")
        },
    }
    assert [f for f in lint(broken(**cpu)) if f.rule == "SYS-PLACEHOLDER"] == []
    with_one = lint(broken(**{**cpu, "accelerators_per_node": "1"}))
    assert {f.field for f in with_one if f.rule == "SYS-PLACEHOLDER"} >= {"accelerator_model_name"}


def test_memory_technology_must_fit_the_accelerator():
    findings = lint(
        broken(accelerator_model_name="NVIDIA H100-SXM-80GB", accelerator_memory_configuration="GDDR6")
    )
    (finding,) = findings
    assert finding.rule == "SYS-MEMORY-TYPE" and "HBM3" in finding.message


@pytest.mark.parametrize(
    ("model", "memory"),
    [
        ("NVIDIA H100-SXM-80GB", "HBM3"),
        ("NVIDIA H200-SXM-141GB", "HBM3e"),
        ("NVIDIA L40S", "GDDR6"),
        ("NVIDIA B200-SXM-180GB", "HBM3E"),
        ("AMD Instinct MI300X", "HBM3"),
        ("NVIDIA H100-PCIe-80GB", "HBM2e"),
    ],
)
def test_right_memory_technology_passes(model, memory):
    assert lint(broken(accelerator_model_name=model, accelerator_memory_configuration=memory)) == []


def test_hbm3_is_not_hbm3e():
    (finding,) = lint(broken(accelerator_model_name="NVIDIA H200", accelerator_memory_configuration="HBM3"))
    assert finding.rule == "SYS-MEMORY-TYPE"


@pytest.mark.parametrize(
    ("system_id", "count"),
    [
        ("XE8640_4xH100_vLLM", 4),
        ("HPE_Cray_XD670_H200_SXM_141GBx8_TRT", 8),
        ("B200-SXM-180GBx8_TRT", 8),
        ("8xMI300X_2xEPYC_9575F", 8),
        ("C885_H200x8_TRT", 8),
        ("IBM_Cloud_gx3-48x240x2l40s_vLLM", None),
        ("H20_box", None),
        ("1xL40S_vLLM", 1),
    ],
)
def test_accelerator_count_in_ids(system_id, count):
    found = accelerator_count_in_id(system_id)
    assert (found[0] if found else None) == count


def test_id_count_must_match_the_accelerators():
    (finding,) = lint(valid_system(), system_id="Box_4xH100")
    assert finding.rule == "SYS-ID-ACCELERATORS" and "4xH100" in finding.message


def test_id_count_may_be_the_total_over_nodes():
    assert lint(broken(number_of_nodes="2", accelerators_per_node="8"), system_id="2xNode_16xH100") == []


@pytest.mark.parametrize("system_id", ["My Box", ".hidden", "a/b"])
def test_ids_a_tree_cannot_hold(system_id):
    assert rules_of(lint(valid_system(), system_id=system_id)) == {"SYS-ID-CHARS"}


def test_status_values():
    assert lint(broken(status="Available")) == []
    assert rules_of(lint(broken(status="released"))) == {"SYS-STATUS"}


def test_system_type_values():
    assert lint(broken(system_type="edge,datacenter")) == []
    assert rules_of(lint(broken(system_type="Datacenter"))) == {"SYS-SYSTEM-TYPE"}


def test_counts_must_be_whole_numbers():
    assert rules_of(lint(broken(number_of_nodes="two"))) == {"SYS-COUNT"}
    assert lint(broken(number_of_nodes=1)) == []


def test_is_network_false_is_a_trap():
    """Any non-empty is_network makes a network system officially, which then needs 13 more keys."""
    findings = lint(broken(is_network="false"))
    assert rules_of(findings) == {"SYS-NETWORK-FALSE", "SYS-MISSING"}
    assert "even" in next(f.message for f in findings if f.rule == "SYS-NETWORK-FALSE")
    assert {f.field for f in findings if f.rule == "SYS-MISSING"} == set(
        load_round("v6.1").system.network_keys[1:]
    )


def test_is_network_must_be_text_and_not_true_in_closed():
    assert rules_of(lint(broken(is_network=False))) == {"SYS-NETWORK"}
    network = {key: "x" for key in load_round("v6.1").system.network_keys}
    assert rules_of(lint(broken(**{**network, "is_network": "true", "division": "closed"}))) == {
        "SYS-NETWORK"
    }
    assert lint(broken(**{**network, "is_network": "true", "division": "network"})) == []


def test_counts_the_summary_multiplies_are_errors_the_others_warn_in_check():
    assert rules_of(lint(broken(accelerators_per_node="0"))) == set()  # CPU-only systems
    assert rules_of(lint(broken(host_network_card_count="10x 400Gb Infiniband"))) == {"SYS-COUNT-TEXT"}
    assert rules_of(lint(broken(accelerators_per_node="8 GPUs"))) == {"SYS-COUNT"}


def test_unfilled_facts_are_warnings_not_errors():
    data = broken(cooling=None, hw_notes=None)
    findings = lint(data, unfilled=frozenset({"cooling", "hw_notes"}))
    assert rules_of(findings) == {"SYS-UNFILLED"}
    assert all(f.severity == "warning" for f in findings)
    assert any(f.field == "cooling" for f in findings)


json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None)
@given(
    changes=st.dictionaries(st.sampled_from(SystemDescription.official_keys()), json_values, max_size=6),
    system_id=st.text(max_size=30),
)
def test_lint_never_crashes(changes, system_id):
    data = valid_system()
    data.update(changes)
    for finding in lint(data, system_id=system_id):
        assert finding.rule and finding.fix


def test_validate_red_hat_h100_names_memory_and_id_mismatch(redhat_tree, tmp_path):
    path = redhat_tree / "systems" / "XE8640_4xH100_vLLM.json"
    result = run_cli("systems", "validate", str(path), cwd=tmp_path)
    assert result.returncode == 1
    assert "SYS-SCHEMA" not in result.stdout and "SYS-MISSING" not in result.stdout
    assert "SYS-MEMORY-TYPE error accelerator_memory_configuration: is 'GDDR6'" in result.stdout
    assert "says 4xH100 but the description has 1" in result.stdout


def test_validate_json_output_lists_findings(redhat_tree, tmp_path):
    result = run_cli("systems", "validate", "--json", str(redhat_tree / "systems"), cwd=tmp_path)
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert len(report["files"]) == 2
    rules = {f["rule"] for f in report["findings"]}
    assert rules >= {"SYS-MEMORY-TYPE", "SYS-ID-ACCELERATORS", "SYS-PLACEHOLDER"}


def test_validate_reports_malformed_json_with_its_line(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{\n  "division": "closed",\n}\n')
    result = run_cli("systems", "validate", str(path), cwd=tmp_path)
    assert result.returncode == 1
    assert "broken.json:3: JSON-SYNTAX error" in result.stdout
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("target", ["missing.json", "no_such_system"])
def test_validate_unknown_target_is_a_usage_error(tmp_path, target):
    result = run_cli("systems", "validate", target, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1


def test_schema_command_prints_the_schema(tmp_path):
    result = run_cli("systems", "schema", cwd=tmp_path)
    assert result.returncode == 0
    assert json.loads(result.stdout)["properties"]["accelerator_on-chip_memories"]


def test_validate_accepts_a_folder(tmp_path):
    write_json(tmp_path / "Demo_1xSynthetic_CPU.json", valid_system())
    result = run_cli("systems", "validate", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 0, result.stdout


def test_unicode_digits_and_infinity_are_not_counts():
    assert rules_of(lint(broken(number_of_nodes="²"))) == {"SYS-COUNT"}
    assert rules_of(lint(broken(number_of_nodes=float("inf")))) >= {"SYS-SCHEMA"}
