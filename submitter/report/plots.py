"""Charts for the review page, as inline SVG written by hand: the page must open without a network, so
no JavaScript library and no image files. Every text that reaches the SVG is escaped.

- `throughput_chart`: one horizontal bar per result (results of one unit together), coloured by status;
- `latency_chart`: TTFT and TPOT percentiles of a Server or Interactive result, with the limit drawn;
- `share_gauge`, `window_gauge`: small bars in table cells, for a share of a latency limit and for
  where gen_len sits in its window.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

from submitter.report.model import Percentile, Status

# One palette for charts and page (render.py puts it into the CSS): GitHub's accessible greens, ambers, reds.
STATUS_COLOURS = {
    Status.PASS: "#1a7f37",
    Status.WARN: "#9a6700",
    Status.FAIL: "#cf222e",
    Status.NOT_JUDGED: "#6e7781",
}
NEUTRAL_BAR = "#8c959f"
AXIS = "#57606a"
GRID = "#d0d7de"
TRACK = "#eaeef2"
GAUGE_HEIGHT = 12
LIMIT = "#cf222e"
FONT = 'font-family="DejaVu Sans, Helvetica, Arial, sans-serif"'
PLOTTED_PERCENTILES = (50.0, 90.0, 95.0, 99.0, 99.9)


@dataclass(frozen=True)
class Bar:
    label: str  # the system
    detail: str  # benchmark and scenario, on a second line
    value: float
    status: Status


def nice_ticks(top: float, count: int = 5) -> list[float]:
    """Round axis ticks from 0 to at least `top` (steps of 1, 2 or 5 times a power of ten)."""
    if top <= 0 or not math.isfinite(top):
        return [0.0, 1.0]
    rough = top / count
    power = 10 ** math.floor(math.log10(rough))
    step = next(factor * power for factor in (1, 2, 5, 10) if factor * power >= rough)
    # Rounded so that steps of 0.1 stay 0.3 rather than 0.30000000000000004.
    return [round(index * step, 12) for index in range(math.ceil(top / step - 1e-9) + 1)]


def number(value: float) -> str:
    """A number as a reader wants it on a chart: thousands separated, few decimals."""
    if abs(value) >= 1000 or float(value).is_integer():
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:,.1f}"
    return f"{value:.3g}"


def _text(
    x: float,
    y: float,
    content: str,
    *,
    anchor: str = "start",
    size: int = 12,
    fill: str = AXIS,
    weight: str = "normal",
) -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}" fill="{fill}" '
        f'font-weight="{weight}" {FONT}>{escape(content)}</text>'
    )


def _svg(width: int, height: int, title: str, body: list[str]) -> Markup:
    return Markup(
        f'<svg viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="{escape(title)}" class="chart">'
        f"<title>{escape(title)}</title>{''.join(body)}</svg>"
    )


def _shortened(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def throughput_chart(bars: Sequence[Bar], units: str, width: int = 960) -> Markup:
    """Horizontal bars, one per result, on a shared axis in `units`; each bar is labelled with its
    system and, below it, its benchmark and scenario (long names are shortened; the tooltip has them)."""
    label_width, value_width, row, top, bottom = 300, 90, 40, 8, 34
    label_chars = 44  # what fits in label_width at 12 px
    plot_width = width - label_width - value_width
    height = top + row * len(bars) + bottom
    ticks = nice_ticks(max((bar.value for bar in bars), default=0))
    scale = plot_width / ticks[-1]
    body = []
    for tick in ticks:
        x = label_width + tick * scale
        body.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{height - bottom}" stroke="{GRID}" />')
        body.append(_text(x, height - bottom + 16, number(tick), anchor="middle", size=11))
    body.append(_text(label_width + plot_width / 2, height - 4, units, anchor="middle", size=11))
    for index, bar in enumerate(bars):
        y = top + index * row
        length = max(bar.value * scale, 1.0)
        colour = STATUS_COLOURS[bar.status]
        tooltip = f"{bar.label} {bar.detail}: {number(bar.value)} {units} ({bar.status})"
        body.append(
            _text(label_width - 10, y + 17, _shortened(bar.label, label_chars), anchor="end", fill="#1f2328")
        )
        body.append(
            _text(label_width - 10, y + 32, _shortened(bar.detail, label_chars), anchor="end", size=11)
        )
        body.append(
            f'<rect x="{label_width}" y="{y + 8}" width="{length:.1f}" height="{row - 16}" '
            f'fill="{colour}" rx="2"><title>{escape(tooltip)}</title></rect>'
        )
        body.append(_text(label_width + length + 6, y + row / 2 + 4, number(bar.value), weight="bold"))
    return _svg(width, height, f"throughput per result ({units})", body)


def latency_chart(
    ttft: Sequence[Percentile],
    tpot: Sequence[Percentile],
    limits: dict[str, tuple[float | None, Status]],
    title: str,
    width: int = 960,
) -> Markup:
    """Two panels, TTFT and TPOT: a bar per percentile, the p99 bar coloured by its status, and the
    round's limit as a dashed line. `limits` maps "TTFT"/"TPOT" to (limit in ms, status of the p99)."""
    panel_width, height = width / 2, 250
    body = []
    for index, (name, series) in enumerate((("TTFT", ttft), ("TPOT", tpot))):
        limit, status = limits.get(name, (None, Status.NOT_JUDGED))
        body.extend(_percentile_panel(index * panel_width, panel_width, height, name, series, limit, status))
    return _svg(int(width), height, title, body)


