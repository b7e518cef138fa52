"""Read matrices and numbers as people type them.

Matrices may be JSON, MATLAB-style rows (`[1 2; 3 4]`), or one row a line, with
the full-width punctuation Chinese input methods produce. Entries may be plain
numbers or, through `parse_value` (and `parse_scalar` for a single answer box),
small expressions (`2/3`, `√2/2`, `1/sqrt(2)`,
`exp(1)`, `e`), `-inf` for a masked score and `undefined` / `未定义` / `nan` for
an undefined entry. Expressions are read by a recursive-descent parser over a
whitelist of operators and functions; nothing is ever passed to `eval`.

Pure standard library and NumPy. Errors are `MatrixFormatError`s whose message
names the row and column (1-based, as a person counts) and what was expected,
in English (`str(error)`) and in both interface languages (`error.messages`).
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "ExpressionError",
    "MatrixFormatError",
    "normalize_text",
    "parse_expression",
    "parse_flag",
    "parse_matrix",
    "parse_number",
    "parse_scalar",
    "parse_value",
]

# Full-width punctuation that Chinese input methods type, mapped to ASCII.
_TRANSLATE = str.maketrans(
    {
        "，": ",",
        "、": ",",
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
MAX_EXPRESSION_CHARS = 200
# Deep enough for any honest expression, shallow enough to keep recursion cheap.
MAX_EXPRESSION_DEPTH = 40

Number = Callable[[Any], float]


class MatrixFormatError(ValueError):
    """The text is not a matrix; the message says where and what was expected."""

    def __init__(
        self,
        message: str,
        row: int | None = None,
        col: int | None = None,
        *,
        messages: dict[str, str] | None = None,
    ):
        self.row = row
        self.col = col
        self.messages = messages or {"zh-CN": message, "en": message}
        super().__init__(message)


class ExpressionError(ValueError):
    """An entry is not a number or an expression this parser understands."""

    def __init__(self, en: str, zh: str):
        self.messages = {"zh-CN": zh, "en": en}
        super().__init__(en)


def normalize_text(text: str) -> str:
    """Fold full-width characters and Unicode minus signs to plain ASCII."""
    return unicodedata.normalize("NFKC", text).translate(_TRANSLATE)


def parse_number(token: Any) -> float:
    """Parse one plain number (ValueError if it is not one)."""
    if isinstance(token, bool) or token is None:
        raise ValueError(f"{token!r} is not a number")
    return float(token)


# ---------------------------------------------------------------------------
# Single values: special words, then the expression parser.

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

_CONSTANTS = {"e": math.e, "pi": math.pi, "π": math.pi}


def _sqrt(x: float) -> float:
    if x < 0:
        raise ExpressionError(
            f"the square root of a negative number ({x:g}) is not real",
            f"负数（{x:g}）没有实数平方根",
        )
    return math.sqrt(x)


def _log(x: float) -> float:
    if x <= 0:
        raise ExpressionError(
            f"the logarithm needs a positive number, not {x:g}",
            f"对数的参数必须是正数，而不是 {x:g}",
        )
    return math.log(x)


_FUNCTIONS: dict[str, Callable[[float], float]] = {
    "sqrt": _sqrt,
    "exp": math.exp,
    "ln": _log,
    "log": _log,
}

_TOKEN = re.compile(
    r"\s*(?:"
    r"(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"
    r"|(?P<name>[A-Za-z_]+|[\u4e00-\u9fff]+|π|∞)"
    r"|(?P<op>\*\*|[-+*/^()√×·÷])"
    r")"
)
_OPERATOR_ALIASES = {"**": "^", "×": "*", "·": "*", "÷": "/"}


class _Parser:
    """Recursive descent over: expr := term (± term)*; term := unary (×÷ unary)*;
    unary := ± unary | power; power := primary (^ unary)?;
    primary := number | constant | func(expr) | (expr) | √primary."""

    def __init__(self, text: str):
        self.text = text
        self.tokens = self._tokenize(text)
        self.pos = 0
        self.depth = 0

    def _tokenize(self, text: str) -> list[tuple[str, Any]]:
        tokens: list[tuple[str, Any]] = []
        index = 0
        stripped_end = len(text.rstrip())
        while index < stripped_end:
            match = _TOKEN.match(text, index)
            if match is None or match.end() == index:
                bad = text[index:].strip()[:1]
                raise ExpressionError(
                    f"unexpected character {bad!r}",
                    f"无法识别的字符“{bad}”",
                )
            index = match.end()
            if match.group("num") is not None:
                tokens.append(("num", float(match.group("num"))))
            elif match.group("name") is not None:
                tokens.append(("name", match.group("name").lower()))
            else:
                op = match.group("op")
                tokens.append(("op", _OPERATOR_ALIASES.get(op, op)))
        return tokens

    def peek(self) -> tuple[str, Any] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> tuple[str, Any]:
        token = self.peek()
        if token is None:
            raise ExpressionError(
                "the expression ends too early", "表达式不完整，结尾缺少内容"
            )
        self.pos += 1
        return token

    def expect(self, op: str) -> None:
        token = self.peek()
        if token != ("op", op):
            raise ExpressionError(f"expected {op!r}", f"这里缺少“{op}”")
        self.pos += 1

    def parse(self) -> float:
        if not self.tokens:
            raise ExpressionError("empty entry", "空白，没有数字")
        value = self.expr()
        if self.peek() is not None:
            kind, token = self.peek()
            shown = token if kind != "num" else f"{token:g}"
            raise ExpressionError(
                f"unexpected {shown!r} after a complete value",
                f"完整的数值后面多了“{shown}”",
            )
        return value

    def _enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_EXPRESSION_DEPTH:
            raise ExpressionError(
                "the expression is nested too deeply", "表达式嵌套太深"
            )

    def expr(self) -> float:
        self._enter()
        value = self.term()
        while self.peek() in (("op", "+"), ("op", "-")):
            op = self.take()[1]
            right = self.term()
            value = value + right if op == "+" else value - right
        self.depth -= 1
        return value

    def term(self) -> float:
        value = self.unary()
        while True:
            token = self.peek()
            if token in (("op", "*"), ("op", "/")):
                self.pos += 1
                right = self.unary()
                if token[1] == "*":
                    value *= right
                elif right == 0:
                    raise ExpressionError("division by zero", "除数为 0")
                else:
                    value /= right
            elif token is not None and (
                token[0] == "name" or token in (("op", "("), ("op", "√"))
            ):
                # Implicit multiplication, as people write it: 2√2, 3(1+1), 2π.
                value *= self.power()
            else:
                return value

    def unary(self) -> float:
        token = self.peek()
        if token in (("op", "+"), ("op", "-")):
            self.pos += 1
            self._enter()
            value = self.unary()
            self.depth -= 1
            return -value if token[1] == "-" else value
        return self.power()

    def power(self) -> float:
        base = self.primary()
        if self.peek() == ("op", "^"):
            self.pos += 1
            self._enter()
            exponent = self.unary()
            self.depth -= 1
            try:
                return math.pow(base, exponent)
            except ValueError:
                raise ExpressionError(
                    f"{base:g} to the power {exponent:g} is not a real number",
                    f"{base:g} 的 {exponent:g} 次方不是实数",
                ) from None
        return base

    def primary(self) -> float:
        kind, token = self.take()
        if kind == "num":
            return token
        if kind == "name":
            if token in _CONSTANTS:
                return _CONSTANTS[token]
            if token in _FUNCTIONS:
                self.expect("(")
                self._enter()
                argument = self.expr()
                self.depth -= 1
                self.expect(")")
                return _FUNCTIONS[token](argument)
            raise ExpressionError(
                f"unknown name {token!r}; the known ones are sqrt, exp, ln, e and pi",
                f"不认识“{token}”，能用的有 sqrt、exp、ln、e、pi",
            )
        if token == "(":
            self._enter()
            value = self.expr()
            self.depth -= 1
            self.expect(")")
            return value
        if token == "√":
            self._enter()
            value = _sqrt(self.primary())
            self.depth -= 1
            return value
        raise ExpressionError(
            f"unexpected {token!r} where a number should be",
            f"这里应该是数字，却是“{token}”",
        )


def parse_expression(text: str) -> float:
    """Evaluate a small arithmetic expression safely and return a finite float."""
    text = normalize_text(text).strip()
    if len(text) > MAX_EXPRESSION_CHARS:
        raise ExpressionError(
            f"the entry is too long (at most {MAX_EXPRESSION_CHARS} characters)",
            f"这一项太长（最多 {MAX_EXPRESSION_CHARS} 个字符）",
        )
    try:
        value = _Parser(text).parse()
    except OverflowError:
        raise ExpressionError("the value is too large", "数值太大，超出范围") from None
    if not math.isfinite(value):
        raise ExpressionError(
            "the value is too large to be a finite number",
            "数值太大，不是有限数",
        )
    return value


def parse_value(token: Any) -> float:
    """Parse one answer entry: a number, an expression, ±inf, or undefined (NaN)."""
    if isinstance(token, bool):
        raise ExpressionError(
            f"{str(token).lower()} is a truth value, not a number",
            f"{str(token).lower()} 是真假值，不是数字",
        )
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
                raise ExpressionError("the value is too large", "数值太大，超出范围")
            return value
    word = normalize_text(text).strip().lower().replace(" ", "")
    if word in _NEGATIVE_INFINITY:
        return -math.inf
    if word in _POSITIVE_INFINITY:
        return math.inf
    if word in _UNDEFINED:
        return math.nan
    return parse_expression(text)


# Signs people put before a number they rounded, and one after a percentage.
_APPROXIMATELY = "≈~=＝≒"


def parse_scalar(
    token: Any, *, infinite: bool = False, undefined: bool = False
) -> float:
    """Parse one typed number as every answer box reads it.

    Everything `parse_value` reads (decimals, fractions, √ and sqrt(), e, exp,
    full-width digits and punctuation), plus a leading "≈" or "=" and a
    trailing "%". Infinities (−∞, 负无穷) and undefined (未定义) are errors
    unless `infinite` / `undefined` allow them where they make sense.
    """
    if token is None:
        raise ExpressionError("empty entry", "空白，没有数字")
    if isinstance(token, str):
        text = normalize_text(token).strip().lstrip(_APPROXIMATELY).strip()
        percent = text.endswith("%")
        value = parse_value(text[:-1] if percent else text)
        if percent:
            value /= 100
    else:
        value = parse_value(token)
    if math.isnan(value) and not undefined:
        raise ExpressionError(
            "a number is needed here, not “undefined”",
            "这里需要一个数，而不是“未定义”",
        )
    if math.isinf(value) and not infinite:
        raise ExpressionError(
            "a finite number is needed here, not infinity",
            "这里需要一个有限的数，而不是无穷",
        )
    return value


_TRUE = {"1", "true", "t", "yes", "y", "是", "对", "可见", "✓", "✔", "1.0"}
_FALSE = {"0", "false", "f", "no", "n", "否", "不", "不可见", "遮住", "✗", "✘", "0.0"}


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
    raise ExpressionError(
        f"{token!r} is not a flag; write 1 (visible) or 0 (hidden)",
        f"“{token}”不是可见标记；请写 1（可见）或 0（被遮住）",
    )


# ---------------------------------------------------------------------------
# Matrices.

_BINARY_TAIL = tuple("+-*/^(√×·÷")
_BINARY_HEAD = tuple("*/^)×·÷")


def _split_top_level(text: str, separators: str) -> list[str]:
    """Split at separators outside parentheses, dropping empty pieces."""
    pieces, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(depth - 1, 0)
        elif depth == 0 and char in separators:
            pieces.append(text[start:index])
            start = index + 1
    pieces.append(text[start:])
    return [p.strip() for p in pieces if p.strip()]


def _split_row(row: str) -> list[str]:
    """Split one row into entries: commas always separate, spaces as in MATLAB."""
    if "(" not in row and not any(op in row for op in " +*/^"):
        return [t for t in re.split(r"[,\s]+", row.strip()) if t]
    entries: list[str] = []
    for part in _split_top_level(row, ","):
        merged: list[str] = []
        for piece in _split_top_level(part, " \t\r\f\v"):
            # "1 - 2" is one entry, "1 -2" two, as MATLAB reads them.
            if merged and (
                merged[-1].endswith(_BINARY_TAIL)
                or piece.startswith(_BINARY_HEAD)
                or piece in ("+", "-")
            ):
                merged[-1] += " " + piece
            else:
                merged.append(piece)
        entries.extend(merged)
    return entries


def _rows_from_text(text: str) -> list[list[str]]:
    stripped = text.strip()
    if stripped.startswith("[") and stripped.endswith("]"):
        stripped = stripped[1:-1]
    # MATLAB separates rows with ';', people also use one row per line; a row
    # may itself be wrapped in brackets ("[1, 2], [3, 4]").
    stripped = re.sub(r"\]\s*,?\s*\[", ";", stripped).replace("[", "").replace("]", "")
    rows = [r for r in re.split(r"[;\n]", stripped) if r.strip()]
    return [_split_row(r) for r in rows]


def _error(
    name: str, en: str, zh: str, row: int | None = None, col: int | None = None
) -> MatrixFormatError:
    return MatrixFormatError(
        f"{name}: {en}",
        row,
        col,
        messages={"zh-CN": f"{name}：{zh}", "en": f"{name}: {en}"},
    )


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
        raise _error(
            name,
            "expected a list of rows such as [[1, 0]]",
            "应当是按行排列的矩阵，例如 [[1, 0]]",
        )
    for i, row in enumerate(value, start=1):
        for j, entry in enumerate(row, start=1):
            if isinstance(entry, (list, tuple, dict)):
                raise _error(
                    name,
                    f"row {i}, column {j}: a matrix entry must be a single value, "
                    "not a nested list",
                    f"第 {i} 行第 {j} 列：每一格只能是一个数，不能再嵌套列表",
                    i,
                    j,
                )
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
            raise _error(
                name,
                f"the input is too long ({len(text)} characters, at most "
                f"{MAX_INPUT_CHARS})",
                f"输入太长（{len(text)} 个字符，最多 {MAX_INPUT_CHARS} 个）",
            )
        text = normalize_text(text)
        if not text.strip():
            raise _error(
                name,
                "empty input; type a matrix such as [[1, 0]]",
                "输入为空；请填写矩阵，例如 [[1, 0]]",
            )
        try:
            decoded = json.loads(text)
        except (ValueError, RecursionError):
            rows: list[list[Any]] = _rows_from_text(text)
        else:
            if isinstance(decoded, str):
                rows = _rows_from_text(normalize_text(decoded))
            else:
                rows = _rows_from_value(decoded, name)
    else:
        rows = _rows_from_value(text, name)
    if not rows:
        raise _error(
            name,
            "empty input; type a matrix such as [[1, 0]]",
            "输入为空；请填写矩阵，例如 [[1, 0]]",
        )
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
            raise _error(
                name,
                f"row {i} has {row_width} entries but row "
                f"{widths.index(target) + 1} has {target}; every row needs the "
                "same number of entries",
                f"第 {i} 行有 {row_width} 个数，而第 {widths.index(target) + 1} 行有 "
                f"{target} 个；每一行的个数必须相同",
                i,
            )
    if target == 0:
        raise _error(
            name,
            "rows are empty; type a matrix such as [[1, 0]]",
            "行是空的；请填写矩阵，例如 [[1, 0]]",
        )
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
        shown = _show(token)
        raise _error(
            name,
            f"row {i}, column {j}: {shown!r} is not a number: {exc.messages['en']}. "
            "Write e.g. 0.5, 2/3, √2/2, -inf or undefined",
            f"第 {i} 行第 {j} 列：“{shown}”不是数字：{exc.messages['zh-CN']}。"
            "可以写 0.5、2/3、√2/2、-inf 或“未定义”",
            i,
            j,
        ) from None
    except (ValueError, TypeError, OverflowError, ZeroDivisionError):
        shown = _show(token)
        raise _error(
            name,
            f"row {i}, column {j}: {shown!r} is not a number",
            f"第 {i} 行第 {j} 列：“{shown}”不是数字",
            i,
            j,
        ) from None
