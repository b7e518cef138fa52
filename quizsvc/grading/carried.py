"""Error carried forward: what a step should be, given the learner's own
earlier answers, and each classic mistake applied to those answers."""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from quizsvc.problems import Ask, Problem
from quizsvc.problems.pipelines import (
    argmax_weights,
    matmul,
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


def _variants(
    problem: Problem, ask: Ask, parsed: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Each mistake applied to the learner's own previous step."""
    op, *sources = ask.derive
    known = set(problem.misconceptions)
    if any(s not in parsed for s in sources) or parsed[sources[0]].ndim != 2:
        return {}
    previous = parsed[sources[0]]
    out: dict[str, np.ndarray] = {}
    if op == "softmax":
        makers = {
            "softmax_over_queries": softmax_columns,
            "no_softmax": scores_as_weights,
            "unnormalized_exp": unnormalized_exp,
            "hard_argmax": argmax_weights,
        }
        for name, make in makers.items():
            if name in known:
                out[name] = make(previous)
        visible = problem.context.get("visible")
        if (
            "mask_after_softmax" in known
            and visible is not None
            and visible.shape == previous.shape
        ):
            out["mask_after_softmax"] = softmax_rows(previous) * visible
    elif op == "matmul_v" and "hard_argmax" in known:
        v = problem.context["V"]
        if previous.shape[1] == v.shape[0]:
            out["hard_argmax"] = matmul(argmax_weights(previous), v)
    return out