def _percentile_panel(
    left: float,
    width: float,
    height: int,
    name: str,
    series: Sequence[Percentile],
    limit: float | None,
    status: Status,
) -> list[str]:
    # The right margin holds the limit's label, beside its line, where no bar can cover it.
    axis_left, right, top, bottom = left + 62, left + width - 70, 28, 40
    points = [point for point in series if point.percentile in PLOTTED_PERCENTILES]
    body = [_text(left + width / 2, 16, f"{name} percentiles (ms)", anchor="middle", size=13, weight="bold")]
    if not points:
        body.append(_text(left + width / 2, height / 2, "not in the performance log", anchor="middle"))
        return body
    ticks = nice_ticks(max([point.ms for point in points] + ([limit] if limit else [])) * 1.08)
    scale = (height - top - bottom) / ticks[-1]
    baseline = height - bottom
    for tick in ticks:
        y = baseline - tick * scale
        body.append(f'<line x1="{axis_left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="{GRID}" />')
        body.append(_text(axis_left - 6, y + 4, number(tick), anchor="end", size=11))
    slot = (right - axis_left) / len(points)
    for index, point in enumerate(points):
        x = axis_left + index * slot + slot * 0.2
        bar_height = max(point.ms * scale, 1.0)
        colour = STATUS_COLOURS[status] if point.percentile == 99.0 and limit else NEUTRAL_BAR
        body.append(
            f'<rect x="{x:.1f}" y="{baseline - bar_height:.1f}" width="{slot * 0.6:.1f}" '
            f'height="{bar_height:.1f}" fill="{colour}"><title>{escape(name)} {escape(point.label)}: '
            f"{escape(number(point.ms))} ms</title></rect>"
        )
        body.append(
            _text(x + slot * 0.3, baseline - bar_height - 4, number(point.ms), anchor="middle", size=10)
        )
        body.append(_text(x + slot * 0.3, baseline + 16, point.label, anchor="middle", size=11))
    if limit:
        y = baseline - limit * scale
        body.append(
            f'<line x1="{axis_left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="{LIMIT}" '
            'stroke-width="2" stroke-dasharray="6 4" />'
        )
        body.append(_text(right + 6, y - 2, "limit", size=11, fill=LIMIT))
        body.append(_text(right + 6, y + 11, f"{number(limit)} ms", size=11, fill=LIMIT))
    body.append(f'<line x1="{axis_left}" y1="{baseline}" x2="{right}" y2="{baseline}" stroke="{AXIS}" />')
    return body


def _gauge_svg(width: int, body: list[str]) -> Markup:
    return Markup(
        f'<svg viewBox="0 -2 {width} {GAUGE_HEIGHT + 4}" width="{width}" height="{GAUGE_HEIGHT + 4}" '
        f'class="gauge" aria-hidden="true">{"".join(body)}</svg>'
    )


def _along(percent: float, width: int) -> float:
    """How far along a gauge `width` wide `percent` lies, clipped to the gauge."""
    return min(max(percent, 0.0), 100.0) / 100 * width


def share_gauge(percent: float, status: Status, width: int = 120) -> Markup:
    """A bar filled to `percent` of its length (clipped at 100) in the status colour."""
    filled = _along(percent, width)
    return _gauge_svg(
        width,
        [
            f'<rect x="0" y="0" width="{width}" height="{GAUGE_HEIGHT}" fill="{TRACK}" rx="3" />',
            f'<rect x="0" y="0" width="{filled:.1f}" height="{GAUGE_HEIGHT}" '
            f'fill="{STATUS_COLOURS[status]}" rx="3" />',
        ],
    )


def window_gauge(position: float, reference: float, status: Status, width: int = 120) -> Markup:
    """A window from its lower bound (left) to its upper bound (right): a thin tick at the reference,
    and the value as a block in the status colour (pinned to the edge when it lies outside)."""
    x = _along(position, width)
    reference_x = _along(reference, width)
    return _gauge_svg(
        width,
        [
            f'<rect x="0" y="0" width="{width}" height="{GAUGE_HEIGHT}" fill="{TRACK}" rx="3" />',
            f'<line x1="{reference_x:.1f}" y1="-2" x2="{reference_x:.1f}" y2="{GAUGE_HEIGHT + 2}" '
            f'stroke="{AXIS}" stroke-width="1" />',
            f'<rect x="{min(max(x - 4, 0), width - 8):.1f}" y="0" width="8" height="{GAUGE_HEIGHT}" '
            f'fill="{STATUS_COLOURS[status]}" rx="2" />',
        ],
    )
