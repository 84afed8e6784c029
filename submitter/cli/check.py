"""`submitter check`: check a submission tree like the official checker, only stricter and clearer.

For CI as for people: `--select` / `--ignore` choose the rules reported (submitter/check/selection.py),
`--format` the report's form (submitter/check/formats/), `--output` where it goes, and a `submitter.toml`
or `[tool.submitter]` in pyproject.toml holds the defaults (submitter/config.py).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click
from msgspec import Struct

from submitter.check.checker import PERFORMANCE_RULES, RESULT_RULES, TREE_RULES, check_tree
from submitter.check.formats import DEFAULT_FORMAT, FORMATS, formatter
from submitter.check.formats.base import RuleInfo, build_output, root_from_cwd
from submitter.check.rules.system import severity_in_check
from submitter.check.selection import SelectorLayer, describe_unknown, parse_selectors, unknown_selectors
from submitter.check.summary import csv_text
from submitter.check.tree import locate
from submitter.config import CheckConfig, load_config
from submitter.errors import UsageProblem
from submitter.fileio import ensure_writable, write_text_atomic
from submitter.rounds.registry import available_rounds
from submitter.systems.lint import SYSTEM_RULES

COMMAND_LINE = "command line"


class CheckSettings(Struct, frozen=True):
    """The configuration file's settings with the command line's over them."""

    format: str
    strict: bool
    layers: tuple[SelectorLayer, ...]


@click.command("check")
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--round",
    "round_name",
    type=click.Choice(available_rounds()),
    help="The round the tree is for; detected from the logs and layout when omitted.",
)
@click.option("--submitter", help="Check only this submitter's folder.")
@click.option(
    "--csv",
    "csv_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the official summary.csv of the valid results here.",
)
@click.option(
    "--strict/--no-strict",
    default=None,
    help="Hold warnings (wording, hygiene, extra files: form, not the runs) as errors, as package does.",
)
@click.option(
    "--select",
    multiple=True,
    metavar="RULES",
    help="Report only these rule ids or prefixes (SYS, HYG-, PERF-SEED, ALL); repeatable, comma-separated.",
)
@click.option(
    "--ignore",
    multiple=True,
    metavar="RULES",
    help="Do not report these rule ids or prefixes; repeatable, comma-separated. Verdicts do not change.",
)
@click.option(
    "--format",
    "format_name",
    type=click.Choice(list(FORMATS)),
    help="The report's format: " + "; ".join(f"{name}: {f.summary}" for name, f in FORMATS.items()) + ".",
)
@click.option("--json", "as_json", is_flag=True, help="The same as --format json.")
@click.option(
    "--output",
    "-o",
    "output_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the report to this file instead of stdout.",
)
@click.option(
    "--quiet",
    "-q",
    is_flag=True,
    help="Only the findings and their count (nothing when there are none); no table, no notes on stderr.",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Read the settings from this file (a submitter.toml, or a pyproject.toml's [tool.submitter]).",
)
@click.option("--isolated", is_flag=True, help="Read no configuration file.")
def check(
    path: Path,
    round_name: str | None,
    submitter: str | None,
    csv_path: Path | None,
    strict: bool | None,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    format_name: str | None,
    as_json: bool,
    output_path: Path | None,
    quiet: bool,
    config_path: Path | None,
    isolated: bool,
) -> None:
    """Check the submission tree at PATH: a root holding closed/ open/ network/, a division, or one
    submitter folder such as closed/RedHat. Exit 1 when any reported error is found (warnings too with
    --strict), 2 on a usage or input error."""
    started = time.perf_counter()
    rules = check_rules()
    if isolated and config_path is not None:
        raise UsageProblem("--isolated reads no configuration file; leave out --config, or --isolated")
    config = load_config(Path.cwd(), rules, explicit=config_path, isolated=isolated)
    settings = resolve_settings(config, strict, select, ignore, _format_option(format_name, as_json), rules)
    # Before any work: a report or summary that cannot be written is known now, not after the check.
    for destination in (output_path, csv_path):
        if destination is not None:
            ensure_writable(destination)
    if config is not None and not quiet:
        click.echo(f"settings from {config.path}", err=True)

    report = check_tree(path, round_name, submitter, strict=settings.strict)
    if report.detection is not None and not quiet:
        click.echo(f"round {report.rules.name} detected: {report.detection.reason}", err=True)
    if csv_path is not None:
        write_text_atomic(csv_path, csv_text(report.results))
    output = build_output(
        report,
        settings.layers,
        rules,
        root=root_from_cwd(locate(path, submitter).root),
        tree_argument=str(path),
        quiet=quiet,
        color=settings.format == "text" and output_path is None and _stdout_is_terminal(),
        seconds=time.perf_counter() - started,
    )
    text = formatter(settings.format)(output)
    if output_path is not None:
        write_text_atomic(output_path, f"{text}\n" if text else "")
    elif text:
        click.echo(text)
    if output.errors:
        sys.exit(1)


def check_rules() -> dict[str, RuleInfo]:
    """Every rule `check` reports, with its severity there, as `submitter rules` lists it: the system lint
    beyond the official checker's own checks warns."""
    catalog: dict[str, RuleInfo] = {}
    for rule in SYSTEM_RULES:
        catalog[rule.id] = RuleInfo(rule.summary, severity_in_check(rule))
    for rule_set in (TREE_RULES, RESULT_RULES, PERFORMANCE_RULES):
        for rule in rule_set:
            catalog.setdefault(rule.id, RuleInfo(rule.summary, rule.severity))
    return catalog


def resolve_settings(
    config: CheckConfig | None,
    strict: bool | None,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    format_name: str | None,
    rule_ids: dict[str, RuleInfo],
) -> CheckSettings:
    # An empty `select` (in the file, or --select "") selects as if left out: every rule, not none.
    layers = []
    if config is not None and (config.select or config.ignore):
        layers.append(SelectorLayer(str(config.path), config.select or None, config.ignore or ()))
    if select or ignore:
        layers.append(
            SelectorLayer(
                COMMAND_LINE,
                _option_selectors("--select", select, rule_ids) or None,
                _option_selectors("--ignore", ignore, rule_ids),
            )
        )
    return CheckSettings(
        format=format_name or (config.format if config and config.format else DEFAULT_FORMAT),
        strict=strict if strict is not None else bool(config and config.strict),
        layers=tuple(layers),
    )


def _option_selectors(option: str, values: tuple[str, ...], rule_ids: dict[str, RuleInfo]) -> tuple[str, ...]:
    selectors = parse_selectors(values)
    unknown = unknown_selectors(selectors, rule_ids)
    if unknown:
        raise UsageProblem(f"{option}: " + "; ".join(describe_unknown(s, rule_ids) for s in unknown))
    return selectors


def _format_option(format_name: str | None, as_json: bool) -> str | None:
    """--json is --format json (kept for the scripts that use it)."""
    if as_json and format_name not in (None, "json"):
        raise UsageProblem(f"--json is --format json; it cannot go with --format {format_name}")
    return "json" if as_json else format_name


def _stdout_is_terminal() -> bool:
    return click.get_text_stream("stdout").isatty()
