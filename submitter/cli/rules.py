"""`submitter rules`: every rule id, its severity in each command that runs it, and what it checks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from submitter.check.checker import PERFORMANCE_RULES, RESULT_RULES, TREE_RULES
from submitter.check.rules.system import severity_in_check
from submitter.cli.output import echo_json, echo_table
from submitter.package.packaging import LEAK_RULES, REPOSITORY_RULES
from submitter.rule_registry import Rule, RuleSet, Severity
from submitter.systems.descriptor_rules import DESCRIPTOR_RULES
from submitter.systems.lint import SYSTEM_RULES


def _as_registered(rule: Rule[Any]) -> Severity:
    return rule.severity


# (command, rules, the severity a rule has there)
RULE_SETS: tuple[tuple[str, RuleSet[Any], Callable[[Rule[Any]], Severity]], ...] = (
    ("systems validate", SYSTEM_RULES, _as_registered),
    ("check", SYSTEM_RULES, severity_in_check),
    ("systems validate", DESCRIPTOR_RULES, _as_registered),
    ("check", TREE_RULES, _as_registered),
    ("check", RESULT_RULES, _as_registered),
    ("check", PERFORMANCE_RULES, _as_registered),
    ("package", REPOSITORY_RULES, _as_registered),  # the checker's hygiene rules, held as errors
    ("package", LEAK_RULES, _as_registered),
)


@click.command("rules")
@click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout.")
def list_rules(as_json: bool) -> None:
    """The rules of `systems validate`, `check` and `package`, with their stable ids."""
    severities: dict[str, dict[str, Severity]] = {}
    first: dict[str, Rule[Any]] = {}
    for command, rules, severity in RULE_SETS:
        for rule in rules:
            first.setdefault(rule.id, rule)
            severities.setdefault(rule.id, {})[command] = severity(rule)
    if as_json:
        echo_json(
            [
                {
                    "rule": rule.id,
                    "severity": {c: str(s) for c, s in severities[rule.id].items()},
                    "checks": rule.summary,
                }
                for rule in first.values()
            ]
        )
        return
    rows = [(rule.id, _severity_text(severities[rule.id]), rule.summary) for rule in first.values()]
    echo_table(rows, headers=("rule", "severity (command)", "checks that"))


def _severity_text(by_command: dict[str, Severity]) -> str:
    """ "error (check, package)", or each severity with its commands where they differ."""
    groups: dict[Severity, list[str]] = {}
    for command, severity in by_command.items():
        groups.setdefault(severity, []).append(command)
    return "; ".join(f"{severity} ({', '.join(commands)})" for severity, commands in groups.items())
