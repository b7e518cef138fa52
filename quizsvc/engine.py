"""Scaled dot-product attention with every intermediate the lesson names.

S = Q·Kᵀ·scale / temperature + M,   m = rowmax(S),   E = exp(S − m),
A = E / rowsum(E),   O = A·V.

Pure NumPy and standard library: the web and CLI layers build on this, never
the other way round.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "AttentionInputError",
    "AttentionTrace",
    "FullyMaskedRowError",
    "MaskError",
    "NonFiniteInputError",
    "ShapeError",
    "AttentionSteps",
    "attention",
    "attention_steps",
    "causal_mask",
    "jsonable",
    "shifted_exp",
    "shifted_softmax",
    "softmax",
]


class AttentionInputError(ValueError):
    """Base class for every input the engine refuses."""


class ShapeError(AttentionInputError):
    """An argument has the wrong number of axes or an incompatible shape."""


class NonFiniteInputError(AttentionInputError):
    """An argument holds NaN or ±inf where only finite numbers make sense."""


class MaskError(AttentionInputError):
    """The mask has the wrong shape, dtype or values."""


class FullyMaskedRowError(AttentionInputError):
    """Raised in strict mode when some query row can attend to no key at all."""

    def __init__(self, rows: list[tuple[int, ...]]):
        self.rows = rows
        shown = ", ".join(_format_index(r) for r in rows[:8])
        more = f" and {len(rows) - 8} more" if len(rows) > 8 else ""
        super().__init__(
            f"every key is masked for query row(s) {shown}{more}: softmax has no "
            "valid denominator there, so the weights and output are undefined"
        )


def _format_index(index: tuple[int, ...]) -> str:
    return str(index[0]) if len(index) == 1 else str(list(index))


@dataclass(frozen=True, eq=False)
class AttentionTrace:
    """Every intermediate of one attention computation (arrays are read-only)."""

    scores: np.ndarray
    row_max: np.ndarray
    exp: np.ndarray
    denom: np.ndarray
    weights: np.ndarray
    output: np.ndarray
    undefined_rows: np.ndarray
    scale: float
    temperature: float

    @property
    def masked(self) -> np.ndarray:
        """Boolean [..., Tq, Tk]: True where the key is hidden from the query."""
        return np.isneginf(self.scores)

    def exp_unshifted(self) -> np.ndarray:
        """exp(S) without the row-max shift, as the lesson prints it (may be inf)."""
        with np.errstate(over="ignore"):
            return np.exp(self.scores)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable view (NaN → null, ±inf → "inf"/"-inf")."""
        return {
            "scale": self.scale,
            "temperature": self.temperature,
            "scores": jsonable(self.scores),
            "row_max": jsonable(self.row_max),
            "exp_unshifted": jsonable(self.exp_unshifted()),
            "exp": jsonable(self.exp),
            "denom": jsonable(self.denom),
            "weights": jsonable(self.weights),
            "output": jsonable(self.output),
            "undefined_rows": self.undefined_rows.tolist(),
        }


def jsonable(value: Any) -> Any:
    """Convert an array or scalar to JSON types: NaN → None, ±inf → strings."""
    if isinstance(value, np.ndarray):
        if value.dtype == bool:
            return value.tolist()
        # The usual case, all finite numbers: one tolist() instead of a call
        # per element.
        if value.ndim and value.dtype.kind in "fiu" and np.isfinite(value).all():
            return value.tolist()
        return [jsonable(x) for x in value] if value.ndim else jsonable(value.item())
    if isinstance(value, (float, np.floating)):
        f = float(value)
        if math.isnan(f):
            return None
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        return f
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def _as_float_array(name: str, value: Any, expected: str) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ShapeError(
            f"{name} must be a numeric array of shape {expected} "
            f"(a ragged or non-numeric value cannot be one): {exc}"
        ) from None
    if array.ndim < 2:
        raise ShapeError(
            f"{name} must have shape {expected}; got shape {array.shape} "
            f"({array.ndim} axis/axes, at least 2 needed)"
        )
    if 0 in array.shape:
        raise ShapeError(
            f"{name} must have shape {expected} with no empty axis; "
            f"got shape {array.shape}"
        )
    if not np.isfinite(array).all():
        raise NonFiniteInputError(
            f"{name} must hold finite numbers only (no NaN or inf); "
            f"expected a finite array of shape {expected}"
        )
    return array


def causal_mask(tq: int, tk: int) -> np.ndarray:
    """Boolean [tq, tk] visibility: query i sees key j iff j ≤ i + (tk − tq)."""
    offset = tk - tq
    return np.arange(tk)[None, :] <= np.arange(tq)[:, None] + offset


