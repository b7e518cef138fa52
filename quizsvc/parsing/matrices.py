"""Read a matrix as people type it: JSON, MATLAB-style rows, or one row a line."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from quizsvc.parsing.errors import ExpressionError, MatrixFormatError
from quizsvc.parsing.layout import rows_of_text
from quizsvc.parsing.spelling import normalize_text, unwrap_array
from quizsvc.parsing.values import parse_number, parse_value

MAX_INPUT_CHARS = 20_000

Number = Callable[[Any], float]


def _rows_from_value(value: Any, name: str) -> list[list[Any]]:
    """Turn decoded JSON (or Python lists) into rows of raw entries."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [[value]]
    if (
        isinstance(value, (list, tuple))
        and value
        and not any(isinstance(r, (list, tuple)) for r in value)
    ):
        return [list(value)]
    if not isinstance(value, (list, tuple)) or not all(
        isinstance(r, (list, tuple)) for r in value
    ):
        raise MatrixFormatError("matrix.not_rows", name)
    for i, row in enumerate(value, start=1):
        for j, entry in enumerate(row, start=1):
            if isinstance(entry, (list, tuple, dict)):
                raise MatrixFormatError("matrix.nested_entry", name, i, j)
    return [list(r) for r in value]


def _show(token: Any) -> str:
    return token if isinstance(token, str) else json.dumps(token)


def parse_matrix(
    text: Any,
    name: str = "matrix",
    number: Number = parse_number,
    *,
    width: int | None = None,
) -> np.ndarray:
    """Parse text (or already-decoded nested lists) into a 2-D float array.

    `number` reads each entry. When `width` is given, a row written as a single
    undefined entry ("undefined", "未定义") stands for that many undefined cells.
    """
    plain = _plain_number_rows(text, number, width)
    if plain is not None:
        return plain
    if isinstance(text, str):
        if len(text) > MAX_INPUT_CHARS:
            raise MatrixFormatError(
                "matrix.too_long", name, length=len(text), limit=MAX_INPUT_CHARS
            )
        # A pasted print of an array or a tensor is its list: tensor([[1., 0.]]).
        text = unwrap_array(normalize_text(text))
        if not text.strip():
            raise MatrixFormatError("matrix.empty", name)
        try:
            decoded = json.loads(text)
        except (ValueError, RecursionError):
            rows: list[list[Any]] = rows_of_text(text, name)
        else:
            if isinstance(decoded, str):
                rows = rows_of_text(normalize_text(decoded), name)
            else:
                rows = _rows_from_value(decoded, name)
    else:
        rows = _rows_from_value(text, name)
    if not rows:
        raise MatrixFormatError("matrix.empty", name)
    first = len(rows[0])
    values: list[list[float]] = []
    for i, row in enumerate(rows, start=1):
        parsed_row = [
            _read_entry(number, token, name, i, j)
            for j, token in enumerate(row, start=1)
        ]
        if (
            width is not None
            and len(parsed_row) == 1
            and width > 1
            and math.isnan(parsed_row[0])
        ):
            parsed_row = parsed_row * width
        values.append(parsed_row)
    widths = [len(r) for r in values]
    target = width if width is not None and width in widths else first
    for i, row_width in enumerate(widths, start=1):
        if row_width != target:
            raise MatrixFormatError(
                "matrix.ragged",
                name,
                i,
                width=row_width,
                other_row=widths.index(target) + 1,
                other_width=target,
            )
    if target == 0:
        raise MatrixFormatError("matrix.empty_rows", name)
    return np.array(values, dtype=np.float64)


def _plain_number_rows(
    value: Any, number: Number, width: int | None
) -> np.ndarray | None:
    """The matrix, when `value` is rows of plain numbers of one width, else None.

    The usual JSON answer: no entry needs the expression parser, and one NumPy
    call reads them all. Anything else (text, words, ragged rows, a lone
    undefined entry standing for a row) takes the general path and its
    messages.
    """
    if number is not parse_value and number is not parse_number:
        return None  # e.g. flags, which read numbers by their own rules
    if type(value) is not list or not value:
        return None
    rows = value if type(value[0]) is list else [value]
    size = len(rows[0])
    if not size or (size == 1 and width is not None and width > 1):
        return None
    for row in rows:
        if type(row) is not list or len(row) != size:
            return None
        for entry in row:
            if type(entry) is not float and type(entry) is not int:
                return None
    try:
        return np.array(rows, dtype=np.float64)
    except OverflowError:  # an integer too large for a float: say so as usual
        return None


def _read_entry(number: Number, token: Any, name: str, i: int, j: int) -> float:
    try:
        return number(token)
    except ExpressionError as exc:
        raise MatrixFormatError(
            "matrix.bad_entry", name, i, j, because=exc, entry=_show(token)
        ) from None
    except (ValueError, TypeError, OverflowError, ZeroDivisionError):
        raise MatrixFormatError(
            "matrix.not_a_number", name, i, j, entry=_show(token)
        ) from None
