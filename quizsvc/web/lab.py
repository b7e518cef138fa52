"""The attention lab: type Q, K, V and see every step of the computation."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from flask import Blueprint, current_app, render_template, request
from flask_babel import gettext as _

from quizsvc.engine import AttentionInputError, AttentionTrace, attention
from quizsvc.parsing import MatrixFormatError, parse_matrix
from quizsvc.web.charts import heatmap_svg

bp = Blueprint("lab", __name__)

# The lesson's worked example: q=[1,0], k₀=[1,0], k₁=[0,1], v₀=[1,0], v₁=[0,2].
EXAMPLE = {"q": "[[1, 0]]", "k": "[[1, 0], [0, 1]]", "v": "[[1, 0], [0, 2]]"}


@dataclass
class LabForm:
    """The lab's inputs as typed, and the errors found in them, by field."""

    values: dict[str, str]
    causal: bool
    errors: dict[str, str] = field(default_factory=dict)


def _read_form() -> LabForm:
    args = request.args
    if not any(name in args for name in ("q", "k", "v")):
        return LabForm(values=dict(EXAMPLE, mask=""), causal=False)
    values = {name: args.get(name, "") for name in ("q", "k", "v", "mask")}
    return LabForm(values=values, causal=args.get("causal") in {"1", "on", "true"})


def _parse(form: LabForm) -> dict[str, np.ndarray]:
    limit = current_app.config["MAX_MATRIX_SIDE"]
    parsed: dict[str, np.ndarray] = {}
    for name in ("q", "k", "v", "mask"):
        text = form.values[name]
        if name == "mask" and not text.strip():
            continue
        try:
            matrix = parse_matrix(text, name=name.upper() if name != "mask" else "mask")
        except MatrixFormatError as exc:
            form.errors[name] = str(exc)
            continue
        if max(matrix.shape) > limit:
            form.errors[name] = _(
                "%(name)s is %(rows)d×%(cols)d; the lab takes at most %(limit)d rows "
                "and columns",
                name=name,
                rows=matrix.shape[0],
                cols=matrix.shape[1],
                limit=limit,
            )
            continue
        parsed[name] = matrix
    return parsed


def _field_of(exc: AttentionInputError) -> str:
    """Which input field an engine error is about (its message names it first)."""
    message = str(exc)
    for name in ("mask", "q", "k", "v"):
        if message.startswith(name + " ") or message.startswith(name + ","):
            return name
    return "k"


@bp.get("/lab")
def lab():
    """Show the lab with the lesson's example, or with the learner's matrices."""
    form = _read_form()
    parsed = _parse(form)
    trace: AttentionTrace | None = None
    if not form.errors:
        try:
            trace = attention(
                parsed["q"],
                parsed["k"],
                parsed["v"],
                mask=parsed.get("mask"),
                causal=form.causal,
            )
        except AttentionInputError as exc:
            form.errors[_field_of(exc)] = str(exc)
    heatmap = None
    if trace is not None:
        heatmap = heatmap_svg(
            trace.weights, title=_("Attention weights A"), masked=trace.masked
        )
    status = 400 if form.errors else 200
    d = parsed["q"].shape[-1] if trace is not None else None
    return render_template(
        "lab.html", form=form, trace=trace, heatmap=heatmap, d=d
    ), status
