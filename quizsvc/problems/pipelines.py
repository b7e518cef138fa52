"""The correct attention pipeline and one buggy pipeline per classic mistake.

Every pipeline that differs from the correct one before the softmax (wrong
scale, K not transposed, mask ignored or flipped) is evaluated in one batched
attention computation: leading axes broadcast, so row p of the batch is
pipeline p. Mistakes made after the scores (softmax over the wrong axis, no
softmax, no normalization, hard argmax, mask applied after the softmax) are
derived from that batch's intermediates with a few array operations. Results
are kept stacked, pipeline first, so the generator and the grader compare
against all pipelines at once.

The batch runs through `engine.attention_steps`, the engine's arithmetic
without its input checks: here the inputs are generated, finite and well
shaped, and the checks cost four times the arithmetic on these small
matrices. Tests assert that the results are bit-for-bit what
`engine.attention` returns.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from quizsvc.engine import attention_steps, shifted_exp, shifted_softmax
from quizsvc.engine import causal_mask as _engine_causal_mask

# The catalog order: names are part of the API and appear in exports.
MISCONCEPTION_NAMES = (
    "no_scale",
    "scale_by_d",
    "scale_multiplied",
    "softmax_over_queries",
    "no_softmax",
    "unnormalized_exp",
    "mask_ignored",
    "mask_after_softmax",
    "causal_flipped",
    "hard_argmax",
    "transposed",
    "k_not_transposed",
)
RANK = {"correct": -1, **{name: i for i, name in enumerate(MISCONCEPTION_NAMES)}}


class Degenerate(Exception):
    """This draw cannot tell some mistake apart from another; draw again."""


class Runs(NamedTuple):
    """Pipelines evaluated together: `values[q][p]` is quantity q in pipeline p."""

    names: list[str]
    values: dict[str, np.ndarray]


# ---------------------------------------------------------------------------
# Row and column operations shared by the generator and the grader. They take
# any float array [..., Tq, Tk]; -inf marks a hidden cell, and a row whose
# cells are all hidden has no weights (NaN), as the engine reports it.


def softmax_rows(scores: np.ndarray, peak: np.ndarray | None = None) -> np.ndarray:
    """Row-wise softmax; a row of -inf (or containing NaN) gives NaN.

    `peak`, each row's largest entry (keepdims), saves finding it again.
    """
    return shifted_softmax(scores, -1, peak)


def softmax_columns(scores: np.ndarray) -> np.ndarray:
    """Softmax down each column (the mistake); a hidden column gets weight 0."""
    return shifted_softmax(scores, -2, empty_weight=0.0)


def scores_as_weights(scores: np.ndarray) -> np.ndarray:
    """Use the scores directly as weights, a hidden cell contributing nothing."""
    return np.where(scores == -np.inf, 0.0, scores)


def unnormalized_exp(scores: np.ndarray) -> np.ndarray:
    """exp(S − m) without dividing by the row sum; a fully hidden row is NaN."""
    values, empty = shifted_exp(scores)
    return values if empty is None else np.where(empty, np.nan, values)


def peak_tied(row: list[float]) -> bool:
    """True if the row's largest finite entry occurs twice (within 1e-9)."""
    # Plain Python: for the handful of short rows here it beats NumPy's overhead.
    top = max(row, default=-math.inf)
    if top == -math.inf or top != top:
        return False
    return sum(1 for x in row if top - x <= 1e-9) > 1


def has_tied_peak(scores: np.ndarray) -> bool:
    """True if some row's largest finite entry occurs twice (within 1e-9)."""
    return any(map(peak_tied, scores.reshape(-1, scores.shape[-1]).tolist()))


