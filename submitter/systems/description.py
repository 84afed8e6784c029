"""The official MLPerf system description (`<submitter>/systems/<system_desc_id>.json`).

The 35 keys, their exact spelling (`accelerator_on-chip_memories` has a hyphen) and the 26 that the
official checker requires to be "meaningful" (non-empty) come from its `system_desc_id` checks
(shared/spec/checker.md §7). `SystemDescription.json_schema()` is what `submitter systems schema`
prints and what files found in trees are validated against.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

NonEmptyText = Annotated[str, StringConstraints(min_length=1)]
# Counts are integers in spirit, but every published tree writes them as strings ("1").
Count = Annotated[int, Field(ge=1)] | Annotated[str, StringConstraints(min_length=1)]
SoftwareStack = NonEmptyText | Annotated[dict[str, Any], Field(min_length=1)]


def _meaningful(description: str) -> Any:
    return Field(description=description, json_schema_extra={"x-meaningful": True})


def _free(description: str) -> Any:
    return Field(description=description, json_schema_extra={"x-meaningful": False})


class SystemDescription(BaseModel):
    """One system as the official checker reads it; unknown extra keys are allowed, as there."""

    model_config = ConfigDict(
        extra="allow",
        populate_by_name=True,
        title="MLPerf Inference system description",
        json_schema_extra={"additionalProperties": True},
    )

    division: NonEmptyText = _meaningful("closed, open or network; must match the division directory")
    submitter: NonEmptyText = _meaningful("organisation name; must match the submitter directory")
    status: NonEmptyText = _meaningful("available, preview or rdi")
    system_name: NonEmptyText = _meaningful("human-readable system name shown in the results table")
    number_of_nodes: Count = _meaningful("number of nodes in the system under test")
    host_processor_model_name: NonEmptyText = _meaningful("host CPU model, e.g. Intel Xeon Gold 6448Y")
    host_processors_per_node: Count = _meaningful("CPU sockets per node")
    host_processor_core_count: Count = _meaningful("cores per host processor")
    host_memory_capacity: NonEmptyText = _meaningful("host memory per node, e.g. 128 GB")
    host_storage_capacity: NonEmptyText = _meaningful("storage per node, e.g. 1.75 TB")
    host_storage_type: NonEmptyText = _meaningful("e.g. NVMe SSD")
    accelerators_per_node: Count = _meaningful("accelerators used per node")
    accelerator_model_name: NonEmptyText = _meaningful("e.g. NVIDIA H100-SXM-80GB")
    accelerator_memory_capacity: NonEmptyText = _meaningful("memory per accelerator, e.g. 80 GB")
    framework: NonEmptyText = _meaningful("inference framework and version, e.g. vLLM 0.10.0")
    operating_system: NonEmptyText = _meaningful("OS and version")
    system_type: NonEmptyText = _meaningful("datacenter, edge or datacenter,edge")
    other_software_stack: SoftwareStack = _meaningful("drivers, CUDA, libraries and their versions")
    host_processor_frequency: str = _free("nominal CPU frequency")
    host_processor_caches: str = _free("CPU cache sizes")
    host_memory_configuration: NonEmptyText = _meaningful("DIMMs, e.g. 16x 64GB DDR5-4800")
    host_processor_interconnect: str = _free("socket interconnect, e.g. UPI")
    host_networking: NonEmptyText = _meaningful("network interfaces of a node")
    host_networking_topology: NonEmptyText = _meaningful("how nodes are connected")
    accelerator_frequency: str = _free("accelerator clock")
    accelerator_host_interconnect: NonEmptyText = _meaningful("e.g. PCIe Gen5 x16")
    accelerator_interconnect: NonEmptyText = _meaningful("accelerator-to-accelerator link, e.g. NVLink")
    accelerator_interconnect_topology: str = _free("e.g. NVSwitch, fully connected")
    accelerator_memory_configuration: NonEmptyText = _meaningful("memory technology, e.g. HBM3")
    accelerator_on_chip_memories: str = Field(
        alias="accelerator_on-chip_memories",
        description="on-chip memories (the key is spelled with a hyphen)",
        json_schema_extra={"x-meaningful": False},
    )
    cooling: NonEmptyText = _meaningful("air or liquid")
    hw_notes: str = _free("free-form hardware notes")
    sw_notes: str = _free("free-form software notes")
    host_network_card_count: Count = _meaningful("network cards per node")
    system_type_detail: str = _free("free-form detail on the system type")

    @classmethod
    def official_keys(cls) -> tuple[str, ...]:
        """The 35 official keys, spelled as in the JSON files."""
        return tuple(field.alias or name for name, field in cls.model_fields.items())

    @classmethod
    def meaningful_keys(cls) -> frozenset[str]:
        return frozenset(
            field.alias or name
            for name, field in cls.model_fields.items()
            if isinstance(field.json_schema_extra, dict) and field.json_schema_extra["x-meaningful"]
        )

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        schema = cls.model_json_schema(by_alias=True)
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        return schema


# Allowed values, compared the way the official checker compares them (checker.md §7).
STATUSES = ("available", "preview", "rdi")
# Keys that become required when a system says it is a network system (`is_network` truthy).
NETWORK_KEYS = (
    "is_network",
    "network_type",
    "network_media",
    "network_rate",
    "nic_loadgen",
    "number_nic_loadgen",
    "net_software_stack_loadgen",
    "network_protocol",
    "number_connections",
    "nic_sut",
    "number_nic_sut",
    "net_software_stack_sut",
    "network_topology",
)
# Extra keys seen in published trees that the official checker tolerates; not worth a warning.
KNOWN_EXTRA_KEYS = frozenset({*NETWORK_KEYS, "host_processor_vcpu_count", "system_power_capacity"})
