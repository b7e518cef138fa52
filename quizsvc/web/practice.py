"""Practice: generated problems with step-by-step feedback, no scheduling.

Anyone may practise, signed in or not, and nothing is stored: a problem is
fully described by its permalink `/practice/<kind>/<level>/<seed>`, so it can
be shared and checked again any number of times.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from flask import Blueprint, abort, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from quizsvc import grading, problems
from quizsvc.http.drill import problem_closed
from quizsvc.i18n import current_language, localized
from quizsvc.services import drill
from quizsvc.web.answer_forms import collect_answers, offending_fields, typed_values
from quizsvc.web.charts import heatmap_svg, visibility_svg
from quizsvc.web.closed_book import finish_first_page
from quizsvc.web.grid import cell_marks, move_paste_into_grid, parsed_answer

bp = Blueprint("practice", __name__)

# Seeds go beyond the default `int` converter's cap (database ids), up to
# problems.MAX_SEED (what the review log's BIGINT column holds).
PERMALINK = f"/practice/<kind>/<int:level>/<int(max={problems.MAX_SEED}):seed>"

# Interface names and descriptions of the problem kinds (quizsvc.problems.KINDS
# describes them for programmers, in English only).
KIND_TEXT = {
    "scores": (
        _l("Scores S"),
        _l("From Q and K (and sometimes a mask), compute S = QKᵀ/√d + M."),
    ),
    "softmax_row": (
        _l("Softmax of one row"),
        _l("Turn a single row of scores into weights that add up to 1."),
    ),
    "weights": (
        _l("Weights A"),
        _l("Apply the softmax to every row of S to get the weights A."),
    ),
    "output": (
        _l("Output O"),
        _l("Mix the rows of V with the weights: O = AV."),
    ),
    "attention": (
        _l("The whole computation"),
        _l("Go from Q, K and V through S and A to O, writing down every step."),
    ),
    "causal": (
        _l("Causal mask"),
        _l("Decide which keys each query may see, then compute S, A and O."),
    ),
    "padding_mask": (
        _l("Padding mask"),
        _l(
            "Some keys are padding; a query that can see no key at all has no "
            "weights (undefined)."
        ),
    ),
    "shapes": (
        _l("Shapes"),
        _l(
            "Give the shapes of S, A and O in a multi-head layer, and the axis "
            "each product sums over."
        ),
    ),
    "scale": (
        _l("The 1/√d scale"),
        _l("Work out head_dim**-0.5 and how widely a dot product spreads."),
    ),
    "temperature": (
        _l("Temperature"),
        _l("Compute the weights at two temperatures and say which is sharper."),
    ),
    "shift_invariance": (
        _l("Shifting a row"),
        _l(
            "Add a constant to a row of scores and check that the weights stay "
            "the same."
        ),
    ),
    "uniform": (
        _l("Equal scores"),
        _l(
            "Equal scores give every key the weight 1/Tk, so the output is the "
            "mean of the rows of V."
        ),
    ),
    "lesson_example": (
        _l("The lesson's example"),
        _l(
            "The worked example from the lesson, one step at a time (always the "
            "same numbers)."
        ),
    ),
}

LEVEL_TEXT = {
    1: _l("Level 1 · small numbers"),
    2: _l("Level 2 · bigger matrices"),
    3: _l("Level 3 · hardest"),
}


def kind_title(kind: str) -> str:
    """The interface name of a problem kind."""
    return str(KIND_TEXT[kind][0]) if kind in KIND_TEXT else kind


def kind_description(kind: str) -> str:
    """What a problem kind asks for, in the interface language."""
    if kind in KIND_TEXT:
        return str(KIND_TEXT[kind][1])
    return problems.KINDS.get(kind, "")


def level_title(level: int) -> str:
    """The interface name of a difficulty level."""
    return str(LEVEL_TEXT.get(level, level))


def parse_level(value: Any) -> int | None:
    """Read a level from a form or JSON value; None when it is not one of LEVELS."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        value = value.strip()
        if not value.isdigit():
            return None
        value = int(value)
    return value if isinstance(value, int) and value in problems.LEVELS else None


def _problem_or_404(kind: str, level: int, seed: int) -> problems.Problem:
    problem = problems.load_problem(kind, level, seed)
    if problem is None:
        abort(
            404,
            description=_(
                "There is no practice problem at this address. Pick a kind and a "
                "level on the practice page to get a new one."
            ),
        )
    return problem


# --- choosing -----------------------------------------------------------------


def _kinds() -> list[dict[str, str]]:
    return [
        {"name": kind, "title": kind_title(kind), "description": kind_description(kind)}
        for kind in problems.KINDS
    ]


@bp.get("/practice")
def practice():
    """Offer the problem kinds and levels; with both chosen, open a fresh problem."""
    args = request.args
    if "kind" not in args and "level" not in args:
        return render_template(
            "practice/choose.html",
            kinds=_kinds(),
            levels=LEVEL_TEXT,
            chosen={},
            errors={},
        )
    kind, level = args.get("kind", ""), parse_level(args.get("level", ""))
    errors = {}
    if kind not in problems.KINDS:
        errors["kind"] = _("Choose one of the problem kinds in the list.")
    if level is None:
        errors["level"] = _("Choose level 1, 2 or 3.")
    if errors:
        return render_template(
            "practice/choose.html",
            kinds=_kinds(),
            levels=LEVEL_TEXT,
            chosen=args,
            errors=errors,
        ), 400
    return redirect(
        url_for("practice.problem", kind=kind, level=level, seed=problems.fresh_seed())
    )