def peak_weights(
    scores: np.ndarray, undefined: np.ndarray | None, peak: np.ndarray | None = None
) -> np.ndarray:
    """One-hot weights on each row's largest entry, for rows without ties.

    `undefined` marks rows that see no key (None: there are none); `peak`,
    each row's largest entry (keepdims), saves finding it again.
    """
    if peak is None:
        peak = scores.max(axis=-1, keepdims=True)
    one_hot = (scores == peak).astype(np.float64)
    if undefined is None or not np.count_nonzero(undefined):
        return one_hot
    return np.where(undefined[..., None], np.nan, one_hot)


def argmax_weights(scores: np.ndarray) -> np.ndarray:
    """One-hot weights on each row's (first) largest entry; a hidden row is NaN."""
    first = np.argmax(scores, axis=-1)
    one_hot = (np.arange(scores.shape[-1]) == first[..., None]).astype(np.float64)
    peak = np.take_along_axis(scores, first[..., None], axis=-1)
    return np.where((peak == -np.inf) | np.isnan(peak), np.nan, one_hot)


def matmul(weights: np.ndarray, values: np.ndarray) -> np.ndarray:
    """weights @ values, quietly propagating NaN and inf."""
    with np.errstate(all="ignore"):
        return weights @ values


@functools.lru_cache(maxsize=64)
def causal_mask(tq: int, tk: int) -> np.ndarray:
    """The engine's causal visibility [tq, tk], computed once per size."""
    mask = _engine_causal_mask(tq, tk)
    mask.flags.writeable = False
    return mask


# ---------------------------------------------------------------------------
# Pipelines from Q, K, V.

_ENGINE_ROWS = {
    "no_scale",
    "scale_by_d",
    "scale_multiplied",
    "k_not_transposed",
    "mask_ignored",
    "causal_flipped",
}
_NEED_A_CHOICE = {"unnormalized_exp", "hard_argmax"}


def applicable_qkv(
    candidates: Iterable[str], *, d: int, full: np.ndarray, causal: bool
) -> list[str]:
    """Keep the candidate mistakes that this problem's shapes and mask allow."""
    tq, tk = full.shape
    per_row = full.sum(axis=-1).tolist()
    return list(
        _applicable(
            tuple(candidates),
            d,
            tq,
            tk,
            sum(per_row) < tq * tk,
            causal,
            max(per_row) >= 2,
        )
    )


@functools.lru_cache(maxsize=1024)
def _applicable(
    candidates: tuple[str, ...],
    d: int,
    tq: int,
    tk: int,
    masked: bool,
    causal: bool,
    some_choice: bool,
) -> tuple[str, ...]:
    allowed = []
    for name in candidates:
        if name in ("no_scale", "scale_by_d", "scale_multiplied") and d == 1:
            continue  # with d = 1 every scale is 1: nothing to tell apart
        if name == "k_not_transposed" and d != tk:
            continue  # QK only multiplies when d = Tk
        if name in ("mask_ignored", "mask_after_softmax") and not masked:
            continue
        if name == "causal_flipped" and not causal:
            continue
        if name == "softmax_over_queries" and tq == 1:
            continue  # one query: each column is a single cell
        # With at most one visible key per row the softmax is a no-op: leaving
        # it unnormalized or taking the argmax cannot be seen.
        if name in _NEED_A_CHOICE and not some_choice:
            continue
        allowed.append(name)
    return tuple(allowed)


@dataclass(frozen=True)
class _QkvPlan:
    """Everything about a Q, K, V batch that its sizes and mask decide alone."""

    names: tuple[str, ...]  # the applicable mistakes
    rows: tuple[str, ...]  # the pipelines the engine batch runs, "correct" first
    full: np.ndarray  # what the correct pipeline sees (mask and causal)
    mask: np.ndarray | None  # the additive mask, per batch row when they differ
    row_scale: np.ndarray  # [rows, 1, 1]: each batch row's scale
    k_row: int | None  # the batch row that multiplies by K instead of Kᵀ
    extra_names: tuple[str, ...]  # mistakes derived from the batch, in order
    # For each reported pipeline, the batch row whose scores it shows (a
    # mistake made after the scores shows those it started from).
    score_rows: np.ndarray
    keep: list[int] | None  # rows to report, when a helper row must go
    believed: np.ndarray  # [pipelines, Tq, Tk]: the 0/1 visibility each believes


