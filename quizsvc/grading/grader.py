"""Grading: every step against every pipeline at once, then error carried
forward, the diagnosis and the feedback."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from quizsvc.grading.carried import _derive
from quizsvc.grading.cells import _agreement, _close, _rows
from quizsvc.grading.diagnosis import _diagnose
from quizsvc.grading.feedback import _feedback
from quizsvc.grading.messages import _ALL_CORRECT
from quizsvc.grading.reading import _blank, _parse_for, _size
from quizsvc.grading.verdict import (
    NOT_DERIVED,
    FormatError,
    StepResult,
    Verdict,
    _Step,
)
from quizsvc.problems import Ask, Problem


def grade(problem: Problem, answers: Mapping[str, Any]) -> Verdict:
    """Grade the learner's answers (name → text, JSON list or number)."""
    return _grade(problem, answers)


# Learners type inf, NaN and huge numbers: arithmetic on them is expected.
@np.errstate(all="ignore")
def _grade(problem: Problem, answers: Mapping[str, Any]) -> Verdict:
    format_errors: list[FormatError] = []
    if type(answers) is not dict and not isinstance(answers, Mapping):
        answers = {}
        format_errors.append(
            FormatError(
                "answers",
                {
                    "zh-CN": '答案应当是“名称 → 值”的对应表，例如 {"S": "[[1, 0]]"}',
                    "en": "answers must map each quantity's name to a value, e.g. "
                    '{"S": "[[1, 0]]"}',
                },
            )
        )
    names = [a.name for a in problem.ask]
    # Usually every key names an asked quantity: one set check says so.
    unknown = () if problem.context["grading"]["asked"].issuperset(answers) else answers
    for key in unknown:
        if key not in names:
            format_errors.append(
                FormatError(
                    str(key),
                    {
                        "zh-CN": f"这道题没有“{key}”；要填的是：{'、'.join(names)}",
                        "en": f"this problem has no quantity {key!r}; it asks for "
                        f"{', '.join(names)}",
                    },
                )
            )
    parsed: dict[str, np.ndarray] = {}
    for ask in problem.ask:
        raw = answers.get(ask.name)
        if _blank(raw):
            continue
        value = _parse_for(problem, ask, raw)
        if isinstance(value, FormatError):
            format_errors.append(value)
        else:
            parsed[ask.name] = value

    steps, all_right = _grade_steps(problem, parsed)
    if all_right:
        results = _all_right(problem)
        if not format_errors:
            return Verdict(True, 1.0, results, None, None, dict(_ALL_CORRECT), ())
        steps = [
            _Step(ask, parsed[ask.name], result, None)
            for ask, result in zip(problem.ask, results, strict=True)
        ]
    misconception, where = (
        (None, None) if format_errors else _diagnose(problem, steps, parsed)
    )
    correct = not format_errors and all(s.result.correct for s in steps)
    score = (
        1.0 if correct else min(sum(s.result.score for s in steps) / len(steps), 1.0)
    )
    return Verdict(
        correct=correct,
        score=score,
        steps=tuple(s.result for s in steps),
        misconception=misconception,
        misconception_step=where,
        feedback=_feedback(problem, steps, misconception, where, format_errors),
        format_errors=tuple(format_errors),
    )