def _additive_mask(mask: Any, batch: tuple[int, ...], tq: int, tk: int) -> np.ndarray:
    """Validate a boolean or additive mask and return it as additive float64."""
    expected = f"broadcastable to [..., Tq={tq}, Tk={tk}]"
    array = np.asarray(mask)
    if array.dtype == bool:
        additive = np.where(array, 0.0, -np.inf)
    else:
        try:
            additive = np.asarray(array, dtype=np.float64)
        except (TypeError, ValueError):
            raise MaskError(
                f"mask must be boolean (True = may attend) or additive numbers "
                f"(0 / -inf), {expected}; got dtype {array.dtype}"
            ) from None
        if np.isnan(additive).any() or np.isposinf(additive).any():
            raise MaskError(
                "mask must not contain NaN or +inf: an additive mask uses 0 for "
                "visible cells and -inf (or a finite bias) for hidden ones"
            )
    # Any shape NumPy broadcasts is fine: a key mask (Tk,) is the usual padding mask.
    try:
        full = np.broadcast_shapes(additive.shape, (*batch, tq, tk))
    except ValueError:
        raise MaskError(
            f"mask must be {expected}; got shape {additive.shape}"
        ) from None
    if full[-2:] != (tq, tk):
        raise MaskError(f"mask must be {expected}; got shape {additive.shape}")
    return additive


# How many axes of each intermediate follow the batch axes.
_TRAILING_AXES = {
    "scores": 2,
    "exp": 2,
    "weights": 2,
    "row_max": 1,
    "denom": 1,
    "undefined_rows": 1,
}


def _overflowed(scores: np.ndarray, additive: np.ndarray | None) -> bool:
    """True when a score is NaN or ±inf for a reason other than the mask."""
    bad = np.isnan(scores) | np.isposinf(scores)
    if additive is None:
        bad |= np.isneginf(scores)
    else:
        bad |= np.isneginf(scores) & ~np.isneginf(additive)
    return bool(bad.any())


def attention(
    q: Any,
    k: Any,
    v: Any,
    *,
    mask: Any = None,
    causal: bool = False,
    scale: float | None = None,
    temperature: float = 1.0,
    strict: bool = False,
) -> AttentionTrace:
    """Compute softmax(Q·Kᵀ·scale/temperature + M)·V and return every step."""
    q = _as_float_array("q", q, "[..., Tq, d]")
    k = _as_float_array("k", k, "[..., Tk, d]")
    v = _as_float_array("v", v, "[..., Tk, dv]")
    tq, d = q.shape[-2:]
    tk = k.shape[-2]
    if k.shape[-1] != d:
        raise ShapeError(
            f"k must have shape [..., Tk, d={d}] to match q's last axis; "
            f"got k of shape {k.shape}"
        )
    if v.shape[-2] != tk:
        raise ShapeError(
            f"v must have shape [..., Tk={tk}, dv] (one value row per key); "
            f"got v of shape {v.shape}"
        )
    try:
        batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:
        raise ShapeError(
            "q, k and v have leading (batch/head) axes that do not broadcast: "
            f"q {q.shape}, k {k.shape}, v {v.shape}"
        ) from None

    if scale is None:
        scale = 1.0 / math.sqrt(d)
    scale = float(scale)
    temperature = float(temperature)
    if not math.isfinite(scale):
        raise NonFiniteInputError(f"scale must be a finite number; got {scale}")
    if not (math.isfinite(temperature) and temperature > 0):
        raise AttentionInputError(
            f"temperature must be a finite number > 0; got {temperature}"
        )

    additive = None if mask is None else _additive_mask(mask, batch, tq, tk)
    if causal:
        hidden = np.where(causal_mask(tq, tk), 0.0, -np.inf)
        additive = hidden if additive is None else additive + hidden
    steps = attention_steps(q, k, v, additive, scale / temperature)
    if not np.isfinite(steps.scores).all() and _overflowed(steps.scores, additive):
        raise NonFiniteInputError(
            "q·kᵀ overflowed float64; rescale q and k to smaller magnitudes"
        )
    if strict and steps.undefined_rows.any():
        where = np.argwhere(steps.undefined_rows)
        raise FullyMaskedRowError([tuple(int(i) for i in idx) for idx in where])
    arrays = steps._asdict()
    # v (or the mask) may bring leading axes the scores lack; every
    # intermediate is shown with the full batch shape.
    batch = steps.output.shape[:-2]
    if steps.scores.shape[:-2] != batch:
        for name, trailing in _TRAILING_AXES.items():
            array = arrays[name]
            arrays[name] = np.broadcast_to(
                array, (*batch, *array.shape[array.ndim - trailing :])
            )
    for array in arrays.values():
        array.flags.writeable = False
    return AttentionTrace(**arrays, scale=scale, temperature=temperature)


