"""The files staging writes rather than copies: measurements JSON, the scenario README, calibration.md.

Each comes from a template (`measurements/<benchmark>.json`, `templates/*.j2`) filled from the
descriptor and the chosen runs' run.json, so the README states exactly what ran.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import jinja2

from submitter.errors import SubmitterError
from submitter.fileformats.run_mode import Mode
from submitter.fileformats.run_record import scores_text
from submitter.resources import shipped_dir
from submitter.rounds.models import RoundRules
from submitter.stage.selection import ChosenRun
from submitter.systems.descriptor import SystemDescriptor


def _environment(folder: str) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(shipped_dir(folder)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        autoescape=False,  # Markdown and JSON, not HTML
    )


def measurements(system: SystemDescriptor, benchmark: str, rules: RoundRules) -> dict[str, str]:
    """measurements.json: the benchmark's template, then the descriptor's own values on top."""
    name = f"{benchmark}.json"
    try:
        text = (
            _environment("measurements")
            .get_template(name)
            .render(generation=rules.benchmark(benchmark).generation, setup=system.benchmarks[benchmark])
        )
    except jinja2.TemplateNotFound:
        raise SubmitterError(
            f"no measurements template measurements/{name}; add one (see measurements/README.md)"
        ) from None
    return {**json.loads(text), **system.benchmarks[benchmark].measurements}


@dataclass(frozen=True)
class RunLine:
    mode: Mode
    validity: str
    result: str
    record: Any


def _validity(run: ChosenRun) -> str:
    outcome = run.record.loadgen.outcome
    if run.step.mode is Mode.ACCURACY or outcome is None or outcome.validity is None:
        return "n/a"
    # An audit's queries cannot meet the performance minimums; its verification judges the log instead.
    return f"{outcome.validity} (not judged)" if run.step.mode.audit_test else outcome.validity


def _result_text(run: ChosenRun) -> str:
    record = run.record
    if record.scores:
        return scores_text(record.scores)
    if record.audit:
        verdict = "passed" if record.audit.get("passed") else "FAILED"
        return f"{run.step.mode.audit_test} verification {verdict}"
    outcome = record.loadgen.outcome
    if outcome and outcome.metric_value is not None:
        return f"{outcome.metric_value:,.2f} {outcome.metric_unit}"
    return ""


def scenario_readme(
    system: SystemDescriptor,
    runs: list[ChosenRun],
    *,
    submitter: str,
    division: str,
    rules: RoundRules,
    sources_dir: str,
    notes: list[str],
) -> str:
    order = {Mode.PERFORMANCE: 0, Mode.ACCURACY: 1}  # then the audits
    runs = sorted(runs, key=lambda run: order.get(run.step.mode, len(order)))
    performance = runs[0].record
    lines = [
        RunLine(
            mode=run.step.mode,
            validity=_validity(run),
            result=_result_text(run),
            record=run.record,
        )
        for run in runs
    ]
    not_submittable = sorted({reason for run in runs for reason in run.record.not_submittable})
    return (
        _environment("templates")
        .get_template("scenario_README.md.j2")
        .render(
            system=system,
            benchmark=runs[0].step.benchmark,
            scenario=runs[0].step.scenario,
            submitter=submitter,
            division=division,
            round=rules.name,
            sources_dir=sources_dir,
            runs=lines,
            commit=performance.git.commit,
            engine=performance.engine,
            cluster=performance.cluster,
            loadgen=performance.loadgen,
            versions=performance.versions,
            gpus=performance.gpus,
            not_submittable=not_submittable,
            notes=notes,
        )
    )


def calibration(submitter: str, systems: list[tuple[SystemDescriptor, dict[str, dict[str, str]]]]) -> str:
    items = [{"system": system, "measurements": values} for system, values in systems]
    return (
        _environment("templates").get_template("calibration.md.j2").render(submitter=submitter, systems=items)
    )
