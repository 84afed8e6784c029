"""The review as Markdown and as one self-contained HTML page, from `templates/review.{md,html}.j2`.

The HTML carries its CSS and its charts (inline SVG) inside, loads nothing and runs no script, so it opens
from a mail attachment or an air-gapped laptop. Jinja escapes every value in it (autoescape); the charts
are `Markup` built from escaped text by `plots`.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import jinja2
from markupsafe import Markup

import submitter.report.plots as plots
from submitter import __version__
from submitter.report.headroom import ALLOWANCE_WARN_FRACTION, LATENCY_WARN_SHARE_PERCENT
from submitter.report.model import ResultReview, Review, Status
from submitter.resources import shipped_dir

MARKDOWN_TEMPLATE = "review.md.j2"
HTML_TEMPLATE = "review.html.j2"
MISSING = "\N{EN DASH}"  # a number that is not there


def _environment(*, html: bool) -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(shipped_dir("templates")),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=html,
    )
    environment.filters.update(
        number=format_number,
        percent=format_percent,
        value=format_value,
        cell=markdown_cell,
    )
    return environment


def format_number(value: float | None, digits: int = 2) -> str:
    """Thousands separated; whole numbers without decimals; large ones without trailing zeros."""
    if value is None:
        return MISSING
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"  # exact, and an integer past a double has no float to format
    if float(value).is_integer():
        return f"{value:,.0f}"
    text = f"{value:,.{digits}f}"
    return text.rstrip("0").rstrip(".") if abs(value) >= 1000 else text


def format_percent(value: float | None, digits: int = 2, *, signed: bool = False) -> str:
    if value is None:
        return MISSING
    return f"{value:+.{digits}f} %" if signed else f"{value:.{digits}f} %"


def format_value(value: Any) -> str:
    """A system description value as a reader wants it: objects as key: value, empty ones said so."""
    if value is None:
        return "(null)"
    if value == "":
        return "(empty)"
    if isinstance(value, dict):
        return ", ".join(f"{key}: {format_value(item)}" for key, item in value.items())
    if isinstance(value, list):
        return ", ".join(format_value(item) for item in value)
    return str(value)


def markdown_cell(value: Any) -> str:
    """Text that cannot break a Markdown table row."""
    return str(value).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _thresholds() -> dict[str, str]:
    return {
        "allowance": f"{ALLOWANCE_WARN_FRACTION * 100:g} %",
        "latency": f"{LATENCY_WARN_SHARE_PERCENT:g} %",
    }


def _throughput_charts(review: Review) -> list[tuple[str, Markup]]:
    """One bar chart per unit (all LLM results share Tokens/s), a bar per result with a metric."""
    by_units: dict[str, list[plots.Bar]] = defaultdict(list)
    for result in review.results:
        if result.metric is not None:
            by_units[result.units or "(no unit)"].append(
                plots.Bar(
                    result.system, f"{result.benchmark} · {result.scenario}", result.metric, result.status
                )
            )
    return [(units, plots.throughput_chart(bars, units)) for units, bars in by_units.items()]


def _latency_chart(result: ResultReview) -> Markup | None:
    performance = result.performance
    if performance is None or not (performance.ttft or performance.tpot):
        return None
    limits = {share.name: (share.limit_ms, share.status) for share in result.headroom.latency}
    return plots.latency_chart(
        performance.ttft,
        performance.tpot,
        limits,
        f"{result.id}: token latency percentiles against the round's limits",
    )


def _context(review: Review) -> dict[str, Any]:
    return {
        "review": review,
        "version": __version__,
        "thresholds": _thresholds(),
        "statuses": [Status.PASS, Status.WARN, Status.FAIL],
    }


def render_markdown(review: Review) -> str:
    return _environment(html=False).get_template(MARKDOWN_TEMPLATE).render(**_context(review))


def render_html(review: Review) -> str:
    return (
        _environment(html=True)
        .get_template(HTML_TEMPLATE)
        .render(
            **_context(review),
            colours={str(status): colour for status, colour in plots.STATUS_COLOURS.items()},
            throughput_charts=_throughput_charts(review),
            latency_chart=_latency_chart,
            share_gauge=plots.share_gauge,
            window_gauge=plots.window_gauge,
        )
    )
