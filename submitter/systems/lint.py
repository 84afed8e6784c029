"""Rules for system descriptions: the official schema, then what the official checker lets through.

The official checker only tests that 26 fields are non-empty. These rules also catch placeholders,
memory technology that does not fit the accelerator, an accelerator count in the id that disagrees
with the description, invalid status and system type values, and ids a tree cannot hold.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import jsonschema

from submitter.rounds.models import SYSTEM_TYPE_TABLES
from submitter.rules import Problem, RuleSet, Severity
from submitter.systems import accelerators
from submitter.systems.description import (
    KNOWN_EXTRA_KEYS,
    NETWORK_KEYS,
    STATUSES,
    SystemDescription,
)

PLACEHOLDERS = frozenset(
    {"-", "--", "na", "n/a", "tbd", "tba", "todo", "undefined", "unknown", "none", "null", "?", "xxx"}
)
COUNT_KEYS = (
    "number_of_nodes",
    "host_processors_per_node",
    "host_processor_core_count",
    "accelerators_per_node",
    "host_network_card_count",
)


@dataclass(frozen=True)
class SystemFile:
    """A parsed system description, from a tree or from a descriptor's `system` block."""

    path: str
    system_id: str
    data: Mapping[str, Any]
    # Keys a descriptor leaves as null: facts nobody has filled in yet (never in a tree file).
    unfilled: frozenset[str] = field(default_factory=frozenset)

    def text(self, key: str) -> str | None:
        value = self.data.get(key)
        return value.strip() if isinstance(value, str) else None

    def count(self, key: str) -> int | None:
        value = self.data.get(key)
        if isinstance(value, bool):
            return None
        if isinstance(value, int):
            return value
        if isinstance(value, str) and value.strip().isdecimal():
            return int(value.strip())
        return None


SYSTEM_RULES: RuleSet[SystemFile] = RuleSet("system descriptions")
rule = SYSTEM_RULES.rule


@cache
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(SystemDescription.json_schema())


@rule("SYS-MISSING", Severity.ERROR, "every one of the 35 official keys is present")
def keys_present(system: SystemFile) -> Iterator[Problem]:
    for key in SystemDescription.official_keys():
        if key not in system.data and key not in system.unfilled:
            yield Problem(
                field=key,
                message="is missing (the official checker rejects the system)",
                fix=f'add "{key}": {_example(key)}',
            )


def _schema_errors(system: SystemFile) -> Iterator[tuple[str, Any]]:
    """(key, offending value) for each schema violation of a present key; "" for the whole object."""
    present = {key: value for key, value in system.data.items() if key not in system.unfilled}
    for error in _validator().iter_errors(present):
        if error.validator == "required":
            continue  # SYS-MISSING says it with the key's name
        yield (str(error.absolute_path[0]) if error.absolute_path else ""), error.instance


@rule(
    "SYS-EMPTY", Severity.ERROR, "the 26 meaningful fields are not empty (as the official checker requires)"
)
def meaningful_not_empty(system: SystemFile) -> Iterator[Problem]:
    for key, value in _schema_errors(system):
        if key in SystemDescription.meaningful_keys() and _is_empty(value):
            yield Problem(
                field=key,
                message=f"requires a meaningful response but is {value!r}",
                fix=f"write the true value, e.g. {_example(key)}",
            )


@rule("SYS-SCHEMA", Severity.ERROR, "values have the types the official schema describes")
def matches_schema(system: SystemFile) -> Iterator[Problem]:
    for key, value in _schema_errors(system):
        if not key:
            yield Problem(
                message=f"must be a JSON object, found {_json_type(value)}",
                fix="write the description as one JSON object of key/value pairs",
            )
        elif not (key in SystemDescription.meaningful_keys() and _is_empty(value)):
            expected = _describe(_validator().schema["properties"][key])
            yield Problem(field=key, message=f"is {value!r}, expected {expected}", fix=f"write {expected}")


@rule("SYS-UNFILLED", Severity.WARNING, "a descriptor leaves no official fact unknown")
def facts_filled(system: SystemFile) -> Iterator[Problem]:
    meaningful = SystemDescription.meaningful_keys()
    for key in sorted(system.unfilled & meaningful):
        yield Problem(
            field=key,
            message="is not known yet (null); a submission requires it",
            fix=f"replace null with the system's real value, e.g. {_example(key)}",
        )
    optional = sorted(system.unfilled - meaningful)
    if optional:
        yield Problem(
            message=f"optional facts not known yet (null): {', '.join(optional)}",
            fix='fill them in, or leave them: they go into the tree as "" (not stated)',
        )


