"""Error carried forward: what a step should be, given the learner's own
earlier answers, and each classic mistake applied to those answers."""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from quizsvc.problems import Ask, Problem
from quizsvc.problems.pipelines import (
    argmax_weights,
    scores_as_weights,
    softmax_columns,
    softmax_rows,
    unnormalized_exp,
)


def _derive(
    problem: Problem, ask: Ask, parsed: Mapping[str, np.ndarray]
) -> np.ndarray | None:
    op, *sources = ask.derive
    if any(s not in parsed for s in sources):
        return None
    first = parsed[sources[0]]
    if op == "softmax":
        # A row that sees nothing has no weights (NaN).
        return softmax_rows(first) if first.ndim == 2 else None
    if op == "matmul_v":
        v = problem.context["V"]
        return first @ v if first.ndim == 2 and first.shape[1] == v.shape[0] else None
    if op == "mask_scores":
        raw = _raw_scores(problem)
        return np.where(first > 0.5, raw, -np.inf) if first.shape == raw.shape else None
    if op == "same_shape":
        return first
    if op == "output_shape":
        return np.concatenate([first[:-1], [float(problem.context["dv"])]])
    if op == "sharper":
        with np.errstate(all="ignore"):
            peaks = [
                np.nanmax(parsed[s]) if not np.isnan(parsed[s]).all() else math.nan
                for s in sources
            ]
        if (
            any(math.isnan(p) for p in peaks)
            or abs(peaks[0] - peaks[1]) <= problem.tolerance
        ):
            return None
        return np.array(0.0 if peaks[0] > peaks[1] else 1.0)
    raise ValueError(f"unknown derivation {op!r}")  # pragma: no cover


def _raw_scores(problem: Problem) -> np.ndarray:
    """QKᵀ/√d without any mask."""
    if "mask_ignored" in problem.names:  # that pipeline's scores are exactly these
        return problem.stacks["S"][problem.names.index("mask_ignored")]
    q, k = problem.given["Q"], problem.given["K"]
    return (q @ k.T) / math.sqrt(q.shape[1])


# Skip a candidate mistake when the learner's value cannot match it (see
# `_may_be`). Only ever False in tests, which check that the verdicts stay the
# same without the shortcut.
PRUNE = True


def _within_unit(x: np.ndarray, tolerance: float) -> bool:
    """Whether every cell is NaN or within `tolerance` of [0, 1].

    A value that agrees (`cells._close`) with an array of weights in [0, 1] or
    NaN must be: a NaN cell agrees only with NaN, any other with a number at
    most `tolerance` away.
    """
    # NaN compares False: it passes. (The grader runs with NumPy's warnings off.)
    return not np.count_nonzero((x < -tolerance) | (x > 1.0 + tolerance))


def _near_flags(x: np.ndarray, tolerance: float) -> bool:
    """Whether every cell is NaN or within `tolerance` of 0 or of 1."""
    return not np.count_nonzero(np.minimum(np.abs(x), np.abs(x - 1.0)) > tolerance)


def _variants(
    problem: Problem,
    ask: Ask,
    parsed: Mapping[str, np.ndarray],
    target: np.ndarray | None = None,
    tolerance: float = 0.0,
    derived: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Each mistake applied to the learner's own previous step.

    With `target` (the learner's value for this step), mistakes whose every
    result lies in [0, 1] (or is NaN), or is 0 or 1, are left out when the
    target cannot agree with such a value within `tolerance`: they could not
    match it, so the diagnosis is the same without computing them. `derived`,
    the softmax of the previous step when the grader already has it, is
    reused rather than computed again.
    """
    op, *sources = ask.derive
    known = problem.misconceptions
    if any(s not in parsed for s in sources) or parsed[sources[0]].ndim != 2:
        return {}
    previous = parsed[sources[0]]
    prune = PRUNE and target is not None
    out: dict[str, np.ndarray] = {}
    if op == "softmax":
        # Every one of these mistakes gives weights in [0, 1] or NaN, except
        # using the scores as they are.
        unit = not prune or _within_unit(target, tolerance)
        makers = {
            "softmax_over_queries": softmax_columns if unit else None,
            "no_softmax": scores_as_weights,
            "unnormalized_exp": unnormalized_exp if unit else None,
            "hard_argmax": argmax_weights
            if unit and (not prune or _near_flags(target, tolerance))
            else None,
        }
        for name, make in makers.items():
            if make is not None and name in known:
                out[name] = make(previous)
        visible = problem.context.get("visible")
        if (
            unit
            and "mask_after_softmax" in known
            and visible is not None
            and visible.shape == previous.shape
        ):
            weights = derived if derived is not None else softmax_rows(previous)
            out["mask_after_softmax"] = weights * visible
    elif op == "matmul_v" and "hard_argmax" in known:
        v = problem.context["V"]
        if previous.shape[1] == v.shape[0]:
            out["hard_argmax"] = _picked_rows(previous, v)
    return out


def _picked_rows(weights: np.ndarray, v: np.ndarray) -> np.ndarray:
    """argmax_weights(weights) @ v, by indexing: each row's pick is one row of V.

    A one-hot row times V is exactly that V row (1·v + 0·others), and a row
    with no pick (all hidden, or NaN) is NaN, as the product gives it.
    """
    first = weights.argmax(axis=-1)
    peak = weights[np.arange(weights.shape[0]), first]
    picked = v[first]
    none = (peak == -np.inf) | (peak != peak)
    if not np.count_nonzero(none):
        return picked
    return np.where(none[:, None], np.nan, picked)
