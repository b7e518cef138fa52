"""Server-side SVG charts: no chart library, no JavaScript, with text alternatives."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from markupsafe import Markup, escape


def _cell_fill(value: float) -> str:
    """Map a weight in [0, 1] to a light-to-dark blue; NaN is hatched grey."""
    if math.isnan(value):
        return "url(#undefined-hatch)"
    t = min(max(value, 0.0), 1.0)
    # Interpolate from near-white (#f4f8fc) to deep blue (#08306b).
    start, end = (244, 248, 252), (8, 48, 107)
    r, g, b = (round(s + (e - s) * t) for s, e in zip(start, end, strict=True))
    return f"rgb({r},{g},{b})"


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
    summary = "; ".join(
        f"{row_labels[i]}: "
        + ", ".join(
            f"{col_labels[j]}={'undefined' if math.isnan(v) else f'{v:.4f}'}"
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
        parts.append(f'<text x="{x}" y="16" text-anchor="middle" '
                     f'class="axis">{escape(label)}</text>')
    for i, label in enumerate(row_labels):
        y = top + i * cell + cell / 2 + 4
        parts.append(f'<text x="{left - 6}" y="{y}" text-anchor="end" '
                     f'class="axis">{escape(label)}</text>')
        for j in range(cols):
            v = float(values[i, j])
            x, y0 = left + j * cell, top + i * cell
            hidden = masked is not None and bool(masked[i, j])
            fill = "#ffffff" if hidden else _cell_fill(v)
            label_text = "×" if hidden else ("?" if math.isnan(v) else f"{v:.2f}")
            ink = "#ffffff" if (not hidden and not math.isnan(v) and v > 0.55) else "#222"
            parts.append(
                f'<rect class="hm" x="{x}" y="{y0}" width="{cell - 2}" height="{cell - 2}" '
                f'fill="{fill}" stroke="#ccd"><title>{escape(row_labels[i])} → '
                f'{escape(col_labels[j])}: {escape(label_text)}</title></rect>'
            )
            parts.append(
                f'<text x="{x + (cell - 2) / 2}" y="{y0 + cell / 2 + 3}" '
                f'text-anchor="middle" fill="{ink}" class="cell">{escape(label_text)}</text>'
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
        f"{label}: {value_format.format(v)}" for label, v in zip(labels, values, strict=True)
    )
    ident = f' id="{escape(element_id)}"' if element_id else ""
    parts = [
        f'<svg class="bars"{ident} role="img" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title><desc>{escape(summary)}</desc>",
    ]
    for i, (label, value) in enumerate(zip(labels, values, strict=True)):
        y = 6 + i * (bar_height + 6)
        share = 0.0 if maximum <= 0 or math.isnan(value) else min(max(value / maximum, 0), 1)
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
