"""Cell-wise comparison of an answer with a reference, and per-cell marks."""

from __future__ import annotations

from typing import Any

import numpy as np


def _agreement(a: np.ndarray, b: np.ndarray, tolerance) -> tuple[list[bool], bool]:
    """Cell-wise agreement as `_close` gives it (flat, row by row), and whether
    every cell agrees.

    Plain Python: an answer has a few cells, and a loop over them costs less
    than the dozen NumPy calls an array version needs once ±inf or NaN appear.
    """
    tol = float(tolerance)
    near: list[bool] = []
    every = True
    for x, y in zip(a.ravel().tolist(), b.ravel().tolist(), strict=True):
        agrees = abs(x - y) <= tol  # inf - inf is NaN: never within the tolerance
        if not agrees:
            agrees = x == y  # the same ±inf on both sides (a hidden cell's -inf)
        if not agrees:
            agrees = x != x and y != y  # NaN on both sides (a row with no weights)
        near.append(agrees)
        every = every and agrees
    return near, every


def _close(a: np.ndarray, b: np.ndarray, tolerance) -> np.ndarray:
    """Cell-wise agreement within tolerance; ±inf and NaN must match exactly."""
    return np.array(_agreement(a, b, tolerance)[0], dtype=bool).reshape(a.shape)


def _rows(cells: list[bool], shape: tuple[int, ...]) -> Any:
    """Per-cell marks in the answer's shape: rows of bools, a list, or one bool."""
    if len(shape) == 2:
        width = shape[1]
        return [cells[r * width : (r + 1) * width] for r in range(shape[0])]
    return cells if shape else cells[0]