@rule("SYS-PLACEHOLDER", Severity.ERROR, "meaningful fields hold facts, not placeholders")
def no_placeholders(system: SystemFile) -> Iterator[Problem]:
    for key in sorted(SystemDescription.meaningful_keys()):
        value = system.text(key)
        if value is not None and system.data.get(key) != "" and value.lower() in PLACEHOLDERS | {""}:
            yield Problem(
                field=key,
                message=f"holds the placeholder {system.data[key]!r}; reviewers need a real answer",
                fix=f"write what is true, e.g. {_example(key)}; if it truly does not apply, say why in words",
            )


@rule("SYS-STATUS", Severity.ERROR, "status is available, preview or rdi")
def valid_status(system: SystemFile) -> Iterator[Problem]:
    status = system.text("status")
    if status and status.lower() not in PLACEHOLDERS and status.lower() not in STATUSES:
        yield Problem(
            field="status",
            message=f"is {status!r}, expected one of {', '.join(STATUSES)}",
            fix='write "available" for systems anyone can buy or rent now',
        )


@rule("SYS-SYSTEM-TYPE", Severity.ERROR, "system_type names a category the rules know")
def valid_system_type(system: SystemFile) -> Iterator[Problem]:
    system_type = system.data.get("system_type")
    if isinstance(system_type, str) and system_type and system_type not in SYSTEM_TYPE_TABLES:
        yield Problem(
            field="system_type",
            message=f"is {system_type!r}, expected exactly one of {', '.join(SYSTEM_TYPE_TABLES)} "
            "(the official checker crashes on other values in closed and network)",
            fix='write "datacenter" for server systems (lower case, no spaces)',
        )


@rule("SYS-COUNT", Severity.ERROR, "node, processor, core, accelerator and NIC counts are whole numbers")
def counts_are_integers(system: SystemFile) -> Iterator[Problem]:
    for key in COUNT_KEYS:
        value = system.data.get(key)
        if key in system.unfilled or value in (None, "") or _is_placeholder(value):
            continue  # SYS-MISSING, SYS-SCHEMA or SYS-PLACEHOLDER already speak for it
        count = system.count(key)
        if count is None or count < 1:
            yield Problem(
                field=key,
                message=f"is {value!r}, expected a whole number of at least 1",
                fix=f'write only the number, e.g. "{_example_count(key)}"',
            )


@rule("SYS-MEMORY-TYPE", Severity.ERROR, "accelerator memory technology fits the accelerator model")
def memory_fits_accelerator(system: SystemFile) -> Iterator[Problem]:
    model = system.text("accelerator_model_name")
    configuration = system.text("accelerator_memory_configuration")
    part = accelerators.identify(model) if model else None
    if part is None or configuration is None or _is_placeholder(configuration):
        return
    expected = " or ".join(part.memory)
    named = accelerators.memory_technologies(configuration)
    if not named:
        yield Problem(
            field="accelerator_memory_configuration",
            message=f"is {configuration!r}, which names no memory technology; {model} has {expected}",
            fix=f'write "{part.memory[0]}"',
        )
    elif not named & set(part.memory):
        yield Problem(
            field="accelerator_memory_configuration",
            message=f"is {configuration!r}, but {model} has {expected} memory",
            fix=f'write "{part.memory[0]}"',
        )


@rule("SYS-ID-ACCELERATORS", Severity.ERROR, "an accelerator count in the system id matches the description")
def id_count_matches(system: SystemFile) -> Iterator[Problem]:
    in_id = accelerator_count_in_id(system.system_id)
    per_node = system.count("accelerators_per_node")
    nodes = system.count("number_of_nodes") or 1
    if in_id is None or per_node is None:
        return
    count, written = in_id
    if count not in (per_node, per_node * nodes):
        total = f"{per_node} per node x {nodes} node(s)" if nodes > 1 else f"{per_node}"
        yield Problem(
            field="accelerators_per_node",
            message=f"the system id {system.system_id!r} says {written} but the description has {total} "
            "accelerator(s)",
            fix="name the system after what was measured (e.g. 1xH100 for one GPU of a 4-GPU host) "
            "or correct accelerators_per_node / number_of_nodes",
        )


@rule("SYS-ID-CHARS", Severity.ERROR, "the system id can be a file and directory name in a tree")
def id_is_tree_safe(system: SystemFile) -> Iterator[Problem]:
    system_id = system.system_id
    if not system_id or system_id.startswith(".") or re.search(r"[\s/\\]", system_id):
        yield Problem(
            field="system_desc_id",
            message=f"{system_id!r} cannot name a file in a submission tree "
            "(no spaces, slashes or leading dot)",
            fix="use letters, digits, '_', '-' and '.', e.g. XE8640_1xH100_vLLM",
        )


