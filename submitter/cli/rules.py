"""`submitter rules`: every rule id, its severity and what it checks."""

from __future__ import annotations

import click

from submitter.check.checker import RESULT_RULES, TREE_RULES
from submitter.cli.output import echo_json, echo_table
from submitter.systems.descriptor_rules import DESCRIPTOR_RULES
from submitter.systems.lint import SYSTEM_RULES

RULE_SETS = (
    ("systems validate, check", SYSTEM_RULES),
    ("systems validate", DESCRIPTOR_RULES),
    ("check", TREE_RULES),
    ("check", RESULT_RULES),
)


@click.command("rules")
@click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout.")
def list_rules(as_json: bool) -> None:
    """The rules of `systems validate` and `check`, with their stable ids."""
    rows = [
        (rule.id, str(rule.severity), used_by, rule.summary) for used_by, rules in RULE_SETS for rule in rules
    ]
    if as_json:
        echo_json([dict(zip(("rule", "severity", "used_by", "checks"), row, strict=True)) for row in rows])
    else:
        echo_table(rows, headers=("rule", "severity", "used by", "checks that"))
