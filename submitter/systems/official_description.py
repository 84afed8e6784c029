"""The official MLPerf system description (`<submitter>/systems/<system_desc_id>.json`).

Which keys are official and which must be "meaningful" (non-empty) is a rule of the round: the packs'
`[system]` table holds them (the official checker's lists). Here each key gets what kind of value it
takes and what it means, for `submitter systems schema` and the lint; plain data, so that `check` reads
descriptions without pydantic or jsonschema.
"""

from __future__ import annotations

from enum import StrEnum
from functools import cache
from typing import Any

from submitter.rounds.models import SystemRules
from submitter.rounds.registry import available_rounds, load_round


class Kind(StrEnum):
    TEXT = "a non-empty string"
    FREE_TEXT = "a string"
    # Counts are integers in spirit, but every published tree writes them as strings ("1").
    COUNT = "a whole number, or a string"
    SOFTWARE_STACK = "a non-empty string or a non-empty object"


# The 35 official keys, in the official checker's order.
FIELDS: dict[str, tuple[Kind, str]] = {
    "division": (Kind.TEXT, "closed, open or network; must match the division directory"),
    "submitter": (Kind.TEXT, "organisation name; must match the submitter directory"),
    "status": (Kind.TEXT, "available, preview or rdi"),
    "system_name": (Kind.TEXT, "human-readable system name shown in the results table"),
    "number_of_nodes": (Kind.COUNT, "number of nodes in the system under test"),
    "host_processor_model_name": (Kind.TEXT, "host CPU model, e.g. Intel Xeon Gold 6448Y"),
    "host_processors_per_node": (Kind.COUNT, "CPU sockets per node"),
    "host_processor_core_count": (Kind.COUNT, "cores per host processor"),
    "host_memory_capacity": (Kind.TEXT, "host memory per node, e.g. 128 GB"),
    "host_storage_capacity": (Kind.TEXT, "storage per node, e.g. 1.75 TB"),
    "host_storage_type": (Kind.TEXT, "e.g. NVMe SSD"),
    "accelerators_per_node": (Kind.COUNT, "accelerators used per node (0 for CPU-only systems)"),
    "accelerator_model_name": (Kind.TEXT, "e.g. NVIDIA H100-SXM-80GB"),
    "accelerator_memory_capacity": (Kind.TEXT, "memory per accelerator, e.g. 80 GB"),
    "framework": (Kind.TEXT, "inference framework and version, e.g. vLLM 0.10.0"),
    "operating_system": (Kind.TEXT, "OS and version"),
    "system_type": (Kind.TEXT, "datacenter, edge or datacenter,edge"),
    "other_software_stack": (Kind.SOFTWARE_STACK, "drivers, CUDA, libraries and their versions"),
    "host_processor_frequency": (Kind.FREE_TEXT, "nominal CPU frequency"),
    "host_processor_caches": (Kind.FREE_TEXT, "CPU cache sizes"),
    "host_memory_configuration": (Kind.TEXT, "DIMMs, e.g. 16x 64GB DDR5-4800"),
    "host_processor_interconnect": (Kind.FREE_TEXT, "socket interconnect, e.g. UPI"),
    "host_networking": (Kind.TEXT, "network interfaces of a node"),
    "host_networking_topology": (Kind.TEXT, "how nodes are connected"),
    "accelerator_frequency": (Kind.FREE_TEXT, "accelerator clock"),
    "accelerator_host_interconnect": (Kind.TEXT, "e.g. PCIe Gen5 x16"),
    "accelerator_interconnect": (Kind.TEXT, "accelerator-to-accelerator link, e.g. NVLink"),
    "accelerator_interconnect_topology": (Kind.FREE_TEXT, "e.g. NVSwitch, fully connected"),
    "accelerator_memory_configuration": (Kind.TEXT, "memory technology, e.g. HBM3"),
    "accelerator_on-chip_memories": (Kind.FREE_TEXT, "on-chip memories (the key is spelled with a hyphen)"),
    "cooling": (Kind.TEXT, "air or liquid"),
    "hw_notes": (Kind.FREE_TEXT, "free-form hardware notes"),
    "sw_notes": (Kind.FREE_TEXT, "free-form software notes"),
    "host_network_card_count": (Kind.COUNT, "network cards per node"),
    "system_type_detail": (Kind.FREE_TEXT, "free-form detail on the system type"),
}
# Extra keys seen in published trees that the official checker tolerates; not worth a warning.
TOLERATED_EXTRA_KEYS = frozenset({"host_processor_vcpu_count", "system_power_capacity"})


@cache
def system_rules() -> SystemRules:
    """The newest round's system rules, for descriptions read outside a round (`systems validate FILE`)."""
    return load_round(available_rounds()[-1]).system


class SystemDescription:
    """The official description's keys and schema (the pack's lists, the kinds above)."""

    @staticmethod
    def official_keys() -> tuple[str, ...]:
        return system_rules().required_keys

    @staticmethod
    def meaningful_keys() -> frozenset[str]:
        return frozenset(system_rules().meaningful_keys)

    @staticmethod
    def json_schema() -> dict[str, Any]:
        meaningful = SystemDescription.meaningful_keys()
        return {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "MLPerf Inference system description",
            "description": "One system as the official checker reads it; unknown extra keys are allowed.",
            "type": "object",
            "required": list(SystemDescription.official_keys()),
            "additionalProperties": True,
            "properties": {
                key: {
                    **_kind_schema(FIELDS[key][0]),
                    "description": FIELDS[key][1],
                    "x-meaningful": key in meaningful,
                }
                for key in SystemDescription.official_keys()
            },
        }


def _kind_schema(kind: Kind) -> dict[str, Any]:
    text = {"type": "string", "minLength": 1}
    if kind is Kind.TEXT:
        return text
    if kind is Kind.FREE_TEXT:
        return {"type": "string"}
    if kind is Kind.COUNT:
        return {"anyOf": [{"type": "integer", "minimum": 0}, text]}
    return {"anyOf": [text, {"type": "object", "minProperties": 1}]}


def kind_error(kind: Kind, value: Any) -> bool:
    """Whether `value` is not of `kind` (the same judgement as json_schema())."""
    if kind is Kind.FREE_TEXT:
        return not isinstance(value, str)
    if isinstance(value, str):
        return not value
    if kind is Kind.COUNT:
        return not (isinstance(value, int) and not isinstance(value, bool) and value >= 0)
    if kind is Kind.SOFTWARE_STACK:
        return not (isinstance(value, dict) and value)
    return True