@rule("SYS-UNKNOWN-KEY", Severity.WARNING, "no misspelled or unknown keys")
def no_unknown_keys(system: SystemFile) -> Iterator[Problem]:
    official = SystemDescription.official_keys()
    for key in system.data:
        if key in official or key in KNOWN_EXTRA_KEYS:
            continue
        close = difflib.get_close_matches(key, official, n=1, cutoff=0.8)
        hint = f'rename it to "{close[0]}"' if close else "remove it or move the fact into hw_notes/sw_notes"
        yield Problem(field=key, message="is not an official key; the official checker ignores it", fix=hint)


@rule("SYS-NETWORK", Severity.ERROR, "network systems describe their network; others omit is_network")
def network_keys(system: SystemFile) -> Iterator[Problem]:
    if "is_network" not in system.data:
        return
    value = system.data["is_network"]
    if not isinstance(value, str) or value.strip().lower() not in ("true", ""):
        yield Problem(
            field="is_network",
            message=f'is {value!r}; the official checker treats any non-empty value, even "false", '
            "as a network system and then requires the network keys",
            fix='remove is_network for a non-network system, or write "true" for a network division system',
        )
        return
    if value.strip().lower() == "true":
        missing = [key for key in NETWORK_KEYS if not system.data.get(key)]
        if missing:
            yield Problem(
                field="is_network",
                message=f'is "true" but {", ".join(missing)} are missing or empty',
                fix="describe the network between LoadGen and the SUT in those keys",
            )
        if (system.text("division") or "").lower() == "closed":
            yield Problem(
                field="is_network",
                message='is "true" in the closed division',
                fix='submit network systems in the "network" division',
            )


def accelerator_count_in_id(system_id: str) -> tuple[int, str] | None:
    """The accelerator count written into an id, as in 4xH100, 8x_MI300X or H200-SXM-141GBx8."""
    for name in accelerators.all_part_names():
        token = re.escape(name).replace(r"\ ", "[ _-]?")
        before = re.search(
            rf"(?<![A-Za-z0-9])(\d+)\s*[xX][_-]?(?:NVIDIA[_-]?)?{token}(?!\d)", system_id, re.IGNORECASE
        )
        after = re.search(
            rf"(?<![A-Za-z0-9]){token}(?!\d)[\w-]{{0,24}}?[xX](\d+)(?![\dA-Za-z])", system_id, re.IGNORECASE
        )
        match = before or after
        if match:
            return int(match.group(1)), match.group(0)
    return None


def _is_placeholder(value: Any) -> bool:
    return isinstance(value, str) and value.strip().lower() in PLACEHOLDERS


def _is_empty(value: Any) -> bool:
    return value in ("", {}, [], 0) or value is False or value is None


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def _describe(schema: Mapping[str, Any]) -> str:
    if "anyOf" in schema:
        return " or ".join(_describe(option) for option in schema["anyOf"])
    kind = schema.get("type")
    if kind == "string":
        return "a non-empty string" if schema.get("minLength") else "a string"
    if kind == "integer":
        return f"an integer >= {schema['minimum']}" if "minimum" in schema else "an integer"
    if kind == "object":
        return "a non-empty object" if schema.get("minProperties") else "an object"
    return str(kind)


_EXAMPLES = {
    "division": '"closed"',
    "submitter": '"RedHat"',
    "status": '"available"',
    "system_type": '"datacenter"',
    "accelerator_memory_configuration": '"HBM3"',
    "cooling": '"air"',
    "host_storage_type": '"NVMe SSD"',
    "host_memory_configuration": '"16x 64GB DDR5-4800"',
    "host_networking": '"1x 100Gb Ethernet"',
    "host_networking_topology": '"single node, no cluster network"',
    "accelerator_interconnect": '"NVLink 4 (not used: one GPU)"',
    "framework": '"vLLM 0.26.0"',
    "accelerator_host_interconnect": '"PCIe Gen5 x16"',
    "host_storage_capacity": '"1.75 TB"',
    "other_software_stack": '{"cuda": "12.8", "driver": "570.148.08"}',
}


def _example(key: str) -> str:
    if key in COUNT_KEYS:
        return f'"{_example_count(key)}"'
    return _EXAMPLES.get(key, '"<the real value>"')


def _example_count(key: str) -> int:
    return {"host_processors_per_node": 2, "host_processor_core_count": 32}.get(key, 1)