# --- one problem ------------------------------------------------------------------


@dataclass
class Checked:
    """What the page shows after a check: the verdict and the pictures."""

    verdict: dict[str, Any]
    marks: dict[str, dict[tuple[int, int], bool]]
    labels: dict[str, str]
    heatmaps: list[dict[str, Any]] = field(default_factory=list)
    visibility: Any = None
    expected: dict[str, Any] = field(default_factory=dict)


def is_weights(ask: problems.Ask) -> bool:
    """Whether an asked matrix holds attention weights (A, a, A1, A_shifted...)."""
    base = ask.name.split("_")[0].rstrip("0123456789")
    return ask.format == "matrix" and base in ("A", "a")


def _visible(problem: problems.Problem) -> np.ndarray | None:
    visible = problem.context.get("visible")
    if visible is None and "M" in problem.given:
        visible = np.isfinite(np.asarray(problem.given["M"], dtype=float))
    if visible is None:
        return None
    visible = np.asarray(visible, dtype=bool)
    return None if visible.all() else visible


def _pictures(
    problem: problems.Problem, answers: dict[str, Any], labels: dict[str, str]
) -> tuple[list[dict[str, Any]], Any]:
    """Heatmaps of the true and the learner's weights, and the visibility grid."""
    visible = _visible(problem)
    heatmaps = []
    for ask in problem.ask:
        if not is_weights(ask):
            continue
        truth = np.asarray(problem.answer[ask.name], dtype=float)
        hidden = (
            ~visible if visible is not None and visible.shape == truth.shape else None
        )
        entry = {
            "name": ask.name,
            "label": labels[ask.name],
            "truth": heatmap_svg(
                truth, title=_("Correct %(name)s", name=ask.name), masked=hidden
            ),
            "yours": None,
        }
        mine = (
            parsed_answer(ask, answers.get(ask.name)) if ask.name in answers else None
        )
        if mine is not None and mine.ndim == 2:
            entry["yours"] = heatmap_svg(mine, title=_("Your %(name)s", name=ask.name))
        heatmaps.append(entry)
    visibility = None
    if visible is not None:
        visibility = visibility_svg(
            visible,
            title=_("Which keys each query sees"),
            visible_text=_("visible"),
            hidden_text=_("hidden"),
        )
    return heatmaps, visibility


def _render_problem(
    problem: problems.Problem,
    *,
    values: dict[str, str] | None = None,
    checked: Checked | None = None,
    errors: dict[str, list[str]] | None = None,
    invalid: list[str] | None = None,
    status: int = 200,
):
    public = problem.public_dict(current_language())
    return render_template(
        "practice/problem.html",
        problem=public,
        checked=checked,
        values=values or {},
        errors=errors or {},
        invalid=invalid or [],
        kind_title=kind_title(problem.kind),
        kind_description=kind_description(problem.kind),
        level_title=level_title(problem.level),
        permalink=url_for(
            "practice.problem",
            kind=problem.kind,
            level=problem.level,
            seed=problem.seed,
            _external=True,
        ),
        fresh=url_for("practice.practice", kind=problem.kind, level=problem.level),
    ), status


@bp.get(PERMALINK)
def problem(kind: str, level: int, seed: int):
    """Show one generated problem with an empty grid per asked matrix."""
    problem = _problem_or_404(kind, level, seed)
    if problem_closed(kind, seed, level):
        return finish_first_page()
    return _render_problem(problem)


@bp.post(PERMALINK)
def check(kind: str, level: int, seed: int):
    """Grade the answers step by step; a format error keeps what was typed (400)."""
    problem = _problem_or_404(kind, level, seed)
    if problem_closed(kind, seed, level):
        return finish_first_page()
    labels = {
        ask["name"]: ask["label"]
        for ask in problem.public_dict(current_language())["ask"]
    }
    answers = collect_answers(request.form, problem.public_dict()["ask"])
    values = typed_values(request.form)
    verdict = grading.grade(problem, answers)
    if verdict.format_errors:
        errors: dict[str, list[str]] = {}
        asked = {ask.name: ask.label for ask in problem.ask}
        for error in verdict.format_errors:
            where = error.quantity if error.quantity in labels else ""
            message = drill.labelled(error, asked.get(error.quantity))
            errors.setdefault(where, []).append(localized(message))
        invalid = offending_fields(
            problem.public_dict()["ask"],
            [(e.quantity, e.row, e.col) for e in verdict.format_errors],
            request.form,
        )
        return _render_problem(
            problem, values=values, errors=errors, invalid=invalid, status=400
        )
    if not any(step.answered for step in verdict.steps):
        errors = {"": [_("Fill in at least one step before checking.")]}
        return _render_problem(problem, values=values, errors=errors, status=400)
    move_paste_into_grid(problem, answers, values)
    heatmaps, visibility = _pictures(problem, answers, labels)
    checked = Checked(
        verdict=verdict.to_dict(),
        marks=cell_marks(verdict),
        labels=labels,
        heatmaps=heatmaps,
        visibility=visibility,
        expected={ask.name: problem.answer_json(ask.name) for ask in problem.ask},
    )
    return _render_problem(problem, values=values, checked=checked)
