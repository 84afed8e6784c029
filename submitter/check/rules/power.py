"""Power rules: a result with `performance/power/` is a power measurement (checker.md §10).

Its folders hold exactly the files the Power WG names, its session passes the Power WG's checks
(`submitter.check.power`), its power metric can be computed from spl.txt, and in v6.1 its system
states its nameplate power (`system_power_capacity`, or `<system>_power.yaml`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from submitter.check.context import RESULT_RULES, ResultContext
from submitter.check.rules.structure import file_set
from submitter.rule_registry import Problem, Severity

rule = RESULT_RULES.rule


def _performance(ctx: ResultContext) -> str:
    return f"{ctx.path}/performance"


@rule("POWER-FILES", Severity.ERROR, "run_1/, ranging/ and power/ of a power result hold exactly their files")
def power_file_sets(ctx: ResultContext) -> Iterator[Problem]:
    if ctx.files.power_files is None:
        return
    files = ctx.rules.files
    run_files = (*files.performance_required, *files.power_run_required)
    base = _performance(ctx)
    for folder in ("run_1", "ranging"):
        if not ctx.index.has_dir(f"{base}/{folder}"):
            yield Problem(path=f"{base}/{folder}", message="is missing", fix="copy the power run's folder")
        yield from file_set(ctx, f"{base}/{folder}", run_files, files.performance_optional)
    yield from file_set(ctx, f"{base}/power", files.power_dir_required, ())


@rule("POWER-CHECK", Severity.ERROR, "the power session passes the Power WG's checks")
def power_session(ctx: ResultContext) -> Iterator[Problem]:
    for issue in _issues(ctx):
        if not issue.warning:
            yield Problem(path=f"{_performance(ctx)}", field=issue.check, message=issue.message, fix=_FIX)


@rule("POWER-CHECK-WARNING", Severity.WARNING, "the Power WG's checks raise no warning for audit")
def power_session_warnings(ctx: ResultContext) -> Iterator[Problem]:
    for issue in _issues(ctx):
        if issue.warning:
            yield Problem(path=f"{_performance(ctx)}", field=issue.check, message=issue.message, fix=_FIX)


_FIX = "repeat the power measurement with the mlcommons/power client and server (PTD 1.11.1)"


def _issues(ctx: ResultContext) -> list[Any]:
    return ctx.power_issues


@rule("POWER-METRIC", Severity.ERROR, "spl.txt holds power samples within the run")
def power_metric_known(ctx: ResultContext) -> Iterator[Problem]:
    metric = result_power_metric(ctx)
    if isinstance(metric, str):
        yield Problem(path=f"{_performance(ctx)}/run_1/spl.txt", message=metric, fix=_FIX)


def result_power_metric(ctx: ResultContext) -> float | str | None:
    """Watts (or mJ per query for stream scenarios); a message when it cannot be computed; None: no power."""
    files, log = ctx.files.power_files, ctx.files.performance_log
    if files is None or log is None or ctx.scenario is None:
        return None
    from submitter.check.power import power_metric

    spl = files.get("run_1/spl.txt")
    if spl is None:
        return "spl.txt is missing"
    try:
        text = spl.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"spl.txt is not UTF-8 text (byte {exc.start})"
    value = power_metric(
        log.get("power_begin"),
        log.get("power_end"),
        text,
        ctx.scenario,
        log.get("effective_scenario"),
        log.get("result_query_count"),
    )
    return value if isinstance(value, float) else value.message


@rule("SYS-NAMEPLATE", Severity.ERROR, "a power result's system states its nameplate power, where rounds ask")
def nameplate(ctx: ResultContext) -> Iterator[Problem]:
    if ctx.files.power_files is None or ctx.rules.layout.nameplate_power is None:
        return
    if "system_power_capacity" in (ctx.system or {}):
        return
    path = nameplate_path(ctx)
    if not ctx.index.has_file(path):
        return  # SYS-NAMEPLATE-MISSING warns, as the official checker does
    loaded = ctx.nameplate_file
    if loaded is not None and loaded.problem is not None:
        yield Problem(path=path, message=loaded.problem, fix=loaded.fix)
        return
    watts = nameplate_watts(ctx.nameplate)
    if watts is None:
        yield Problem(
            path=path,
            message="cannot be read as the nameplate power of the system's PSUs",
            fix='list each component\'s "PSUs" (with PowerCapacityWatts) and "Min PSUs Needed"',
        )


@rule("SYS-NAMEPLATE-MISSING", Severity.WARNING, "a power result's system has its nameplate power YAML")
def nameplate_missing(ctx: ResultContext) -> Iterator[Problem]:
    if ctx.files.power_files is None or ctx.rules.layout.nameplate_power is None:
        return
    if "system_power_capacity" not in (ctx.system or {}) and not ctx.index.has_file(nameplate_path(ctx)):
        yield Problem(
            path=nameplate_path(ctx),
            message="is missing, so summary.csv's design_power_watts is None",
            fix="write the nameplate power of the system's PSUs there, or system_power_capacity in its JSON",
        )


def nameplate_path(ctx: ResultContext) -> str:
    entry = ctx.entry
    template = ctx.rules.layout.nameplate_power or ""
    return template.format(division=entry.division, submitter=entry.submitter, system=entry.system)


def design_power_watts(ctx: ResultContext) -> object:
    """summary.csv's design_power_watts: from the round, or (v6.1 power results) the system's nameplate."""
    if ctx.rules.layout.nameplate_power is None:
        return ctx.rules.csv.design_power_watts
    if ctx.files.power_files is None:
        return None
    if "system_power_capacity" in (ctx.system or {}):
        return (ctx.system or {})["system_power_capacity"]
    return nameplate_watts(ctx.nameplate)


def nameplate_watts(data: object) -> float | int | None:
    """The sum over components of their needed PSUs' capacities, largest first (None: nothing readable)."""
    if data is None or isinstance(data, str | int | float | bool):
        return None
    try:
        return _psu_watts(data)
    except (TypeError, AttributeError, ValueError):
        return None


def _psu_watts(data: object) -> float | int:
    if isinstance(data, Mapping):
        keys = {str(key).lower(): key for key in data}
        if "psus" in keys and "min psus needed" in keys:
            needed = data[keys["min psus needed"]]
            psus = data[keys["psus"]]
            capacities = sorted((psu.get("PowerCapacityWatts", 0) for psu in psus), reverse=True)
            return sum(capacities[:needed])
        return sum(_psu_watts(value) for value in data.values() if isinstance(value, Mapping | list))
    if isinstance(data, list):
        return sum(_psu_watts(item) for item in data)
    return 0
