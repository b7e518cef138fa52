"""Plain-text rendering of matrices for the CLI (aligned columns, fixed decimals)."""

from __future__ import annotations

import math

import numpy as np


def format_number(value: float, decimals: int = 4) -> str:
    """Format one entry: fixed decimals, "-inf" when masked, "undefined" for NaN."""
    if math.isnan(value):
        return "undefined"
    if math.isinf(value):
        return "-inf" if value < 0 else "inf"
    text = f"{value:.{decimals}f}"
    # "-0.0000" reads like a sign error to a learner comparing by hand.
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def format_matrix(array: np.ndarray, decimals: int = 4, indent: str = "  ") -> str:
    """Render a 1-D or 2-D array as aligned rows in brackets."""
    matrix = np.atleast_2d(np.asarray(array, dtype=np.float64))
    if matrix.ndim > 2:
        blocks = []
        for index in np.ndindex(*matrix.shape[:-2]):
            label = "[" + ", ".join(str(i) for i in index) + "]"
            blocks.append(
                f"{indent}{label}\n"
                + format_matrix(matrix[index], decimals, indent + "  ")
            )
        return "\n".join(blocks)
    cells = [[format_number(float(x), decimals) for x in row] for row in matrix]
    width = max(len(c) for row in cells for c in row)
    return "\n".join(
        indent + "[" + "  ".join(c.rjust(width) for c in row) + "]" for row in cells
    )
