"""One typed value: a number, an expression, ±∞, undefined, or a visibility flag."""

from __future__ import annotations

import math
import re
from typing import Any

from quizsvc.parsing.errors import ExpressionError
from quizsvc.parsing.expressions import evaluate
from quizsvc.parsing.spelling import (
    code_infinity,
    normalize_text,
    strip_hedges,
    unwrap_array,
)

_POSITIVE_INFINITY = {
    "inf",
    "+inf",
    "infinity",
    "+infinity",
    "∞",
    "+∞",
    "无穷",
    "正无穷",
}
_NEGATIVE_INFINITY = {"-inf", "-infinity", "-∞", "负无穷", "-无穷"}
_UNDEFINED = {"undefined", "nan", "未定义", "无定义", "不存在", "null", "none", "n/a"}
# Longer spellings of ±∞ learners type; the bank's cloze answers use the same.
_POSITIVE_INFINITY |= {"无穷大", "正无穷大", "+无穷", "+无穷大", "positiveinfinity"}
_NEGATIVE_INFINITY |= {
    "负无穷大", "-无穷大", "负无限", "负无限大", "negativeinfinity", "minusinfinity"
}  # fmt: skip


def parse_number(token: Any) -> float:
    """Parse one plain number (ValueError if it is not one)."""
    if isinstance(token, bool) or token is None:
        raise ValueError(f"{token!r} is not a number")
    return float(token)


# A doubled sign ("--1") is a slip of the keyboard, not a sum to simplify.
_DOUBLED_SIGN = re.compile(r"[-+]\s*[-+]")
_NEGATIVE_INFINITY |= {"负的无穷大", "负的无穷", "negativeinf"}


def parse_value(token: Any) -> float:
    """Parse one answer entry: a number, an expression, ±inf, or undefined (NaN).

    Also read: the hedges around a rounded number (``约 8``, ``≈8``, ``8 左右``),
    a measure word (``15 个``), a percentage (``50%``), a parenthesised gloss,
    code's ±∞ (``float('-inf')``, ``-np.inf``) and a printed scalar tensor.
    """
    if isinstance(token, bool):
        raise ExpressionError("truth_value", token=str(token).lower())
    if token is None:
        return math.nan
    if isinstance(token, (int, float)):
        return float(token)
    text = str(token)
    if "_" not in text:
        # Fast path: most entries are plain decimals.
        try:
            value = float(text)
        except ValueError:
            pass
        else:
            if math.isinf(value) and "inf" not in text.lower():
                raise ExpressionError("too_large")
            return value
    text, percent = strip_hedges(unwrap_array(normalize_text(text)))
    word = text.lower().replace(" ", "")
    if word in _NEGATIVE_INFINITY:
        return -math.inf
    if word in _POSITIVE_INFINITY:
        return math.inf
    if word in _UNDEFINED:
        return math.nan
    infinity = code_infinity(word)
    if infinity is not None:
        return infinity
    if _DOUBLED_SIGN.search(text):
        raise ExpressionError("doubled_sign")
    value = evaluate(text)
    return value / 100 if percent else value


def parse_scalar(
    token: Any, *, infinite: bool = False, undefined: bool = False
) -> float:
    """Parse one typed number as every answer box reads it.

    Everything `parse_value` reads (decimals, fractions, √ and sqrt(), e, exp,
    powers and superscripts, Chinese numerals, full-width digits and
    punctuation, hedges such as ≈ or 约, a percentage). Infinities (−∞, 负无穷)
    and undefined (未定义) are errors unless `infinite` / `undefined` allow them
    where they make sense.
    """
    if token is None:
        raise ExpressionError("empty")
    value = parse_value(token)
    if math.isnan(value) and not undefined:
        raise ExpressionError("undefined_not_allowed")
    if math.isinf(value) and not infinite:
        raise ExpressionError("infinite_not_allowed")
    return value


_TRUE = {"1", "true", "t", "yes", "y", "是", "对", "可见", "✓", "✔", "1.0", "一"}
_FALSE = {
    "0",
    "false",
    "f",
    "no",
    "n",
    "否",
    "不",
    "不可见",
    "遮住",
    "✗",
    "✘",
    "0.0",
    "零",
    "〇",
}


def parse_flag(token: Any) -> float:
    """Parse a visibility flag (1/0, true/false, 是/否) as 1.0 or 0.0."""
    if isinstance(token, bool):
        return float(token)
    if isinstance(token, (int, float)) and token in (0, 1):
        return float(token)
    word = normalize_text(str(token)).strip().lower()
    if word in _TRUE:
        return 1.0
    if word in _FALSE:
        return 0.0
    raise ExpressionError("not_a_flag", token=token)
