"""The correct attention pipeline and one buggy pipeline per classic mistake.

Every pipeline that differs from the correct one before the softmax (wrong
scale, K not transposed, mask ignored or flipped) is evaluated in a single
batched `engine.attention` call: the engine broadcasts leading axes, so row p
of the batch is pipeline p. Mistakes made after the scores (softmax over the
wrong axis, no softmax, no normalization, hard argmax, mask applied after the
softmax) are derived from that call's intermediates with a few array
operations. Results are kept stacked, pipeline first, so the generator and the
grader compare against all pipelines at once.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from quizsvc.engine import attention, causal_mask

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


@dataclass
class Runs:
    """Pipelines evaluated together: `values[q][p]` is quantity q in pipeline p."""

    names: list[str]
    values: dict[str, np.ndarray]


# ---------------------------------------------------------------------------
# Row and column operations shared by the generator and the grader. They take
# any float array [..., Tq, Tk]; -inf marks a hidden cell, and a row whose
# cells are all hidden has no weights (NaN), as the engine reports it.


def softmax_rows(scores: np.ndarray) -> np.ndarray:
    """Row-wise softmax; a row of -inf (or containing NaN) gives NaN."""
    with np.errstate(all="ignore"):
        peak = scores.max(axis=-1, keepdims=True)
        empty = peak == -np.inf
        shifted = np.exp(scores - np.where(empty, 0.0, peak))
        weights = shifted / shifted.sum(axis=-1, keepdims=True)
    return np.where(empty, np.nan, weights)


def softmax_columns(scores: np.ndarray) -> np.ndarray:
    """Softmax down each column (the mistake); a hidden column gets weight 0."""
    with np.errstate(all="ignore"):
        peak = scores.max(axis=-2, keepdims=True)
        empty = peak == -np.inf
        shifted = np.exp(scores - np.where(empty, 0.0, peak))
        weights = shifted / shifted.sum(axis=-2, keepdims=True)
    return np.where(empty, 0.0, weights)


def scores_as_weights(scores: np.ndarray) -> np.ndarray:
    """Use the scores directly as weights, a hidden cell contributing nothing."""
    return np.where(scores == -np.inf, 0.0, scores)


def unnormalized_exp(scores: np.ndarray) -> np.ndarray:
    """exp(S − m) without dividing by the row sum; a fully hidden row is NaN."""
    with np.errstate(all="ignore"):
        peak = scores.max(axis=-1, keepdims=True)
        empty = peak == -np.inf
        values = np.exp(scores - np.where(empty, 0.0, peak))
    return np.where(empty, np.nan, values)


def has_tied_peak(scores: np.ndarray) -> bool:
    """True if some row's largest finite entry occurs twice (within 1e-9)."""
    if scores.shape[-1] < 2:
        return False
    top = np.sort(scores, axis=-1)[..., -2:]
    with np.errstate(all="ignore"):
        return bool(((top[..., 1] - top[..., 0] <= 1e-9) & (top[..., 1] > -np.inf))
                    .any())


def argmax_weights(scores: np.ndarray) -> np.ndarray:
    """One-hot weights on each row's largest entry; a fully hidden row is NaN."""
    first = np.argmax(scores, axis=-1)
    one_hot = (np.arange(scores.shape[-1]) == first[..., None]).astype(np.float64)
    peak = np.take_along_axis(scores, first[..., None], axis=-1)
    return np.where((peak == -np.inf) | np.isnan(peak), np.nan, one_hot)


def matmul(weights: np.ndarray, values: np.ndarray) -> np.ndarray:
    """weights @ values, quietly propagating NaN and inf."""
    with np.errstate(all="ignore"):
        return weights @ values


# ---------------------------------------------------------------------------
# Pipelines from Q, K, V.

_ENGINE_ROWS = {"no_scale", "scale_by_d", "scale_multiplied", "k_not_transposed",
                "mask_ignored", "causal_flipped"}
_NEED_A_CHOICE = {"unnormalized_exp", "hard_argmax"}


def applicable_qkv(
    candidates: Iterable[str], *, d: int, full: np.ndarray, causal: bool
) -> list[str]:
    """Keep the candidate mistakes that this problem's shapes and mask allow."""
    tq, tk = full.shape
    masked = not full.all()
    # With at most one visible key per row, the softmax is a no-op: leaving it
    # unnormalized or taking the argmax cannot be seen.
    some_choice = bool((full.sum(axis=-1) >= 2).any())
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
        if name in _NEED_A_CHOICE and not some_choice:
            continue
        allowed.append(name)
    return allowed


