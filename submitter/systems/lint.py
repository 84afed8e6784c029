"""Rules for system descriptions: the official schema, then what the official checker lets through.

The official checker only tests that 26 fields are non-empty. These rules also catch placeholders,
memory technology that does not fit the accelerator, an accelerator count in the id that disagrees
with the description, invalid status and system type values, and ids a tree cannot hold.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from msgspec import Struct
from msgspec import field as msgspec_field

from submitter.rounds.models import SystemRules
from submitter.rule_registry import Problem, RuleSet, Severity
from submitter.systems import accelerators
from submitter.systems.official_description import (
    FIELDS,
    TOLERATED_EXTRA_KEYS,
    Kind,
    kind_error,
    system_rules,
)

PLACEHOLDERS = frozenset(
    {"-", "--", "na", "n/a", "tbd", "tba", "todo", "undefined", "unknown", "none", "null", "?", "xxx"}
)
COUNT_KEYS = tuple(key for key, (kind, _) in FIELDS.items() if kind is Kind.COUNT)


class SystemFile(Struct, frozen=True):
    """A parsed system description, from a tree or from a descriptor's `system` block."""

    path: str
    system_id: str
    data: Mapping[str, Any]
    # Keys a descriptor leaves as null: facts nobody has filled in yet (never in a tree file).
    unfilled: frozenset[str] = frozenset()
    # The round's rules for descriptions; the newest round's for a file read outside a round.
    rules: SystemRules = msgspec_field(default_factory=system_rules)

    def text(self, key: str) -> str | None:
        value = self.data.get(key)
        return value.strip() if isinstance(value, str) else None

    def count(self, key: str) -> int | None:
        value = self.data.get(key)
        if isinstance(value, bool):
            return None
        if isinstance(value, int):
            return value
        if isinstance(value, str) and value.strip().isdecimal() and value.strip().isascii():
            return _as_int(value.strip())  # None past int()'s 4300 digits
        return None

    @property
    def network(self) -> bool:
        """The official checker's test: any truthy is_network makes a network system."""
        return bool(self.data.get("is_network"))


SYSTEM_RULES: RuleSet[SystemFile] = RuleSet("system descriptions")
rule = SYSTEM_RULES.rule


@rule(
    "SYS-MISSING", Severity.ERROR, "every official key is present (and the network keys of a network system)"
)
def keys_present(system: SystemFile) -> Iterator[Problem]:
    required = list(system.rules.required_keys)
    if system.network:
        required += [key for key in system.rules.network_keys if key not in required]
    for key in required:
        if key not in system.data and key not in system.unfilled:
            network = " (is_network makes it a network system)" if key in system.rules.network_keys else ""
            yield Problem(
                field=key,
                message=f"is missing{network}; the official checker rejects the system",
                fix=f'add "{key}": {_example(key)}',
            )


@rule("SYS-EMPTY", Severity.ERROR, "the meaningful fields are not empty (as the official checker requires)")
def meaningful_not_empty(system: SystemFile) -> Iterator[Problem]:
    for key in system.rules.meaningful_keys:
        if key in system.data and key not in system.unfilled and not system.data[key]:
            yield Problem(
                field=key,
                message=f"requires a meaningful response but is {system.data[key]!r}",
                fix=f"write the true value, e.g. {_example(key)}",
            )


@rule("SYS-SCHEMA", Severity.ERROR, "values have the types the official schema describes")
def matches_schema(system: SystemFile) -> Iterator[Problem]:
    meaningful = set(system.rules.meaningful_keys)
    for key, (kind, _) in FIELDS.items():
        if key not in system.data or key in system.unfilled:
            continue
        value = system.data[key]
        if key in meaningful and not value:
            continue  # SYS-EMPTY speaks for it
        if kind_error(kind, value):
            yield Problem(field=key, message=f"is {value!r}, expected {kind}", fix=f"write {kind}")


@rule("SYS-UNFILLED", Severity.WARNING, "a descriptor leaves no official fact unknown")
def facts_filled(system: SystemFile) -> Iterator[Problem]:
    meaningful = set(system.rules.meaningful_keys)
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
    cpu_only = system.count("accelerators_per_node") == 0
    for key in sorted(system.rules.meaningful_keys):
        if cpu_only and key.startswith("accelerator_"):
            continue  # a system without accelerators: "N/A" is the true answer for their facts
        value = system.text(key)
        if value is not None and system.data.get(key) != "" and value.lower() in PLACEHOLDERS | {""}:
            yield Problem(
                field=key,
                message=f"holds the placeholder {system.data[key]!r}; reviewers need a real answer",
                fix=f"write what is true, e.g. {_example(key)}; if it truly does not apply, say why in words",
            )


@rule("SYS-STATUS", Severity.ERROR, "status is available, preview or rdi")
def valid_status(system: SystemFile) -> Iterator[Problem]:
    if "status" not in system.data or "status" in system.unfilled:
        return  # SYS-MISSING speaks for it
    status = system.data["status"]
    if not isinstance(status, str) or status.lower() not in system.rules.statuses:
        yield Problem(
            field="status",
            message=f"is {status!r}, expected one of {', '.join(system.rules.statuses)} (any case)",
            fix='write "available" for systems anyone can buy or rent now',
        )


