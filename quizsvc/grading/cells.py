"""Cell-wise comparison of an answer with a reference, and per-cell marks."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def _agreement(a: np.ndarray, b: np.ndarray, tolerance) -> tuple[np.ndarray, bool]:
    """Cell-wise agreement as `_close` gives it, and whether every cell agrees."""
    near = np.abs(a - b) <= tolerance
    # count_nonzero: a third of the cost of .all() on arrays this small.
    if np.count_nonzero(near) == near.size:  # the usual case: all finite, near
        return near, True
    # Only a cell holding ±inf or NaN can still agree (the same on both
    # sides); finite sums on both sides say there is none.
    if math.isfinite(float(a.sum()) + float(b.sum())):
        return near, False
    near |= a == b  # the same ±inf on both sides (a hidden cell's -inf)
    if np.count_nonzero(near) == near.size:
        return near, True
    near |= np.isnan(a) & np.isnan(b)  # NaN on both sides (a row with no weights)
    return near, bool(np.count_nonzero(near) == near.size)


def _close(a: np.ndarray, b: np.ndarray, tolerance) -> np.ndarray:
    """Cell-wise agreement within tolerance; ±inf and NaN must match exactly."""
    return _agreement(a, b, tolerance)[0]


def _rows(cells: list[bool], shape: tuple[int, ...]) -> Any:
    """Per-cell marks in the answer's shape: rows of bools, a list, or one bool."""
    if len(shape) == 2:
        width = shape[1]
        return [cells[r * width : (r + 1) * width] for r in range(shape[0])]
    return cells if shape else cells[0]