def qkv_pipelines(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    *,
    visible: np.ndarray | None,
    causal: bool,
    candidates: Iterable[str],
) -> Runs:
    """Evaluate the correct pipeline and each candidate mistake from Q, K, V.

    `visible` is the non-causal part of the mask (True = may attend), or None;
    with `causal`, query i also sees only keys 0…i. Quantities: "visible"
    (0/1), "scores", "weights", "output". Raises `Degenerate` when a row's
    largest score is tied and hard_argmax is a candidate.
    """
    tq, d = q.shape
    tk = k.shape[0]
    base = np.ones((tq, tk), dtype=bool) if visible is None else visible
    lower = causal_mask(tq, tk) if causal else None
    full = base & lower if causal else base
    names = applicable_qkv(candidates, d=d, full=full, causal=causal)
    engine_rows = ["correct", *(n for n in names if n in _ENGINE_ROWS)]
    if "mask_after_softmax" in names and "mask_ignored" not in engine_rows:
        engine_rows.append("mask_ignored")  # its weights are needed, not reported

    scale = 1.0 / math.sqrt(d)
    factors = {"no_scale": 1.0, "scale_by_d": 1.0 / d, "scale_multiplied": math.sqrt(d)}
    count = len(engine_rows)
    row_scale = np.array([factors.get(n, scale) for n in engine_rows])
    keys = k
    if "k_not_transposed" in engine_rows:
        # Using K for Kᵀ multiplies by K itself, i.e. dots with Kᵀ's rows.
        keys = np.broadcast_to(k, (count, tk, d)).copy()
        keys[engine_rows.index("k_not_transposed")] = k.T
    row_visible = np.empty((count, tq, tk), dtype=bool)
    row_visible[:] = full
    if "mask_ignored" in engine_rows:
        row_visible[engine_rows.index("mask_ignored")] = True
    if "causal_flipped" in engine_rows:
        row_visible[engine_rows.index("causal_flipped")] = base & lower.T
    trace = attention(q * row_scale[:, None, None], keys, v,
                      mask=np.where(row_visible, 0.0, -np.inf), scale=1.0)
    if "mask_ignored" in engine_rows:
        row_visible[engine_rows.index("mask_ignored")] = full  # they knew the mask

    scores = trace.scores
    derived: list[tuple[str, np.ndarray, int]] = []
    correct_scores = scores[0]
    if "softmax_over_queries" in names:
        derived.append(("softmax_over_queries", softmax_columns(correct_scores), 0))
    if "no_softmax" in names:
        derived.append(("no_softmax", scores_as_weights(correct_scores), 0))
    if "unnormalized_exp" in names:
        exp = np.where(trace.undefined_rows[0][:, None], np.nan, trace.exp[0])
        derived.append(("unnormalized_exp", exp, 0))
    if "mask_after_softmax" in names:
        ignored = engine_rows.index("mask_ignored")
        derived.append(("mask_after_softmax", trace.weights[ignored] * full, ignored))
    if "hard_argmax" in names:
        if has_tied_peak(correct_scores):
            raise Degenerate("hard_argmax: a row's largest score is tied")
        derived.append(("hard_argmax", argmax_weights(correct_scores), 0))

    all_names = engine_rows + [name for name, _, _ in derived]
    values = {
        "visible": row_visible.astype(np.float64),
        "scores": scores,
        "weights": trace.weights,
        "output": trace.output,
    }
    if derived:
        weights = np.stack([w for _, w, _ in derived])
        source = [i for _, _, i in derived]
        values = {
            "visible": np.concatenate([values["visible"], values["visible"][[0] *
                                                                           len(source)]]),
            "scores": np.concatenate([scores, scores[source]]),
            "weights": np.concatenate([trace.weights, weights]),
            "output": np.concatenate([trace.output, matmul(weights, v)]),
        }
    return _in_catalog_order(all_names, values, keep=["correct", *names])


def _in_catalog_order(names: list[str], values: dict[str, np.ndarray],
                      keep: list[str]) -> Runs:
    order = sorted((RANK[n], i) for i, n in enumerate(names) if n in keep)
    index = [i for _, i in order]
    if index == list(range(len(names))):
        return Runs(names, values)
    return Runs([names[i] for i in index], {q: a[index] for q, a in values.items()})


# ---------------------------------------------------------------------------
# Pipelines from given scores.

