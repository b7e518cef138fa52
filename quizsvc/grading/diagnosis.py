"""Naming the mistake behind the first wrong step."""

from __future__ import annotations

import numpy as np

from quizsvc.grading import carried
from quizsvc.grading.carried import _derive, _variants
from quizsvc.grading.cells import _agreement
from quizsvc.grading.verdict import NOT_DERIVED, _Step
from quizsvc.problems import Problem
from quizsvc.problems.pipelines import RANK


def _diagnose(
    problem: Problem, steps: list[_Step], parsed
) -> tuple[str | None, str | None]:
    """Name the mistake behind the first wrong step, or one made after it."""
    wrong = [
        i for i, s in enumerate(steps) if s.result.answered and not s.result.correct
    ]
    if not wrong:
        return None, None
    first = wrong[0]
    names = (*problem.names, *problem.virtual)
    candidates = [i for i, hit in enumerate(steps[first].matches) if hit and i > 0]
    if candidates:
        # The pipeline that explains the most steps; ties go to catalog order.
        rows = [s.matches for s in steps if s.matches is not None]
        counts = list(map(sum, zip(*rows, strict=True)))
        best = max(candidates, key=lambda i: (counts[i], -RANK[names[i]]))
        return names[best], steps[first].ask.name
    # No whole pipeline explains it: look for a mistake made on top of the
    # learner's own earlier (wrong) numbers.
    tolerance = problem.tolerance
    for i in wrong:
        step = steps[i]
        if step.ask.derive is None or step.result.consistent_with_previous:
            continue
        derived = step.derived
        if derived is NOT_DERIVED:
            derived = _derive(problem, step.ask, parsed)
        variants = _variants(
            problem,
            step.ask,
            parsed,
            step.value,
            tolerance,
            derived if step.ask.derive[0] == "softmax" else None,
        )
        for name, value in variants.items():
            if (
                value.shape == step.value.shape
                and _agreement(step.value, value, tolerance)[1]
            ):
                return name, step.ask.name
        if (
            step.ask.transposable
            and derived is not None
            and "transposed" in problem.virtual
            and derived.T.shape == step.value.shape
            and _agreement(step.value, derived.T, tolerance)[1]
        ):
            return "transposed", step.ask.name
    for i in wrong:
        if _columns_normalized_single_query(problem, steps[i]):
            return "softmax_over_queries", steps[i].ask.name
    return None, None


def _columns_normalized_single_query(problem: Problem, step: _Step) -> bool:
    """Whether a one-query weights row is all ones on the keys it sees.

    With a single query, normalizing each column divides every visible cell by
    itself; problems leave this mistake out of their candidates (its pipeline
    needs more than one query), so it is recognized here.
    """
    truth = problem.answer.get(step.ask.name)
    value = step.value
    if truth is None or value is None or value.shape != truth.shape:
        return False
    if truth.ndim != 2 or truth.shape[0] != 1:
        return False
    tolerance = problem.tolerance
    # At least two cells (the visible keys) must be 1 within the tolerance.
    if carried.PRUNE and np.count_nonzero(np.abs(value - 1.0) <= tolerance) < 2:
        return False
    with np.errstate(invalid="ignore"):
        sums = np.nansum(truth, axis=-1)
    visible = np.isfinite(truth) & (truth > 0)
    if visible.sum() < 2 or not np.allclose(sums, 1.0):
        return False  # not a row of weights, or one visible key: nothing to see
    return bool(np.all(np.abs(value[visible] - 1.0) <= tolerance))
