"""Server-side SVG charts: no chart library, no JavaScript, with text alternatives."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import date

import numpy as np
from flask_babel import gettext
from markupsafe import Markup, escape

# Heatmap shades run from near-white (#f4f8fc) to deep blue (#08306b).
_LIGHTEST, _DARKEST = (244, 248, 252), (8, 48, 107)


def _shade(value: float) -> tuple[int, int, int]:
    t = min(max(value, 0.0), 1.0)
    return tuple(  # type: ignore[return-value]
        round(s + (e - s) * t) for s, e in zip(_LIGHTEST, _DARKEST, strict=True)
    )


def _cell_fill(value: float) -> str:
    """Map a weight in [0, 1] to a light-to-dark blue; NaN is hatched grey."""
    if math.isnan(value):
        return "url(#undefined-hatch)"
    r, g, b = _shade(value)
    return f"rgb({r},{g},{b})"


def relative_luminance(rgb: Sequence[int]) -> float:
    """WCAG 2 relative luminance of an sRGB colour given as 0-255 channels."""
    linear = [
        c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
        for c in (channel / 255 for channel in rgb)
    ]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def label_ink(value: float) -> str:
    """Black or white, whichever contrasts more with the shade of `value`.

    Black against a shade of luminance L gives (L + .05)/.05 and white gives
    1.05/(L + .05); the larger of the two is never below 4.58:1 (equal where
    L = .179), so every label passes WCAG AA at any weight. A dark grey ink
    would leave a band near 0.6 where neither reaches 4.5:1.
    """
    if math.isnan(value):
        return "#000000"
    lum = relative_luminance(_shade(value))
    return "#000000" if (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05) else "#ffffff"


def heatmap_svg(
    matrix: np.ndarray,
    *,
    title: str,
    row_labels: Sequence[str] | None = None,
    col_labels: Sequence[str] | None = None,
    masked: np.ndarray | None = None,
    cell: int = 44,
) -> Markup:
    """Return an accessible SVG heatmap of a [rows, cols] matrix of weights."""
    values = np.atleast_2d(np.asarray(matrix, dtype=np.float64))
    rows, cols = values.shape
    row_labels = list(row_labels or [f"q{i}" for i in range(rows)])
    col_labels = list(col_labels or [f"k{j}" for j in range(cols)])
    left, top = 36, 24
    width, height = left + cols * cell + 4, top + rows * cell + 4
    undefined = gettext("undefined")
    summary = "; ".join(
        f"{row_labels[i]}: "
        + ", ".join(
            f"{col_labels[j]}={undefined if math.isnan(v) else f'{v:.4f}'}"
            for j, v in enumerate(values[i])
        )
        for i in range(rows)
    )
    parts = [
        f'<svg class="heatmap" role="img" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title>",
        f"<desc>{escape(summary)}</desc>",
        '<defs><pattern id="undefined-hatch" width="6" height="6" '
        'patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
        '<rect width="6" height="6" fill="#eee"/>'
        '<line x1="0" y1="0" x2="0" y2="6" stroke="#999" stroke-width="2"/>'
        "</pattern></defs>",
    ]
    for j, label in enumerate(col_labels):
        x = left + j * cell + cell / 2
        parts.append(
            f'<text x="{x}" y="16" text-anchor="middle" '
            f'class="axis">{escape(label)}</text>'
        )
    for i, label in enumerate(row_labels):
        y = top + i * cell + cell / 2 + 4
        parts.append(
            f'<text x="{left - 6}" y="{y}" text-anchor="end" '
            f'class="axis">{escape(label)}</text>'
        )
        for j in range(cols):
            v = float(values[i, j])
            x, y0 = left + j * cell, top + i * cell
            hidden = masked is not None and bool(masked[i, j])
            fill = "#ffffff" if hidden else _cell_fill(v)
            label_text = "×" if hidden else ("?" if math.isnan(v) else f"{v:.2f}")
            ink = "#000000" if hidden else label_ink(v)
            parts.append(
                f'<rect class="hm" x="{x}" y="{y0}" '
                f'width="{cell - 2}" height="{cell - 2}" '
                f'fill="{fill}" stroke="#ccd"><title>{escape(row_labels[i])} → '
                f"{escape(col_labels[j])}: {escape(label_text)}</title></rect>"
            )
            parts.append(
                f'<text x="{x + (cell - 2) / 2}" y="{y0 + cell / 2 + 3}" '
                f'text-anchor="middle" fill="{ink}" class="cell">'
                f"{escape(label_text)}</text>"
            )
    parts.append("</svg>")
    return Markup("".join(parts))


def bar_chart_svg(
    values: Sequence[float],
    labels: Sequence[str],
    *,
    title: str,
    maximum: float = 1.0,
    width: int = 320,
    bar_height: int = 22,
    value_format: str = "{:.2f}",
    element_id: str | None = None,
) -> Markup:
    """Return an accessible horizontal bar chart; values above `maximum` are clipped."""
    label_width = max(40, 8 * max((len(str(label)) for label in labels), default=4))
    inner = width - label_width - 56
    height = len(values) * (bar_height + 6) + 6
    summary = "; ".join(
        f"{label}: {value_format.format(v)}"
        for label, v in zip(labels, values, strict=True)
    )
    ident = f' id="{escape(element_id)}"' if element_id else ""
    parts = [
        f'<svg class="bars"{ident} role="img" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title><desc>{escape(summary)}</desc>",
    ]
    for i, (label, value) in enumerate(zip(labels, values, strict=True)):
        y = 6 + i * (bar_height + 6)
        share = (
            0.0
            if maximum <= 0 or math.isnan(value)
            else min(max(value / maximum, 0), 1)
        )
        parts.append(
            f'<text x="{label_width - 6}" y="{y + bar_height * 0.7}" text-anchor="end" '
            f'class="axis">{escape(label)}</text>'
            f'<rect x="{label_width}" y="{y}" width="{inner}" height="{bar_height}" '
            f'fill="#eef1f6"/>'
            f'<rect class="bar" data-index="{i}" x="{label_width}" y="{y}" '
            f'width="{share * inner:.1f}" height="{bar_height}" fill="#1f5fbf"/>'
            f'<text class="value" data-index="{i}" x="{label_width + inner + 6}" '
            f'y="{y + bar_height * 0.7}">{escape(value_format.format(value))}</text>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))


# Calendar shades: no answers, then four steps of the accent blue.
_CALENDAR_SHADES = ("#ebedf0", "#c6dbf7", "#8fb6ec", "#3f7fd6", "#1a4c95")


def calendar_level(count: int, busiest: int) -> int:
    """Return the shade (0-4) of a day with `count` answers; 0 only for none."""
    if count <= 0 or busiest <= 0:
        return 0
    return min(4, max(1, math.ceil(4 * count / busiest)))


def calendar_heatmap_svg(
    days: Sequence[date],
    counts: Sequence[int],
    *,
    title: str,
    desc: str,
    weekday_labels: Sequence[str],
    month_labels: Sequence[str],
    cell_titles: Sequence[str],
    today: date | None = None,
    cell: int = 20,
    gap: int = 3,
) -> Markup:
    """Return an accessible calendar heatmap: weeks as columns, Monday on top.

    `days` are consecutive and start on a Monday; `cell_titles` give each day's
    tooltip, `weekday_labels` the 7 row labels (blank to skip one) and
    `month_labels` the 12 month names written above a month's first week.
    """
    if len(days) != len(counts) or len(days) != len(cell_titles):
        raise ValueError("days, counts and cell_titles must have the same length")
    if days and days[0].weekday() != 0:
        raise ValueError("the calendar must start on a Monday")
    weeks = max(1, math.ceil(len(days) / 7))
    left, top, step = 30, 18, cell + gap
    legend_top = top + 7 * step + 6
    width, height = left + weeks * step + 2, legend_top + cell
    busiest = max(counts, default=0)
    parts = [
        f'<svg class="calendar" role="img" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title><desc>{escape(desc)}</desc>",
    ]
    for row, label in enumerate(weekday_labels):
        if label:
            y = top + row * step + cell * 0.75
            parts.append(
                f'<text x="{left - 5}" y="{y}" text-anchor="end" '
                f'class="axis">{escape(label)}</text>'
            )
    # A month's name sits above the column holding its day 1, and above the
    # first column for the month the calendar opens in (unless the next column
    # already names a month: two names would overlap).
    starts = [
        next((d for d in days[c * 7 : c * 7 + 7] if d.day == 1), None)
        for c in range(weeks)
    ]
    for column, first_of_month in enumerate(starts):
        opening = column == 0 and not (weeks > 1 and starts[1] is not None)
        if first_of_month is not None or (opening and days):
            month = (first_of_month or days[0]).month
            parts.append(
                f'<text x="{left + column * step}" y="12" class="axis">'
                f"{escape(month_labels[month - 1])}</text>"
            )
    for index, (day, count, tip) in enumerate(
        zip(days, counts, cell_titles, strict=True)
    ):
        column, row = divmod(index, 7)
        x, y = left + column * step, top + row * step
        level = calendar_level(int(count), int(busiest))
        outline = ' stroke="#1d2330" stroke-width="2"' if day == today else ""
        parts.append(
            f'<rect class="day" data-date="{day.isoformat()}" '
            f'data-count="{int(count)}" data-level="{level}" x="{x}" y="{y}" '
            f'width="{cell}" height="{cell}" '
            f'rx="3" fill="{_CALENDAR_SHADES[level]}"{outline}>'
            f"<title>{escape(tip)}</title></rect>"
        )
    for level, shade in enumerate(_CALENDAR_SHADES):
        x = width - (len(_CALENDAR_SHADES) - level) * (cell * 0.6 + 3) - 2
        parts.append(
            f'<rect x="{x:.1f}" y="{legend_top}" width="{cell * 0.6:.1f}" '
            f'height="{cell * 0.6:.1f}" rx="2" fill="{shade}"/>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def column_chart_svg(
    values: Sequence[float],
    labels: Sequence[str],
    *,
    title: str,
    sublabels: Sequence[str] | None = None,
    highlight: int | None = None,
    value_format: str = "{:g}",
    bar: int = 18,
    gap: int = 4,
    plot_height: int = 110,
) -> Markup:
    """Return an accessible vertical bar chart with the value above each bar."""
    if len(values) != len(labels):
        raise ValueError("values and labels must have the same length")
    sublabels = list(sublabels) if sublabels is not None else [""] * len(values)
    step, left, top = bar + gap, 6, 16
    width = left + len(values) * step + 4
    baseline = top + plot_height
    height = baseline + (30 if any(sublabels) else 18)
    finite = [v for v in values if not math.isnan(v)]
    largest = max(finite, default=0.0)
    summary = "; ".join(
        f"{label}{(' ' + sub) if sub else ''}: {value_format.format(v)}"
        for label, sub, v in zip(labels, sublabels, values, strict=True)
    )
    parts = [
        f'<svg class="columns" role="img" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title><desc>{escape(summary)}</desc>",
        f'<line x1="{left}" y1="{baseline}" x2="{width - 2}" y2="{baseline}" '
        'stroke="#9aa3b2"/>',
    ]
    for i, (value, label, sub) in enumerate(
        zip(values, labels, sublabels, strict=True)
    ):
        x = left + i * step
        share = 0.0 if largest <= 0 or math.isnan(value) else max(value, 0) / largest
        tall = share * plot_height
        fill = "#b3261e" if i == highlight else "#1f5fbf"
        center = x + bar / 2
        parts.append(
            f'<rect class="column" data-index="{i}" x="{x}" y="{baseline - tall:.1f}" '
            f'width="{bar}" height="{tall:.1f}" fill="{fill}"/>'
            f'<text class="value" x="{center}" y="{baseline - tall - 3:.1f}" '
            f'text-anchor="middle">{escape(value_format.format(value))}</text>'
            f'<text class="axis" x="{center}" y="{baseline + 13}" '
            f'text-anchor="middle">{escape(label)}</text>'
        )
        if sub:
            parts.append(
                f'<text class="axis" x="{center}" y="{baseline + 26}" '
                f'text-anchor="middle">{escape(sub)}</text>'
            )
    parts.append("</svg>")
    return Markup("".join(parts))


def visibility_svg(
    visible: np.ndarray,
    *,
    title: str,
    visible_text: str,
    hidden_text: str,
    row_labels: Sequence[str] | None = None,
    col_labels: Sequence[str] | None = None,
    cell: int = 36,
) -> Markup:
    """Return an accessible grid of which key each query may see (✓) or not (×)."""
    flags = np.atleast_2d(np.asarray(visible, dtype=bool))
    rows, cols = flags.shape
    row_labels = list(row_labels or [f"q{i}" for i in range(rows)])
    col_labels = list(col_labels or [f"k{j}" for j in range(cols)])
    left, top = 36, 24
    width, height = left + cols * cell + 4, top + rows * cell + 4
    summary = "; ".join(
        f"{row_labels[i]}: "
        + ", ".join(
            f"{col_labels[j]} {visible_text if flags[i, j] else hidden_text}"
            for j in range(cols)
        )
        for i in range(rows)
    )
    parts = [
        f'<svg class="visibility" role="img" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title><desc>{escape(summary)}</desc>",
    ]
    for j, label in enumerate(col_labels):
        parts.append(
            f'<text x="{left + j * cell + cell / 2}" y="16" '
            f'text-anchor="middle" class="axis">{escape(label)}</text>'
        )
    for i, label in enumerate(row_labels):
        parts.append(
            f'<text x="{left - 6}" y="{top + i * cell + cell / 2 + 4}" '
            f'text-anchor="end" class="axis">{escape(label)}</text>'
        )
        for j in range(cols):
            seen = bool(flags[i, j])
            x, y = left + j * cell, top + i * cell
            word = visible_text if seen else hidden_text
            # Both marks are at least 5.5:1 on their cell (WCAG AA for text).
            mark, ink = ("✓", "#146c2e") if seen else ("×", "#595959")
            parts.append(
                f'<rect class="{"seen" if seen else "hidden"}" x="{x}" y="{y}" '
                f'width="{cell - 2}" height="{cell - 2}" '
                f'fill="{"#dff1e4" if seen else "#f1f1f1"}" stroke="#ccd">'
                f"<title>{escape(row_labels[i])} → {escape(col_labels[j])}: "
                f"{escape(word)}</title></rect>"
                f'<text x="{x + (cell - 2) / 2}" y="{y + cell / 2 + 4}" '
                f'text-anchor="middle" class="cell" '
                f'fill="{ink}">{mark}</text>'
            )
    parts.append("</svg>")
    return Markup("".join(parts))


def labelled_bars_svg(
    values: Sequence[float],
    labels: Sequence[str],
    *,
    title: str,
    maximum: float = 1.0,
    width: int = 320,
    value_format: str = "{:.0%}",
) -> Markup:
    """Return an accessible bar chart with each label on its own line above its bar.

    Long labels (skill names) keep the full width for the bars, which suits a
    narrow phone screen better than labels beside the bars.
    """
    if len(values) != len(labels):
        raise ValueError("values and labels must have the same length")
    row, bar_height, value_room = 40, 14, 44
    inner = width - value_room
    height = len(values) * row + 4
    summary = "; ".join(
        f"{label}: {value_format.format(v)}"
        for label, v in zip(labels, values, strict=True)
    )
    parts = [
        f'<svg class="bars labelled" role="img" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title><desc>{escape(summary)}</desc>",
    ]
    for i, (label, value) in enumerate(zip(labels, values, strict=True)):
        top = 2 + i * row
        share = (
            0.0
            if maximum <= 0 or math.isnan(value)
            else min(max(value / maximum, 0), 1)
        )
        bar_top = top + 20
        parts.append(
            f'<text x="0" y="{top + 13}" class="label">{escape(label)}</text>'
            f'<rect x="0" y="{bar_top}" width="{inner}" height="{bar_height}" '
            f'fill="#eef1f6"/>'
            f'<rect class="bar" data-index="{i}" x="0" y="{bar_top}" '
            f'width="{share * inner:.1f}" height="{bar_height}" fill="#1f5fbf"/>'
            f'<text class="value" data-index="{i}" x="{inner + 6}" '
            f'y="{bar_top + bar_height - 3}">'
            f"{escape(value_format.format(value))}</text>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def recall_grid_svg(
    values: np.ndarray,
    *,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    col_titles: Sequence[str],
    title: str,
    cell: int = 30,
    row_height: int = 20,
) -> Markup:
    """Return a compact rows × columns heatmap of shares in [0, 1] (NaN: no data).

    Made for a class's learners × skills: short column labels (titles in
    tooltips), one thin row per learner, the percentage in each cell.
    """
    values = np.atleast_2d(np.asarray(values, dtype=np.float64))
    rows, cols = values.shape
    left = min(140, 12 + 9 * max((len(label) for label in row_labels), default=4))
    # Column labels longer than a number (skill names) are set at a slant, so
    # the columns stay narrow; the space above grows with the longest one.
    longest = max((len(label) for label in col_labels), default=0)
    slanted = longest > 3
    top = min(150, 14 + 10 * longest) if slanted else 22
    width, height = left + cols * cell + 4, top + rows * row_height + 4
    parts = [
        f'<svg class="recall-grid" role="img" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title>",
        '<defs><pattern id="no-data-hatch" width="6" height="6" '
        'patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
        '<rect width="6" height="6" fill="#eee"/>'
        '<line x1="0" y1="0" x2="0" y2="6" stroke="#bbb" stroke-width="2"/>'
        "</pattern></defs>",
    ]
    for j, (label, full) in enumerate(zip(col_labels, col_titles, strict=True)):
        x = left + j * cell + cell / 2
        if slanted:
            shown = label if len(label) <= 14 else label[:13] + "…"
            parts.append(
                f'<text x="{x}" y="{top - 6}" text-anchor="start" class="axis" '
                f'transform="rotate(-55 {x} {top - 6})">'
                f"<title>{escape(full)}</title>{escape(shown)}</text>"
            )
            continue
        parts.append(
            f'<text x="{x}" y="15" text-anchor="middle" class="axis">'
            f"<title>{escape(full)}</title>{escape(label)}</text>"
        )
    for i, label in enumerate(row_labels):
        y0 = top + i * row_height
        shown = label if len(label) <= 14 else label[:13] + "…"
        parts.append(
            f'<text x="{left - 6}" y="{y0 + row_height * 0.7}" text-anchor="end" '
            f'class="axis">{escape(shown)}</text>'
        )
        for j in range(cols):
            v = float(values[i, j])
            empty = math.isnan(v)
            fill = "url(#no-data-hatch)" if empty else _cell_fill(v)
            ink = label_ink(v)
            x = left + j * cell
            # No tooltip per cell: the table beside the chart is its text form,
            # and 2,000 tooltips would weigh more than the chart.
            parts.append(
                f'<rect class="cell" x="{x}" y="{y0}" width="{cell - 2}" '
                f'height="{row_height - 2}" fill="{fill}"/>'
            )
            if not empty:
                parts.append(
                    f'<text x="{x + (cell - 2) / 2}" y="{y0 + row_height * 0.68}" '
                    f'text-anchor="middle" fill="{ink}" class="cell-value">'
                    f"{round(v * 100)}</text>"
                )
    parts.append("</svg>")
    return Markup("".join(parts))