def _grade_steps(
    problem: Problem, parsed: Mapping[str, np.ndarray]
) -> tuple[list[_Step], bool]:
    """Grade every step against every pipeline in a few whole-array operations.

    Also says whether every step is right: the usual case, answered at once
    (with no steps: `_all_right` has their results).
    """
    layout = problem.context["grading"]
    flat, spans = layout["flat"], layout["spans"]
    tolerance = layout["cell_tolerance"]
    count = flat.shape[0]
    fits = [a.name in parsed and parsed[a.name].shape == a.shape for a in problem.ask]
    # An answer of another shape (or none) stands in as NaN and matches nothing
    # here; `_off_shape_step` grades a transposed one.
    answer = np.concatenate(
        [
            parsed[a.name].ravel() if fit else np.full(hi - lo, np.nan)
            for a, fit, (lo, hi) in zip(problem.ask, fits, spans, strict=True)
        ]
    )
    near = np.abs(answer - flat) <= tolerance  # ±inf or NaN in flat: no match
    # One sum tells the cases apart: finite when every cell is (the usual
    # case), NaN when some cell may be NaN, ±inf when some is infinite.
    total = float(answer.sum())
    if not math.isfinite(total):
        near |= answer == flat  # ±inf on both sides
        if math.isnan(total):
            near |= np.isnan(answer) & np.isnan(flat)
        for fit, (lo, hi) in zip(fits, spans, strict=True):
            if not fit:
                near[:, lo:hi] = False
    if all(fits) and np.count_nonzero(near[0]) == near.shape[1]:
        return [], True
    for lo, hi in layout["never"]:
        near[-1, lo:hi] = False
    match = np.logical_and.reduceat(near, layout["starts"], axis=1).T.tolist()
    # Python lists from here on: a step has a handful of cells, and list
    # slices cost less than a NumPy call per step.
    right_cells = near[0].tolist()
    right = {a.name: fits[i] and match[i][0] for i, a in enumerate(problem.ask)}
    consistent, carried, derived = _carried_forward(problem, parsed, right, tolerance)

    steps: list[_Step] = []
    for i, ask in enumerate(problem.ask):
        x = parsed.get(ask.name)
        if x is None:
            result = StepResult(ask.name, False, False, 0.0)
            steps.append(_Step(ask, None, result, None))
            continue
        correct = right[ask.name]
        agrees = consistent.get(i)
        if not fits[i]:
            off = _off_shape_step(problem, ask, x, agrees, count)
            steps.append(off._replace(derived=derived.get(i, NOT_DERIVED)))
            continue
        lo, hi = spans[i]
        cells = right_cells[lo:hi]
        if i in carried and not correct:
            # Error carried forward: a cell that agrees with the learner's own
            # earlier numbers counts as right.
            cells = [a or b for a, b in zip(cells, carried[i], strict=True)]
        if correct or agrees:
            score = 1.0
        elif ask.format == "choice":
            score = 0.0
        else:
            score = sum(cells) / len(cells)
        result = StepResult(
            ask.name, True, correct, score, _rows(cells, ask.shape), agrees
        )
        steps.append(_Step(ask, x, result, match[i], derived.get(i, NOT_DERIVED)))
    return steps, False


def _carried_forward(
    problem: Problem,
    parsed: Mapping[str, np.ndarray],
    right: Mapping[str, bool],
    tolerance: np.ndarray,
) -> tuple[dict[int, bool | None], dict[int, list[bool]], dict[int, np.ndarray | None]]:
    """For each answered derived step: does it follow from the learner's inputs?

    Returns the verdict per step index (None when it cannot be derived); for
    steps compared cell by cell, which cells agree (flat); and what was
    derived per step index, for the diagnosis to reuse.
    """
    consistent: dict[int, bool | None] = {}
    carried: dict[int, list[bool]] = {}
    made: dict[int, np.ndarray | None] = {}
    spans = problem.context["grading"]["spans"]
    for i, ask in enumerate(problem.ask):
        x = parsed.get(ask.name)
        if not ask.derive or x is None:
            continue
        if right[ask.name] and all(right[s] for s in ask.depends_on):
            consistent[i] = True  # right, from right inputs: nothing to carry
            continue
        derived = made[i] = _derive(problem, ask, parsed)
        if derived is None:
            consistent[i] = None
        elif derived.shape != x.shape:
            consistent[i] = False
        else:
            # Every cell of one step has the same tolerance.
            carried[i], consistent[i] = _agreement(x, derived, tolerance[spans[i][0]])
    return consistent, carried, made


def _all_right(problem: Problem) -> tuple[StepResult, ...]:
    """Every step right: full marks, each derived step consistent by construction."""
    results = []
    for ask in problem.ask:
        shape = ask.shape
        if len(shape) == 2:
            ok: Any = [[True] * shape[1] for _ in range(shape[0])]
        else:
            ok = [True] * shape[0] if shape else True
        consistent = True if ask.derive else None
        results.append(StepResult(ask.name, True, True, 1.0, ok, consistent))
    return tuple(results)


def _off_shape_step(
    problem: Problem, ask: Ask, x: np.ndarray, consistent: bool | None, count: int
) -> _Step:
    """Grade an answer typed transposed (the only other shape parsing lets by)."""
    truth = problem.answer[ask.name]
    matches = [False] * count
    if problem.virtual and ask.transposable and x.shape == truth.T.shape:
        matches[-1] = bool(_close(x, truth.T, problem.tolerance).all())
    message = {
        "zh-CN": f"{ask.label['zh-CN']} 应当是 {_size(truth.shape)}，却得到 "
        f"{_size(x.shape)}——是不是写成转置了？",
        "en": f"The {ask.label['en']}: expected {_size(truth.shape)}, got "
        f"{_size(x.shape)} — transposed?",
    }
    score = 1.0 if consistent else 0.0
    result = StepResult(ask.name, True, False, score, None, consistent, message)
    return _Step(ask, x, result, matches)