@rule("SYS-SYSTEM-TYPE", Severity.ERROR, "system_type names a category the rules know")
def valid_system_type(system: SystemFile) -> Iterator[Problem]:
    if "system_type" not in system.data or "system_type" in system.unfilled:
        return
    system_type = system.data["system_type"]
    if system_type not in system.rules.system_types:
        yield Problem(
            field="system_type",
            message=f"is {system_type!r}, expected exactly one of {', '.join(system.rules.system_types)} "
            "(the official checker crashes on other values in closed and network)",
            fix='write "datacenter" for server systems (lower case, no spaces)',
        )


@rule(
    "SYS-COUNT",
    Severity.ERROR,
    "the node and accelerator counts are whole numbers (summary.csv multiplies them)",
)
def counts_are_integers(system: SystemFile) -> Iterator[Problem]:
    for key in system.rules.integer_keys:
        value = system.data.get(key)
        if key in system.unfilled or value in (None, ""):
            continue  # SYS-MISSING or SYS-EMPTY speaks for it
        if _as_int(value) is None:
            yield Problem(
                field=key,
                message=f"is {value!r}, which the official checker cannot turn into a whole number "
                "(it crashes writing summary.csv)",
                fix=f'write only the number, e.g. "{_example_count(key)}"',
            )


@rule("SYS-COUNT-TEXT", Severity.ERROR, "processor, core and network card counts are written as numbers")
def other_counts(system: SystemFile) -> Iterator[Problem]:
    for key in COUNT_KEYS:
        value = system.data.get(key)
        if (
            key in system.rules.integer_keys
            or key in system.unfilled
            or value in (None, "")
            or _is_placeholder(value)
        ):
            continue
        if system.count(key) is None:
            yield Problem(
                field=key,
                message=f"is {value!r}; results tables read it as a number",
                fix=f'write only the number, e.g. "{_example_count(key)}", and the detail in '
                f"{'host_networking' if 'network' in key else 'host_processor_model_name'}",
            )


def _as_int(value: Any) -> int | None:
    """int(value) as Python computes it in the official checker, or None where it raises."""
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        return None


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
    official = system.rules.required_keys
    known = {*official, *system.rules.network_keys, *system.rules.power_keys, *TOLERATED_EXTRA_KEYS}
    for key in system.data:
        if key in known:
            continue
        import difflib  # only for a key that is not known, to name the one meant

        close = difflib.get_close_matches(key, official, n=1, cutoff=0.8)
        hint = f'rename it to "{close[0]}"' if close else "remove it or move the fact into hw_notes/sw_notes"
        yield Problem(field=key, message="is not an official key; the official checker ignores it", fix=hint)


@rule("SYS-NETWORK", Severity.ERROR, 'is_network is text, and "true" only outside the closed division')
def network_keys(system: SystemFile) -> Iterator[Problem]:
    if "is_network" not in system.data:
        return
    value = system.data["is_network"]
    if not isinstance(value, str):
        yield Problem(
            field="is_network",
            message=f"is {value!r}; the official checker reads it as text (and fails on anything else)",
            fix='remove is_network for a non-network system, or write "true" for a network division system',
        )
    elif value.lower() == "true" and (system.text("division") or "").lower() == "closed":
        yield Problem(
            field="is_network",
            message='is "true" in the closed division',
            fix='submit network systems in the "network" division',
        )


@rule(
    "SYS-NETWORK-FALSE", Severity.ERROR, "is_network is left out of a non-network system, not written false"
)
def network_false(system: SystemFile) -> Iterator[Problem]:
    value = system.data.get("is_network")
    if isinstance(value, str) and value and value.lower() != "true":
        yield Problem(
            field="is_network",
            message=f'is {value!r}; the official checker treats any non-empty value, even "false", as a '
            "network system's and then requires the network keys",
            fix="remove is_network for a non-network system",
        )


def accelerator_count_in_id(system_id: str) -> tuple[int, str] | None:
    """The accelerator count written into an id, as in 4xH100, 8x_MI300X or H200-SXM-141GBx8."""
    for name in accelerators.names_in(system_id):
        before, after = _count_patterns(name)
        match = before.search(system_id) or after.search(system_id)
        if match:
            return int(match.group(1)), match.group(0)
    return None


@cache
def _count_patterns(name: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    token = re.escape(name).replace(r"\ ", "[ _-]?")
    return (
        re.compile(rf"(?<![A-Za-z0-9])(\d+)\s*[xX][_-]?(?:NVIDIA[_-]?)?{token}(?!\d)", re.IGNORECASE),
        re.compile(rf"(?<![A-Za-z0-9]){token}(?!\d)[\w-]{{0,24}}?[xX](\d+)(?![\dA-Za-z])", re.IGNORECASE),
    )


def _is_placeholder(value: Any) -> bool:
    return isinstance(value, str) and value.strip().lower() in PLACEHOLDERS


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
