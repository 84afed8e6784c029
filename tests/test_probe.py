from __future__ import annotations

import json

from conftest import run_cli

from submitter.systems.probe import (
    MachineFacts,
    draft_descriptor,
    parse_lscpu,
    parse_meminfo,
    parse_nvidia_smi,
    parse_os_release,
)

LSCPU = """Architecture:            x86_64
Model name:              Intel(R) Xeon(R) Gold 6448Y
Socket(s):               2
Core(s) per socket:      32
CPU max MHz:             4100.0000
L1d cache:               3 MiB (64 instances)
L2 cache:                128 MiB (64 instances)
L3 cache:                120 MiB (2 instances)
"""
NVIDIA_SMI = "NVIDIA H100 80GB HBM3, 81559 MiB, 570.148.08\nNVIDIA H100 80GB HBM3, 81559 MiB, 570.148.08\n"


def test_lscpu():
    facts = parse_lscpu(LSCPU)
    assert facts["host_processor_model_name"] == "Intel(R) Xeon(R) Gold 6448Y"
    assert (facts["host_processors_per_node"], facts["host_processor_core_count"]) == ("2", "32")
    assert facts["host_processor_frequency"] == "4.1 GHz"
    assert facts["host_processor_caches"].startswith("L1d 3 MiB")


def test_meminfo_and_os_release():
    assert parse_meminfo("MemTotal:       131891264 kB\n") == {"host_memory_capacity": "126 GB"}
    os_release = 'NAME="Red Hat Enterprise Linux"\nPRETTY_NAME="Red Hat Enterprise Linux 9.6 (Plow)"\n'
    assert parse_os_release(os_release) == {"operating_system": "Red Hat Enterprise Linux 9.6 (Plow)"}


def test_nvidia_smi():
    facts, software = parse_nvidia_smi(NVIDIA_SMI)
    assert facts == {
        "accelerators_per_node": "2",
        "accelerator_model_name": "NVIDIA H100 80GB HBM3",
        "accelerator_memory_capacity": "80 GB",
    }
    assert software == {"NVIDIA driver": "570.148.08"}


def test_draft_keeps_what_it_cannot_detect_null_and_lists_it():
    facts = MachineFacts(lscpu=LSCPU, nvidia_smi=NVIDIA_SMI, packages={"vllm": "0.26.0"})
    draft = draft_descriptor(facts, "box")
    system = draft.descriptor["system"]
    assert system["framework"] == "vLLM 0.26.0"
    assert system["cooling"] is None and "cooling" in draft.undetected
    assert "accelerator_model_name" not in draft.undetected
    assert "operating_system" in draft.undetected  # no os-release given


def test_probe_on_this_machine_writes_a_draft_and_refuses_to_overwrite(tmp_path):
    target = tmp_path / "draft.json"
    first = run_cli("systems", "probe", "--id", "this_box", "--output", str(target), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    draft = json.loads(target.read_text())
    assert draft["id"] == "this_box" and draft["system"]["host_memory_capacity"]
    assert "not detected" in first.stderr
    second = run_cli("systems", "probe", "--output", str(target), cwd=tmp_path)
    assert second.returncode == 2 and json.loads(target.read_text()) == draft