_EXTRA_ORDER = (
    "softmax_over_queries",
    "no_softmax",
    "unnormalized_exp",
    "mask_after_softmax",
    "hard_argmax",
)


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


@functools.lru_cache(maxsize=1024)
def _qkv_plan(
    tq: int,
    tk: int,
    d: int,
    visible_bytes: bytes | None,
    causal: bool,
    candidates: tuple[str, ...],
) -> _QkvPlan:
    """Work out the batch rows, masks and scales once per sizes, mask and mistakes."""
    if visible_bytes is None:
        base = np.ones((tq, tk), dtype=bool)
    else:
        base = np.frombuffer(visible_bytes, dtype=bool).reshape(tq, tk)
    lower = causal_mask(tq, tk) if causal else None
    full = base & lower if causal else base
    names = applicable_qkv(candidates, d=d, full=full, causal=causal)
    rows = ["correct", *(n for n in names if n in _ENGINE_ROWS)]
    if "mask_after_softmax" in names and "mask_ignored" not in rows:
        rows.append("mask_ignored")  # its weights are needed, not reported
    count = len(rows)

    scale = 1.0 / math.sqrt(d)
    factors = {"no_scale": 1.0, "scale_by_d": 1.0 / d, "scale_multiplied": math.sqrt(d)}
    flipped = base & lower.T if causal else None
    if "mask_ignored" in rows or "causal_flipped" in rows:
        row_visible = np.empty((count, tq, tk), dtype=bool)
        row_visible[:] = full
        if "mask_ignored" in rows:
            row_visible[rows.index("mask_ignored")] = True
        if "causal_flipped" in rows:
            row_visible[rows.index("causal_flipped")] = flipped
        mask = np.where(row_visible, 0.0, -np.inf)
    else:
        mask = None if full.all() else np.where(full, 0.0, -np.inf)
    row_scale = np.array([factors.get(n, scale) for n in rows])[:, None, None]

    extra_names = tuple(n for n in _EXTRA_ORDER if n in names)
    score_rows = list(range(count)) + [
        rows.index("mask_ignored") if n == "mask_after_softmax" else 0
        for n in extra_names
    ]
    all_names = [*rows, *extra_names]
    believed = np.empty((len(all_names), tq, tk))
    believed[:] = full
    if "causal_flipped" in rows:
        believed[rows.index("causal_flipped")] = flipped
    keep = None
    if len(all_names) != len(names) + 1:
        keep = [i for i, n in enumerate(all_names) if n == "correct" or n in names]
        believed = believed[keep]
        score_rows = [score_rows[i] for i in keep]
    return _QkvPlan(
        names=tuple(names),
        rows=tuple(rows),
        full=_read_only(full),
        mask=None if mask is None else _read_only(mask),
        row_scale=_read_only(row_scale),
        k_row=rows.index("k_not_transposed") if "k_not_transposed" in rows else None,
        extra_names=extra_names,
        score_rows=_read_only(np.array(score_rows)),
        keep=keep,
        believed=_read_only(believed),
    )