class AttentionSteps(NamedTuple):
    """The raw intermediates of one (possibly batched) attention computation."""

    scores: np.ndarray
    row_max: np.ndarray
    exp: np.ndarray
    denom: np.ndarray
    weights: np.ndarray
    output: np.ndarray | None
    undefined_rows: np.ndarray


# Overflow is the caller's to judge (attention() refuses it); keep NumPy quiet.
# (As a decorator: cheaper than entering a context manager on every call.)
@np.errstate(over="ignore", invalid="ignore", divide="ignore")
def attention_steps(
    q: np.ndarray,
    k: np.ndarray | None,
    v: np.ndarray | None,
    additive: np.ndarray | None = None,
    factor: float | np.ndarray = 1.0,
) -> AttentionSteps:
    """Run the arithmetic of `attention` on float arrays that are already checked.

    scores = q·kᵀ·factor + additive (factor may be one number per batch entry;
    with k None, q holds q·kᵀ already), then the row-max-shifted softmax and,
    unless v is None, the weighted sum.
    No validation and no copies: for callers that evaluate many pipelines at
    once (the problem generator and grader) and vouch for their inputs.
    """
    scores = (q if k is None else q @ k.swapaxes(-1, -2)) * factor
    if additive is not None:
        scores = scores + additive
    row_max = scores.max(axis=-1)
    exp, empty = shifted_exp(scores, peak=row_max[..., None])
    denom = exp.sum(axis=-1)
    weights = exp / denom[..., None]
    if empty is None:
        undefined = np.zeros(row_max.shape, dtype=bool)
    else:
        undefined = empty[..., 0]
        weights[undefined] = np.nan
    output = None if v is None else weights @ v
    return AttentionSteps(scores, row_max, exp, denom, weights, output, undefined)


# The one softmax of the code base: the engine, the problem generator's
# pipelines and the grader all shift and normalize through these two.


def shifted_exp(
    x: np.ndarray, axis: int = -1, peak: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray | None]:
    """exp(x − m), m each slice's largest entry along `axis`; and the empty slices.

    A slice of nothing but -inf (a query that sees no key) is shifted by 0, so
    its exp stays 0 instead of NaN. Returns the exp and a boolean mask of the
    empty slices (keepdims), or None when no slice is empty. `peak`, the
    slices' largest entries (keepdims), saves finding them again.
    """
    if peak is None:
        peak = x.max(axis=axis, keepdims=True)
    # One sum of a few peaks, in Python (cheaper than NumPy calls here), tells
    # the cases apart: finite when every peak is (the usual case), -inf when
    # some slices are empty, NaN or +inf when a learner typed ±inf or NaN.
    total = sum(peak.ravel().tolist())
    if math.isfinite(total):
        return np.exp(x - peak), None
    if total == -math.inf:
        empty = peak == -np.inf  # np.isneginf, without its wrapper's cost
        return np.exp(x - np.where(empty, 0.0, peak)), empty
    # Arithmetic on ±inf and NaN gives NaN as it should; no warnings.
    with np.errstate(invalid="ignore", over="ignore"):
        empty = peak == -np.inf
        if not np.count_nonzero(empty):  # cheaper than .any()
            return np.exp(x - peak), None
        return np.exp(x - np.where(empty, 0.0, peak)), empty


def shifted_softmax(
    x: np.ndarray,
    axis: int = -1,
    peak: np.ndarray | None = None,
    *,
    empty_weight: float = math.nan,
) -> np.ndarray:
    """Softmax of float array `x` along `axis`, shifted by each slice's largest entry.

    An empty slice (all -inf) has no denominator: its weights are
    `empty_weight`, NaN (undefined, as the engine reports such a row) or 0.0
    (it contributes nothing). `peak` (keepdims) saves finding the maxima again.
    """
    exp, empty = shifted_exp(x, axis, peak)
    sums = exp.sum(axis=axis, keepdims=True)
    if empty is None:
        return exp / sums
    # An empty slice is never divided (its sum is 0): its cells keep `empty_weight`.
    return np.divide(exp, sums, out=np.full(exp.shape, empty_weight), where=~empty)


def softmax(x: Any, axis: int = -1) -> np.ndarray:
    """Softmax along `axis` with the row-max shift; all -inf slices give NaN."""
    return shifted_softmax(np.asarray(x, dtype=np.float64), axis)
