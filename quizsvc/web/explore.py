"""Explore the lesson's intuition: temperature and the 1/√d scale change sharpness."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from flask import Blueprint, render_template, request
from flask_babel import gettext as _

from quizsvc.engine import softmax
from quizsvc.web.charts import bar_chart_svg, heatmap_svg
from quizsvc.web.closed_book import finish_first_page, tools_closed

bp = Blueprint("explore", __name__)

D_VALUES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
QUERIES, KEYS = 4, 6
TEMPERATURE_RANGE = (0.1, 5.0)


@lru_cache(maxsize=1)
def raw_scores() -> dict[int, np.ndarray]:
    """Unscaled q·kᵀ for unit-variance q, k whose first d components are used."""
    # One fixed draw, truncated per d, so moving the d slider grows the same
    # vectors instead of jumping between unrelated examples.
    rng = np.random.Generator(np.random.PCG64(16))
    q = rng.standard_normal((QUERIES, max(D_VALUES)))
    k = rng.standard_normal((KEYS, max(D_VALUES)))
    return {d: q[:, :d] @ k[:, :d].T for d in D_VALUES}


def _read_settings() -> tuple[int, float, bool]:
    try:
        d = int(request.args.get("d", 64))
    except ValueError:
        d = 64
    d = min(D_VALUES, key=lambda option: abs(option - d))
    try:
        temperature = float(request.args.get("t", 1.0))
    except ValueError:
        temperature = 1.0
    if not math.isfinite(temperature):
        temperature = 1.0
    temperature = min(max(temperature, TEMPERATURE_RANGE[0]), TEMPERATURE_RANGE[1])
    # An unchecked box sends nothing, so "absent" means off once the form was sent.
    submitted = "t" in request.args
    scaled = request.args.get("scaled") == "1" if submitted else True
    return d, temperature, scaled


def _weights(d: int, temperature: float, scaled: bool) -> np.ndarray:
    """Row-wise softmax of the scores for this d, scaled or not, at a temperature."""
    scale = 1 / math.sqrt(d) if scaled else 1.0
    return softmax(raw_scores()[d] * scale / temperature)


@bp.get("/explore")
def explore():
    """Show a softmax row and the heatmap for the chosen d, temperature, scaling."""
    if tools_closed():
        return finish_first_page()
    d, temperature, scaled = _read_settings()
    weights = _weights(d, temperature, scaled)
    labels = [f"k{j}" for j in range(KEYS)]
    row_chart = bar_chart_svg(
        weights[0], labels, title=_("Weights of query q0"), element_id="explore-row"
    )
    heatmap = heatmap_svg(weights, title=_("Attention weights A"))
    table = []
    for option in D_VALUES:
        with_scale = _weights(option, 1.0, True)[0].max()
        without = _weights(option, 1.0, False)[0].max()
        table.append(
            {
                "d": option,
                "std": float(raw_scores()[option].std()),
                "scaled": float(with_scale),
                "unscaled": float(without),
            }
        )
    data = {str(option): raw_scores()[option].round(6).tolist() for option in D_VALUES}
    return render_template(
        "explore.html",
        d=d,
        temperature=temperature,
        scaled=scaled,
        row_chart=row_chart,
        heatmap=heatmap,
        table=table,
        data=data,
        d_values=D_VALUES,
        temperature_range=TEMPERATURE_RANGE,
    )
