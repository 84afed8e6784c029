"""Drafting a descriptor from the machine it runs on.

Collecting (running lscpu, reading /proc/meminfo, asking nvidia-smi) is kept apart from parsing, so
each parser is a pure function of the text a command printed. Whatever cannot be detected stays null
in the draft and is listed, so nothing is guessed.
"""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from submitter.rounds.registry import available_rounds
from submitter.systems.official_description import SystemDescription


@dataclass(frozen=True)
class MachineFacts:
    """Raw text gathered from the machine; None where a source was not available."""

    lscpu: str | None = None
    meminfo: str | None = None
    os_release: str | None = None
    nvidia_smi: str | None = None
    packages: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Draft:
    descriptor: dict[str, Any]
    undetected: list[str]


def parse_lscpu(text: str) -> dict[str, str]:
    values = dict(_colon_pairs(text))
    facts: dict[str, str] = {}
    if model := values.get("Model name"):
        facts["host_processor_model_name"] = re.sub(r"\s+", " ", model).strip()
    if sockets := values.get("Socket(s)"):
        facts["host_processors_per_node"] = sockets
    if cores := values.get("Core(s) per socket"):
        facts["host_processor_core_count"] = cores
    if mhz := values.get("CPU max MHz"):
        facts["host_processor_frequency"] = f"{float(mhz) / 1000:.1f} GHz"
    caches = [
        f"{name.split()[0]} {values[name]}"
        for name in ("L1d cache", "L2 cache", "L3 cache")
        if name in values
    ]
    if caches:
        facts["host_processor_caches"] = ", ".join(caches)
    return facts


def parse_meminfo(text: str) -> dict[str, str]:
    match = re.search(r"^MemTotal:\s+(\d+)\s+kB", text, re.MULTILINE)
    if not match:
        return {}
    return {"host_memory_capacity": f"{round(int(match.group(1)) / 1024**2)} GB"}


def parse_os_release(text: str) -> dict[str, str]:
    values = {key: value.strip().strip('"') for key, value in _equals_pairs(text)}
    name = values.get("PRETTY_NAME") or " ".join(filter(None, (values.get("NAME"), values.get("VERSION_ID"))))
    return {"operating_system": name} if name else {}


def parse_nvidia_smi(text: str) -> tuple[dict[str, str], dict[str, str]]:
    """Facts and software versions from `nvidia-smi --query-gpu=name,memory.total,driver_version
    --format=csv,noheader` output (one line per GPU)."""
    gpus = [[cell.strip() for cell in line.split(",")] for line in text.strip().splitlines() if line.strip()]
    gpus = [gpu for gpu in gpus if len(gpu) >= 3]
    if not gpus:
        return {}, {}
    names = {gpu[0] for gpu in gpus}
    name, memory, driver = gpus[0][:3]
    facts = {
        "accelerators_per_node": str(len(gpus)),
        "accelerator_model_name": name if len(names) == 1 else " + ".join(sorted(names)),
    }
    if mib := re.match(r"(\d+)\s*MiB", memory):
        facts["accelerator_memory_capacity"] = f"{round(int(mib.group(1)) / 1024)} GB"
    return facts, {"NVIDIA driver": driver}


def draft_descriptor(facts: MachineFacts, system_id: str) -> Draft:
    system: dict[str, Any] = dict.fromkeys(SystemDescription.official_keys())
    system.update({"number_of_nodes": "1", "system_type": "datacenter", "status": "available"})
    software: dict[str, str] = {}
    for text, parser in (
        (facts.lscpu, parse_lscpu),
        (facts.meminfo, parse_meminfo),
        (facts.os_release, parse_os_release),
    ):
        if text:
            system.update(parser(text))
    if facts.nvidia_smi:
        gpu_facts, gpu_software = parse_nvidia_smi(facts.nvidia_smi)
        system.update(gpu_facts)
        software.update(gpu_software)
    software.update(facts.packages)
    if software:
        system["other_software_stack"] = software
    if "vllm" in facts.packages:
        system["framework"] = f"vLLM {facts.packages['vllm']}"
    descriptor = {
        "id": system_id,
        "system_desc_id": None,
        "round": available_rounds()[-1],
        "system": system,
        "benchmarks": {},
    }
    undetected = ["system_desc_id", *(key for key, value in system.items() if value is None)]
    return Draft(descriptor=descriptor, undetected=undetected)


def collect_facts() -> MachineFacts:
    """Read the live machine; every source is optional."""
    return MachineFacts(
        lscpu=_run(["lscpu"]),
        meminfo=_read(Path("/proc/meminfo")),
        os_release=_read(Path("/etc/os-release")),
        nvidia_smi=_run(
            ["nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader"]
        ),
        packages=_installed_versions(("vllm", "torch", "mlcommons-loadgen", "transformers")),
    )


def _installed_versions(names: tuple[str, ...]) -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def _run(command: list[str]) -> str | None:
    if shutil.which(command[0]) is None:
        return None
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout if result.returncode == 0 else None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _colon_pairs(text: str) -> list[tuple[str, str]]:
    return [
        (key.strip(), value.strip())
        for key, _, value in (line.partition(":") for line in text.splitlines())
        if value.strip()
    ]


def _equals_pairs(text: str) -> list[tuple[str, str]]:
    return [
        (key.strip(), value) for key, _, value in (line.partition("=") for line in text.splitlines()) if value
    ]
