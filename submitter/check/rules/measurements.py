"""Measurements rules: the measurements JSON and the user.conf/README.md beside it (checker.md §8)."""

from __future__ import annotations

from collections.abc import Iterator

from submitter.check.context import RESULT_RULES, ResultContext
from submitter.rule_registry import Problem, Severity

rule = RESULT_RULES.rule


@rule("MEAS-FILE", Severity.ERROR, "the result has a readable measurements JSON where the layout puts it")
def measurements_present(ctx: ResultContext) -> Iterator[Problem]:
    folder = ctx.files.measurements_dir
    measurements = ctx.files.measurements
    expected = ctx.rules.layout.measurements_file.format(system=ctx.files.entry.system)
    if measurements is None:
        yield Problem(
            path=folder,
            message=f"has no measurements file ({expected})",
            fix=f"write {folder}/{expected} with the five measurement fields",
        )
    elif measurements.problem is not None:
        yield Problem(path=measurements.path, message=measurements.problem, fix=measurements.fix)
    elif not isinstance(measurements.data, dict):
        yield Problem(path=measurements.path, message="must hold one JSON object", fix='write {"key": value}')


@rule("MEAS-FIELDS", Severity.ERROR, "the measurements JSON fills every required field")
def measurements_fields(ctx: ResultContext) -> Iterator[Problem]:
    measurements = ctx.files.measurements
    if measurements is None or not isinstance(measurements.data, dict):
        return
    for key in ctx.rules.measurements.required_keys:
        if key not in measurements.data:
            yield Problem(
                path=measurements.path,
                field=key,
                message="is missing",
                fix=f'add "{key}" (submitter stage writes it from measurements/<benchmark>.json)',
            )
        elif not measurements.data[key]:
            yield Problem(
                path=measurements.path,
                field=key,
                message=f"is {measurements.data[key]!r}, not a meaningful value",
                fix=f'fill in "{key}"',
            )


@rule("MEAS-COMPANIONS", Severity.ERROR, "user.conf and README.md sit beside the measurements, not empty")
def companions(ctx: ResultContext) -> Iterator[Problem]:
    folder = ctx.files.measurements_dir
    for name in ctx.rules.measurements.companions:
        if name == "user.conf" and ctx.endpoints:
            continue  # endpoints runs have no LoadGen user.conf
        size = ctx.index.files.get(f"{folder}/{name}")
        if size is None:
            yield Problem(
                path=f"{folder}/{name}", message="is missing", fix=f"copy the run's {name} into {folder}/"
            )
        elif size == 0:
            yield Problem(path=f"{folder}/{name}", message="is empty", fix=f"write the run's real {name}")
