"""Read matrices as people type them: JSON, MATLAB-style rows, or one row a line.

Pure standard library and NumPy. Errors are `MatrixFormatError`s whose message
names the row and column (1-based, as a person counts) and what was expected.
"""

from __future__ import annotations

import json
import re
import unicodedata

import numpy as np

__all__ = ["MatrixFormatError", "normalize_text", "parse_matrix", "parse_number"]

# Full-width punctuation that Chinese input methods type, mapped to ASCII.
_TRANSLATE = str.maketrans(
    {
        "，": ",",
        "；": ";",
        "。": ".",
        "（": "(",
        "）": ")",
        "［": "[",
        "］": "]",
        "【": "[",
        "】": "]",
        "−": "-",
        "–": "-",
        "—": "-",
        "﹣": "-",
        "＋": "+",
        "／": "/",
        "　": " ",
    }
)

MAX_INPUT_CHARS = 20_000


class MatrixFormatError(ValueError):
    """The text is not a matrix; the message says where and what was expected."""

    def __init__(self, message: str, row: int | None = None, col: int | None = None):
        self.row = row
        self.col = col
        super().__init__(message)


def normalize_text(text: str) -> str:
    """Fold full-width characters and Unicode minus signs to plain ASCII."""
    return unicodedata.normalize("NFKC", text).translate(_TRANSLATE)


def parse_number(token: str) -> float:
    """Parse one plain number (ValueError if it is not one)."""
    return float(token)


def _rows_from_text(text: str) -> list[list[str]]:
    stripped = text.strip()
    if stripped.startswith("[") and stripped.endswith("]"):
        stripped = stripped[1:-1]
    # MATLAB separates rows with ';', people also use one row per line; a row
    # may itself be wrapped in brackets ("[1, 2], [3, 4]").
    stripped = re.sub(r"\]\s*,?\s*\[", ";", stripped).replace("[", "").replace("]", "")
    rows = [r for r in re.split(r"[;\n]", stripped) if r.strip()]
    return [[t for t in re.split(r"[,\s]+", r.strip()) if t] for r in rows]


def parse_matrix(text: str, name: str = "matrix", number=parse_number) -> np.ndarray:
    """Parse `text` into a 2-D float array; `number` reads each entry."""
    if len(text) > MAX_INPUT_CHARS:
        raise MatrixFormatError(
            f"{name}: the input is too long ({len(text)} characters, "
            f"at most {MAX_INPUT_CHARS})"
        )
    text = normalize_text(text)
    if not text.strip():
        raise MatrixFormatError(f"{name}: empty input; type a matrix such as [[1, 0]]")
    rows: list[list]
    try:
        decoded = json.loads(text)
    except (ValueError, RecursionError):
        rows = _rows_from_text(text)
    else:
        if isinstance(decoded, (int, float)) and not isinstance(decoded, bool):
            decoded = [[decoded]]
        elif isinstance(decoded, list) and decoded and not isinstance(decoded[0], list):
            decoded = [decoded]
        if not isinstance(decoded, list) or not all(isinstance(r, list) for r in decoded):
            raise MatrixFormatError(f"{name}: expected a list of rows such as [[1, 0]]")
        rows = [[str(x) if not isinstance(x, str) else x for x in r] for r in decoded]
    if not rows:
        raise MatrixFormatError(f"{name}: empty input; type a matrix such as [[1, 0]]")
    width = len(rows[0])
    values: list[list[float]] = []
    for i, row in enumerate(rows, start=1):
        if len(row) != width:
            raise MatrixFormatError(
                f"{name}: row {i} has {len(row)} entries but row 1 has {width}; "
                "every row needs the same number of entries",
                row=i,
            )
        parsed_row = []
        for j, token in enumerate(row, start=1):
            try:
                parsed_row.append(number(token))
            except (ValueError, OverflowError, ZeroDivisionError):
                raise MatrixFormatError(
                    f"{name}: row {i}, column {j}: {token!r} is not a number",
                    row=i,
                    col=j,
                ) from None
        values.append(parsed_row)
    if width == 0:
        raise MatrixFormatError(f"{name}: rows are empty; type a matrix such as [[1, 0]]")
    return np.array(values, dtype=np.float64)