def qkv_pipelines(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    *,
    visible: np.ndarray | None,
    causal: bool,
    candidates: Iterable[str],
    with_visible: bool = False,
    ties_checked: bool = False,
) -> Runs:
    """Evaluate the correct pipeline and each candidate mistake from Q, K, V.

    `visible` is the non-causal part of the mask (True = may attend), or None;
    with `causal`, query i also sees only keys 0…i. Quantities: "scores",
    "weights", "output", and with `with_visible` the 0/1 "visible" matrix each
    pipeline believes in. "correct" comes first; the others follow in no
    particular order. Raises `Degenerate` when a row's largest score is tied
    and hard_argmax is a candidate (unless the caller has `ties_checked`).
    """
    tq, d = q.shape
    tk = k.shape[0]
    plan = _qkv_plan(
        tq,
        tk,
        d,
        None if visible is None else np.asarray(visible, dtype=bool).tobytes(),
        causal,
        tuple(candidates),
    )
    names = plan.names
    keys = k
    if plan.k_row is not None:
        # Using K for Kᵀ multiplies by K itself, i.e. dots with Kᵀ's rows.
        keys = np.empty((len(plan.rows), tk, d))
        keys[:] = k
        keys[plan.k_row] = k.T
    trace = attention_steps(q, keys, None, plan.mask, plan.row_scale)

    correct_scores = trace.scores[0]
    undefined = trace.undefined_rows[0]
    some_undefined = bool(np.count_nonzero(undefined))
    extra_weights: list[np.ndarray] = []
    if "softmax_over_queries" in names:
        extra_weights.append(softmax_columns(correct_scores))
    if "no_softmax" in names:
        # Without a mask no score is -inf: the scores are the weights as they are.
        extra_weights.append(
            correct_scores if plan.mask is None else scores_as_weights(correct_scores)
        )
    if "unnormalized_exp" in names:
        exp = trace.exp[0]
        extra_weights.append(
            np.where(undefined[:, None], np.nan, exp) if some_undefined else exp
        )
    if "mask_after_softmax" in names:
        ignored = plan.rows.index("mask_ignored")
        extra_weights.append(trace.weights[ignored] * plan.full)
    if "hard_argmax" in names:
        if not ties_checked and has_tied_peak(correct_scores):
            raise Degenerate("hard_argmax: a row's largest score is tied")
        extra_weights.append(
            peak_weights(
                correct_scores,
                undefined if some_undefined else None,
                trace.row_max[0][:, None],
            )
        )

    # One gather picks every reported pipeline's scores (and drops a helper row).
    scores = trace.scores[plan.score_rows]
    weights = trace.weights
    if extra_weights:
        weights = np.concatenate([weights, extra_weights])
    all_names = [*plan.rows, *plan.extra_names]
    if plan.keep is not None:
        all_names = [all_names[i] for i in plan.keep]
        weights = weights[plan.keep]
    # Every pipeline's O in one product, as the engine computes it (NaN rows,
    # for queries that see no key, stay NaN).
    values = {"scores": scores, "weights": weights, "output": weights @ v}
    if with_visible:
        values["visible"] = plan.believed
    return Runs(all_names, values)


# ---------------------------------------------------------------------------
# Pipelines from given scores.

_SCORE_MISTAKES = (
    "softmax_over_queries",
    "no_softmax",
    "unnormalized_exp",
    "hard_argmax",
)


@functools.lru_cache(maxsize=256)
def _score_mistakes(
    candidates: tuple[str, ...], tq: int, some_choice: bool
) -> tuple[str, ...]:
    """The candidate mistakes on given scores that this problem can show."""
    return tuple(
        n
        for n in _SCORE_MISTAKES
        if n in candidates
        and not (n == "softmax_over_queries" and tq == 1)
        and not (n in _NEED_A_CHOICE and not some_choice)
    )