_SCORE_MISTAKES = ("softmax_over_queries", "no_softmax", "unnormalized_exp",
                   "hard_argmax")


def score_pipelines(
    scores: np.ndarray, v: np.ndarray | None, *, candidates: Iterable[str]
) -> Runs:
    """Evaluate softmax (and AV) and its mistakes for scores [B, Tq, Tk].

    The B leading entries are separate scenarios of one problem (e.g. two
    temperatures); the engine sees the scores as Q·I with the -inf cells as an
    additive mask, so all of them are one call. Quantities: "weights"
    [P, B, Tq, Tk] and "output" [P, B, Tq, dv].
    """
    _, tq, tk = scores.shape
    hidden = scores == -np.inf
    some_choice = bool(((~hidden).sum(axis=-1) >= 2).any())
    names = [n for n in _SCORE_MISTAKES if n in candidates
             and not (n == "softmax_over_queries" and tq == 1)
             and not (n in _NEED_A_CHOICE and not some_choice)]
    values_v = np.eye(tk) if v is None else v
    trace = attention(np.where(hidden, 0.0, scores), np.eye(tk), values_v,
                      mask=np.where(hidden, -np.inf, 0.0), scale=1.0)
    weights = [trace.weights]
    if "softmax_over_queries" in names:
        weights.append(softmax_columns(trace.scores))
    if "no_softmax" in names:
        weights.append(scores_as_weights(trace.scores))
    if "unnormalized_exp" in names:
        weights.append(np.where(trace.undefined_rows[..., None], np.nan, trace.exp))
    if "hard_argmax" in names:
        if has_tied_peak(trace.scores):
            raise Degenerate("hard_argmax: a row's largest score is tied")
        weights.append(argmax_weights(trace.scores))
    stacked = np.stack(weights)
    outputs = np.concatenate([trace.output[None], matmul(stacked[1:], values_v)])
    return Runs(["correct", *names], {"weights": stacked, "output": outputs})


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
    return Runs(names, {"output": matmul(np.stack(stacked), v)})


# ---------------------------------------------------------------------------
# Telling pipelines apart.


def differs(a: np.ndarray, b: np.ndarray, margin: float | np.ndarray) -> np.ndarray:
    """Cell-wise: True where a and b differ by more than margin (NaN ≠ number)."""
    with np.errstate(all="ignore"):
        same = (a == b) | (np.abs(a - b) <= margin) | (np.isnan(a) & np.isnan(b))
    return ~same


def close(a: np.ndarray, b: np.ndarray, tolerance: float) -> np.ndarray:
    """Cell-wise: True where a is within tolerance of b (±inf and NaN must match)."""
    with np.errstate(all="ignore"):
        near = np.abs(a - b) <= tolerance
    if near.all():
        return near
    with np.errstate(all="ignore"):
        return near | (a == b) | (np.isnan(a) & np.isnan(b))


def require_distinct(
    names: list[str],
    stacks: dict[str, np.ndarray],
    margins: dict[str, float],
    transposable: Iterable[str] = (),
) -> None:
    """Raise `Degenerate` unless every pipeline differs from every other.

    `stacks[q]` holds quantity q for every pipeline (pipeline first). Each pair
    must differ, in at least one cell of one quantity, by more than that
    quantity's margin. With `transposable` quantities the "transposed" mistake
    (those written transposed, the rest right) must differ from all too.
    """
    count = len(names)
    flat = np.concatenate([stacks[q].reshape(count, -1) for q in margins], axis=1)
    margin = np.concatenate([np.full(stacks[q][0].size, margins[q]) for q in margins])
    apart = differs(flat[:, None, :], flat[None, :, :], margin).any(axis=-1)
    np.fill_diagonal(apart, True)
    if not apart.all():
        first, second = np.argwhere(~apart)[0]
        raise Degenerate(f"{names[first]} and {names[second]} give the same answer")
    transposable = list(transposable)
    if not transposable:
        return
    if any(stacks[q].shape[1] != stacks[q].shape[2] for q in transposable):
        return  # a transposed answer has another shape: always told apart
    mirrored = np.concatenate([
        (stacks[q][0].T if q in transposable else stacks[q][0]).ravel()
        for q in margins
    ])
    apart_t = differs(flat, mirrored[None, :], margin).any(axis=-1)
    if not apart_t.all():
        other = names[int(np.argmin(apart_t))]
        raise Degenerate(f"transposed and {other} give the same answer")
