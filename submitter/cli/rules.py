"""`submitter rules`: every rule id, its severity and what it checks."""

from __future__ import annotations

from typing import Any

import click

from submitter.check.checker import PERFORMANCE_RULES, RESULT_RULES, TREE_RULES
from submitter.cli.output import echo_json, echo_table
from submitter.package import LEAK_RULES, REPOSITORY_RULES
from submitter.rules import Rule
from submitter.systems.descriptor_rules import DESCRIPTOR_RULES
from submitter.systems.lint import SYSTEM_RULES

RULE_SETS = (
    ("systems validate, check", SYSTEM_RULES),
    ("systems validate", DESCRIPTOR_RULES),
    ("check", TREE_RULES),
    ("check", RESULT_RULES),
    ("check", PERFORMANCE_RULES),
    ("package", REPOSITORY_RULES),  # the checker's hygiene rules, listed once with both users
    ("package", LEAK_RULES),
)


@click.command("rules")
@click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout.")
def list_rules(as_json: bool) -> None:
    """The rules of `systems validate`, `check` and `package`, with their stable ids."""
    users: dict[str, list[str]] = {}
    first: dict[str, Rule[Any]] = {}
    for used_by, rules in RULE_SETS:
        for rule in rules:
            first.setdefault(rule.id, rule)
            users.setdefault(rule.id, []).append(used_by)
    rows = [(rule.id, str(rule.severity), ", ".join(users[rule.id]), rule.summary) for rule in first.values()]
    if as_json:
        echo_json([dict(zip(("rule", "severity", "used_by", "checks"), row, strict=True)) for row in rows])
    else:
        echo_table(rows, headers=("rule", "severity", "used by", "checks that"))
