"""Reading answers: typed text, JSON lists or numbers into arrays of the
asked shape, or a `FormatError` that says what is wrong with them."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from quizsvc.grading.verdict import FormatError
from quizsvc.parsing import (
    ExpressionError,
    MatrixFormatError,
    normalize_text,
    parse_flag,
    parse_matrix,
    parse_value,
)
from quizsvc.problems import Ask, Problem


def _size(shape: tuple[int, ...]) -> str:
    return "×".join(str(n) for n in shape) if shape else "1"


def parse_answer(
    value: Any,
    expected_shape: tuple[int, ...],
    *,
    name: str = "answer",
    number=parse_value,
) -> np.ndarray | FormatError:
    """Read a typed or JSON answer into an array of the expected shape.

    A single row or column is accepted either way round for a vector; a matrix
    typed transposed is returned as typed (the grader says so); any other
    shape, or text that is not a matrix, gives a `FormatError`.
    """
    expected_shape = tuple(expected_shape)
    if isinstance(value, np.ndarray) and value.dtype.kind in "fiu":
        array = value.astype(np.float64)
        if not expected_shape and array.size == 1:
            return array.reshape(())
    elif not expected_shape:
        return _parse_scalar(value, name, number)
    else:
        try:
            array = parse_matrix(value, name, number, width=expected_shape[-1])
        except MatrixFormatError as exc:
            return FormatError(name, exc.messages, exc.row, exc.col)
        except RecursionError:
            return FormatError(
                name,
                {
                    "zh-CN": f"{name}：嵌套太深，无法读取",
                    "en": f"{name}: nested too deeply to read",
                },
            )
    return (
        array
        if array.shape == expected_shape
        else _fit_shape(array, expected_shape, name)
    )


def _parse_scalar(value: Any, name: str, number) -> np.ndarray | FormatError:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return np.array(float(value))
    if isinstance(value, str) and not value.lstrip().startswith("["):
        try:
            return np.array(number(value))
        except ExpressionError as exc:
            return FormatError(
                name,
                {
                    "zh-CN": f"{name}：“{value.strip()[:40]}”不是数字（"
                    f"{exc.messages['zh-CN']}）",
                    "en": f"{name}: {value.strip()[:40]!r} is not a number "
                    f"({exc.messages['en']})",
                },
            )
        except (ValueError, TypeError, OverflowError):
            return FormatError(
                name,
                {
                    "zh-CN": f"{name}：“{value.strip()[:40]}”不是数字",
                    "en": f"{name}: {value.strip()[:40]!r} is not a number",
                },
            )
    try:
        array = parse_matrix(value, name, number)
    except MatrixFormatError as exc:
        return FormatError(name, exc.messages, exc.row, exc.col)
    except RecursionError:
        return FormatError(
            name,
            {
                "zh-CN": f"{name}：嵌套太深，无法读取",
                "en": f"{name}: nested too deeply to read",
            },
        )
    if array.size != 1:
        return FormatError(
            name,
            {
                "zh-CN": f"{name}：这里要填一个数，却得到 {_size(array.shape)} 个",
                "en": f"{name}: expected a single number, "
                f"got {_size(array.shape)} values",
            },
        )
    return array.reshape(())


def _fit_shape(
    array: np.ndarray, expected: tuple[int, ...], name: str
) -> np.ndarray | FormatError:
    # Called only for a shape that differs from `expected`; a scalar asked for
    # and one given were settled by the caller.
    if (
        len(expected) == 2
        and 1 in expected
        and array.size == max(expected)
        and 1 in array.shape
    ):
        return array.reshape(expected)  # a vector typed as a row or a column
    if expected and array.shape == expected[::-1]:
        return array  # transposed: graded, and the grader says so
    return FormatError(
        name,
        {
            "zh-CN": f"{name}：应当是 {_size(expected)}（"
            f"{_rows_of(expected, 'zh-CN')}），"
            f"却得到 {_size(array.shape)}",
            "en": f"{name}: expected {_size(expected)} ({_rows_of(expected, 'en')}), "
            f"got {_size(array.shape)}",
        },
    )


def _rows_of(shape: tuple[int, ...], lang: str) -> str:
    if len(shape) != 2:
        return "一个数" if lang == "zh-CN" else "one number"
    rows, cols = shape
    if lang == "zh-CN":
        return f"{rows} 行，每行 {cols} 个数"
    return f"{rows} row{'s' if rows != 1 else ''} of {cols}"


_AXIS_ALIASES = {
    "batch": ("batch", "b", "bs", "batch_size", "样本", "批"),
    "heads": ("heads", "head", "h", "n_heads", "num_heads", "头", "头数"),
    "Tq": ("tq", "t_q", "lq", "query", "queries", "query长度", "q长度"),
    "Tk": ("tk", "t_k", "lk", "key", "keys", "key长度", "k长度"),
    "d": ("d", "dk", "d_k", "head_dim", "dim"),
    "dv": ("dv", "d_v"),
}
_ALIAS_TO_AXIS = {
    alias: axis for axis, names in _AXIS_ALIASES.items() for alias in names
}


def _parse_shape(
    value: Any, ask: Ask, sizes: Mapping[str, int]
) -> np.ndarray | FormatError:
    expected = ask.shape[0]
    if isinstance(value, (list, tuple, np.ndarray)):
        tokens = [
            str(t) for t in (value.tolist() if isinstance(value, np.ndarray) else value)
        ]
    else:
        text = normalize_text(str(value)).strip().lower()
        tokens = [t for t in re.split(r"[\s,;×x*()\[\]]+", text) if t]
    numbers = []
    for position, token in enumerate(tokens, start=1):
        token = token.strip().lower()
        axis = _ALIAS_TO_AXIS.get(token)
        if axis is not None and axis in sizes:
            numbers.append(float(sizes[axis]))
            continue
        try:
            number = float(token)
        except ValueError:
            number = math.nan
        if not number.is_integer() or number < 1:
            return FormatError(
                ask.name,
                {
                    "zh-CN": f"{ask.name}：第 {position} 个维度“{token}”不是正整数，"
                    "也不是轴名（batch、heads、Tq、Tk、d、dv）",
                    "en": f"{ask.name}: dimension {position}, {token!r}, is neither a "
                    "positive whole number nor an axis name (batch, heads, Tq, Tk, "
                    "d, dv)",
                },
                None,
                position,
            )
        numbers.append(number)
    if len(numbers) != expected:
        return FormatError(
            ask.name,
            {
                "zh-CN": f"{ask.name}：形状应当有 {expected} 个维度，"
                f"例如 [2, 8, 5, 7]；却得到 {len(numbers)} 个",
                "en": f"{ask.name}: a shape here has {expected} dimensions, e.g. "
                f"[2, 8, 5, 7]; got {len(numbers)}",
            },
        )
    return np.array(numbers)


def _parse_choice(value: Any, ask: Ask) -> np.ndarray | FormatError:
    text = normalize_text(str(value)).strip().lower()
    for index, choice in enumerate(ask.choices):
        if (
            text == choice.value.lower()
            or any(text == label.lower() for label in choice.label.values())
            or text in _AXIS_ALIASES.get(choice.value, ())
        ):
            return np.array(float(index))
    options = ", ".join(c.value for c in ask.choices)
    return FormatError(
        ask.name,
        {
            "zh-CN": f"{ask.name}：“{text[:40]}”不是选项之一；可选：{options}",
            "en": f"{ask.name}: {text[:40]!r} is not one of the options: {options}",
        },
    )


def _parse_for(problem: Problem, ask: Ask, value: Any) -> np.ndarray | FormatError:
    try:
        form = ask.format
        if form == "matrix" or form == "number":  # the usual case first
            return parse_answer(value, ask.shape, name=ask.name)
        if form == "choice":
            return _parse_choice(value, ask)
        if form == "shape":
            return _parse_shape(value, ask, problem.context.get("sizes", {}))
        # boolean_matrix, the one format left: 0/1 or true/false per cell.
        return parse_answer(value, ask.shape, name=ask.name, number=parse_flag)
    except (ValueError, TypeError, OverflowError, RecursionError, MemoryError) as exc:
        # A last guard: whatever was typed, grading answers with a message.
        return FormatError(
            ask.name,
            {
                "zh-CN": f"{ask.name}：无法读取（{exc}）",
                "en": f"{ask.name}: cannot be read ({exc})",
            },
        )


def _blank(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, (list, tuple)):
        return len(value) == 0
    return False