def score_pipelines(
    scores: np.ndarray,
    v: np.ndarray | None,
    *,
    candidates: Iterable[str],
    ties_checked: bool = False,
) -> Runs:
    """Evaluate softmax (and AV) and its mistakes for scores [B, Tq, Tk].

    The B leading entries are separate scenarios of one problem (e.g. two
    temperatures), all in one batch; a -inf score is a hidden cell.
    Quantities: "weights" [P, B, Tq, Tk] and, given V, "output" [P, B, Tq, dv].
    Raises `Degenerate` when a row's largest
    score is tied and hard_argmax is a candidate (unless `ties_checked`).
    """
    _, tq, tk = scores.shape
    hidden = scores == -np.inf
    masked = bool(np.count_nonzero(hidden))
    some_choice = not masked or bool(((~hidden).sum(axis=-1) >= 2).any())
    names = _score_mistakes(tuple(candidates), tq, some_choice)
    # The scores are given: the engine's arithmetic starts from them, and a
    # -inf cell is a hidden one.
    trace = attention_steps(scores, None, None)
    undefined = trace.undefined_rows
    some_undefined = bool(np.count_nonzero(undefined))
    weights = [trace.weights]
    if "softmax_over_queries" in names:
        weights.append(softmax_columns(trace.scores))
    if "no_softmax" in names:
        weights.append(scores_as_weights(trace.scores) if masked else trace.scores)
    if "unnormalized_exp" in names:
        weights.append(
            np.where(undefined[..., None], np.nan, trace.exp)
            if some_undefined
            else trace.exp
        )
    if "hard_argmax" in names:
        if not ties_checked and has_tied_peak(trace.scores):
            raise Degenerate("hard_argmax: a row's largest score is tied")
        weights.append(
            peak_weights(
                trace.scores,
                undefined if some_undefined else None,
                trace.row_max[..., None],
            )
        )
    stacked = np.array(weights)
    values = {"weights": stacked}
    if v is not None:
        values["output"] = stacked @ v
    return Runs(["correct", *names], values)


def output_pipelines(
    weights: np.ndarray, v: np.ndarray, *, candidates: Iterable[str]
) -> Runs:
    """Evaluate O = AV and, if asked, the hard-argmax mistake, from given weights."""
    names = ["correct"]
    stacked = [weights]
    if "hard_argmax" in candidates:
        if has_tied_peak(weights):
            raise Degenerate("hard_argmax: a row's largest weight is tied")
        names.append("hard_argmax")
        stacked.append(argmax_weights(weights))
    return Runs(names, {"output": matmul(np.array(stacked), v)})


# ---------------------------------------------------------------------------
# Telling pipelines apart.


# Stand-ins for NaN and ±inf so that plain subtraction compares any two values;
# no computed value comes near them.
NAN_STAND_IN, INF_STAND_IN = 1e300, 1.5e300


def comparable(values: np.ndarray) -> np.ndarray:
    """Map NaN and ±inf to finite stand-ins, so |a − b| compares everything."""
    finite = np.where(values != values, NAN_STAND_IN, values)
    return np.maximum(np.minimum(finite, INF_STAND_IN), -INF_STAND_IN)


@functools.lru_cache(maxsize=32)
def _pairs(count: int) -> tuple[np.ndarray, np.ndarray]:
    """Every pair (i < j) of `count` pipelines, as two index arrays."""
    return np.triu_indices(count, 1)


def require_distinct(
    names: tuple[str, ...], flat: np.ndarray, margin: np.ndarray
) -> None:
    """Raise `Degenerate` unless every pipeline differs from every other.

    `flat` [pipelines, cells] holds each pipeline's answers side by side (row i
    is `names[i]`) and `margin` each cell's margin: every pair of pipelines
    must differ by more than the margin in at least one cell.
    """
    # One sum tells what the values hold: finite when every one is (the usual
    # case). Infinities alone compare as they are, -inf − -inf giving NaN,
    # "not apart", as it should; NaN needs its stand-in to differ from numbers.
    total = float(flat.sum())
    first, second = _pairs(len(names))
    if math.isfinite(total):
        apart = (np.abs(flat[first] - flat[second]) > margin).any(axis=1)
    elif math.isnan(total):
        plain = comparable(flat)
        apart = (np.abs(plain[first] - plain[second]) > margin).any(axis=1)
    else:
        with np.errstate(invalid="ignore"):
            apart = (np.abs(flat[first] - flat[second]) > margin).any(axis=1)
    if np.count_nonzero(apart) < apart.size:
        pair = int(np.argmin(apart))
        raise Degenerate(
            f"{names[first[pair]]} and {names[second[pair]]} give the same answer"
        )
