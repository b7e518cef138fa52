"""The attention lab: type Q, K, V and see every step of the computation.

The form is sent by POST (a 16×16 matrix does not fit in a URL); a GET with the
same fields in the query string still works, for links to an example.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from flask import Blueprint, current_app, render_template, request
from flask_babel import gettext as _

from quizsvc.engine import AttentionInputError, AttentionTrace, attention
from quizsvc.i18n import localized
from quizsvc.parsing import MatrixFormatError, parse_matrix, parse_value
from quizsvc.web.charts import heatmap_svg
from quizsvc.web.closed_book import finish_first_page, tools_closed

bp = Blueprint("lab", __name__)

# The lesson's worked example: q=[1,0], k₀=[1,0], k₁=[0,1], v₀=[1,0], v₁=[0,2].
EXAMPLE = {"q": "[[1, 0]]", "k": "[[1, 0], [0, 1]]", "v": "[[1, 0], [0, 2]]"}
LABELS = {"q": "Q", "k": "K", "v": "V", "mask": "M"}
_TRUE = {"true", "t", "yes", "是", "可见", "✓"}
_FALSE = {"false", "f", "no", "否", "遮住", "✗"}


@dataclass
class LabForm:
    """The lab's inputs as typed, and the errors found in them, by field."""

    values: dict[str, str]
    causal: bool
    errors: dict[str, str] = field(default_factory=dict)


def _read_form() -> LabForm:
    fields = request.form if request.method == "POST" else request.args
    if not any(name in fields for name in ("q", "k", "v")):
        return LabForm(values=dict(EXAMPLE, mask=""), causal=False)
    values = {name: fields.get(name, "") for name in ("q", "k", "v", "mask")}
    return LabForm(values=values, causal=fields.get("causal") in {"1", "on", "true"})


def _mask_entry(token) -> float:
    """A mask cell: 0 / -inf (additive) or true / false (may attend or not)."""
    word = str(token).strip().lower()
    if word in _TRUE:
        return 0.0
    if word in _FALSE:
        return -np.inf
    return parse_value(token)


def _parse(form: LabForm) -> dict[str, np.ndarray]:
    limit = current_app.config["MAX_MATRIX_SIDE"]
    parsed: dict[str, np.ndarray] = {}
    for name in ("q", "k", "v", "mask"):
        text = form.values[name]
        if name == "mask" and not text.strip():
            continue
        reader = _mask_entry if name == "mask" else parse_value
        try:
            matrix = parse_matrix(text, name=LABELS[name], number=reader)
        except MatrixFormatError as exc:
            form.errors[name] = localized(exc.messages)
            continue
        if max(matrix.shape) > limit:
            form.errors[name] = _(
                "%(name)s is %(rows)d×%(cols)d; the lab takes at most %(limit)d rows "
                "and columns",
                name=LABELS[name],
                rows=matrix.shape[0],
                cols=matrix.shape[1],
                limit=limit,
            )
            continue
        if name == "mask" and (np.isnan(matrix).any() or np.isposinf(matrix).any()):
            form.errors[name] = _(
                "The mask takes 0 (visible) or -inf (hidden) in each cell; "
                "undefined (NaN) and +inf are not allowed."
            )
            continue
        if name != "mask" and not np.isfinite(matrix).all():
            form.errors[name] = _(
                "%(name)s: every entry must be a finite number (no -inf or "
                "undefined here; those belong in the mask).",
                name=LABELS[name],
            )
            continue
        parsed[name] = matrix
    return parsed


def _check_shapes(form: LabForm, parsed: dict[str, np.ndarray]) -> None:
    """Say in the learner's language which sizes do not fit together."""
    q, k, v = parsed["q"], parsed["k"], parsed["v"]
    if k.shape[1] != q.shape[1]:
        form.errors["k"] = _(
            "K has %(k)d columns but Q has %(q)d: a key needs as many entries as a "
            "query (d).",
            k=k.shape[1],
            q=q.shape[1],
        )
    if v.shape[0] != k.shape[0]:
        form.errors["v"] = _(
            "V has %(v)d rows but K has %(k)d: each key needs one row of V.",
            v=v.shape[0],
            k=k.shape[0],
        )
    mask = parsed.get("mask")
    if mask is not None:
        tq, tk = q.shape[0], k.shape[0]
        if mask.shape[1] != tk or mask.shape[0] not in (1, tq):
            form.errors["mask"] = _(
                "The mask is %(rows)d×%(cols)d; it needs one row per query and one "
                "column per key: %(tq)d×%(tk)d (or a single row of %(tk)d).",
                rows=mask.shape[0],
                cols=mask.shape[1],
                tq=tq,
                tk=tk,
            )


@bp.route("/lab", methods=["GET", "POST"])
def lab():
    """Show the lab with the lesson's example, or with the learner's matrices."""
    if tools_closed():
        return finish_first_page()
    form = _read_form()
    parsed = _parse(form)
    trace: AttentionTrace | None = None
    if not form.errors:
        _check_shapes(form, parsed)
    if not form.errors:
        try:
            trace = attention(
                parsed["q"],
                parsed["k"],
                parsed["v"],
                mask=parsed.get("mask"),
                causal=form.causal,
            )
        except AttentionInputError:
            # Sizes were checked above; what is left is a product too large.
            form.errors["k"] = _(
                "Q·Kᵀ is too large to compute; use smaller numbers in Q and K."
            )
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
