"""Errors of the readers: a machine code, its parameters, the message in two languages.

Every error names what went wrong with a `code` (such as ``division_by_zero``
or ``matrix.empty_cell``) and the `params` that fill its message; `messages`
holds the message in each interface language, picked at the edges with
`quizsvc.text.pick`. `str(error)` is the English message.
"""

from __future__ import annotations

from typing import Any

from quizsvc.text import bilingual

# code → (English, Chinese) message templates, filled with str.format(**params).
MESSAGES: dict[str, tuple[str, str]] = {
    # One entry or expression.
    "empty": ("empty entry", "空白，没有数字"),
    "too_long": (
        "the entry is too long (at most {limit} characters)",
        "这一项太长（最多 {limit} 个字符）",
    ),
    "unexpected_character": ("unexpected character {char!r}", "无法识别的字符“{char}”"),
    "ends_early": ("the expression ends too early", "表达式不完整，结尾缺少内容"),
    "expected": ("expected {token!r}", "这里缺少“{token}”"),
    "trailing": (
        "unexpected {token!r} after a complete value",
        "完整的数值后面多了“{token}”",
    ),
    "too_deep": ("the expression is nested too deeply", "表达式嵌套太深"),
    "division_by_zero": ("division by zero", "除数为 0"),
    "not_real_power": (
        "{base} to the power {exponent} is not a real number",
        "{base} 的 {exponent} 次方不是实数",
    ),
    "negative_root": (
        "the square root of a negative number ({value}) is not real",
        "负数（{value}）没有实数平方根",
    ),
    "log_domain": (
        "the logarithm needs a positive number, not {value}",
        "对数的参数必须是正数，而不是 {value}",
    ),
    "unknown_name": (
        "unknown name {token!r}; the known ones are sqrt, exp, ln, e and pi",
        "不认识“{token}”，能用的有 sqrt、exp、ln、e、pi",
    ),
    "number_expected": (
        "unexpected {token!r} where a number should be",
        "这里应该是数字，却是“{token}”",
    ),
    "doubled_sign": (
        "two signs in a row; write the number with one sign",
        "连着写了两个正负号；请只写一个",
    ),
    "chinese_numeral": (
        "{token!r} is not a number written in Chinese numerals",
        "“{token}”不是一个能读懂的中文数字",
    ),
    "too_large": ("the value is too large", "数值太大，超出范围"),
    "not_finite": (
        "the value is too large to be a finite number",
        "数值太大，不是有限数",
    ),
    "truth_value": (
        "{token} is a truth value, not a number",
        "{token} 是真假值，不是数字",
    ),
    "undefined_not_allowed": (
        "a number is needed here, not “undefined”",
        "这里需要一个数，而不是“未定义”",
    ),
    "infinite_not_allowed": (
        "a finite number is needed here, not infinity",
        "这里需要一个有限的数，而不是无穷",
    ),
    "not_a_flag": (
        "{token!r} is not a flag; write 1 (visible) or 0 (hidden)",
        "“{token}”不是可见标记；请写 1（可见）或 0（被遮住）",
    ),
    # A matrix; every message starts with the matrix's name.
    "matrix.too_long": (
        "the input is too long ({length} characters, at most {limit})",
        "输入太长（{length} 个字符，最多 {limit} 个）",
    ),
    "matrix.empty": (
        "empty input; type a matrix such as [[1, 0]]",
        "输入为空；请填写矩阵，例如 [[1, 0]]",
    ),
    "matrix.not_rows": (
        "expected a list of rows such as [[1, 0]]",
        "应当是按行排列的矩阵，例如 [[1, 0]]",
    ),
    "matrix.nested_entry": (
        "row {row}, column {col}: a matrix entry must be a single value, "
        "not a nested list",
        "第 {row} 行第 {col} 列：每一格只能是一个数，不能再嵌套列表",
    ),
    "matrix.bad_entry": (
        "row {row}, column {col}: {entry!r} is not a number: {reason_en}. "
        "Write e.g. 0.5, 2/3, √2/2, -inf or undefined",
        "第 {row} 行第 {col} 列：“{entry}”不是数字：{reason_zh}。"
        "可以写 0.5、2/3、√2/2、-inf 或“未定义”",
    ),
    "matrix.not_a_number": (
        "row {row}, column {col}: {entry!r} is not a number",
        "第 {row} 行第 {col} 列：“{entry}”不是数字",
    ),
    "matrix.ragged": (
        "row {row} has {width} entries but row {other_row} has {other_width}; "
        "every row needs the same number of entries",
        "第 {row} 行有 {width} 个数，而第 {other_row} 行有 {other_width} 个；"
        "每一行的个数必须相同",
    ),
    "matrix.unclosed_row": (
        "row {row}: the '[' that opens it is never closed; add ']' after column {col}",
        "第 {row} 行：开头的“[”没有闭合；请在第 {col} 列之后补上“]”",
    ),
    "matrix.unclosed_matrix": (
        "row {row}, column {col}: the '[' that opens the matrix is never closed; "
        "add ']' at the end",
        "第 {row} 行第 {col} 列：矩阵开头的“[”没有闭合；请在末尾补上“]”",
    ),
    "matrix.extra_bracket": (
        "row {row}, column {col}: this ']' closes no '['; remove it",
        "第 {row} 行第 {col} 列：这个“]”没有对应的“[”；请删掉它",
    ),
    "matrix.empty_cell": (
        "row {row}, column {col} is empty (nothing between two separators); "
        "write its number or remove a comma",
        "第 {row} 行第 {col} 列是空的（两个分隔符之间什么也没有）；"
        "请补上这个数，或删掉多余的逗号",
    ),
    "matrix.trailing_separator": (
        "row {row} ends with a separator after column {col}; remove it or write "
        "the missing number",
        "第 {row} 行在第 {col} 列之后多了一个分隔符；请删掉它，或补上缺的数",
    ),
    "matrix.empty_row": (
        "row {row} is empty; write its numbers or remove the separator that starts it",
        "第 {row} 行是空的；请填上这一行的数，或删掉多出来的分隔符",
    ),
    "matrix.loose_entry": (
        "row {row}: {entry!r} stands outside the brackets of any row; put every "
        "row in its own [ ]",
        "第 {row} 行：“{entry}”不在任何一行的方括号里；每一行都要写在自己的 [ ] 里",
    ),
    "matrix.empty_rows": (
        "rows are empty; type a matrix such as [[1, 0]]",
        "行是空的；请填写矩阵，例如 [[1, 0]]",
    ),
}


class ParseError(ValueError):
    """Typed text could not be read; `code` and `params` say why, in no language."""

    def __init__(self, code: str, *, because: ParseError | None = None, **params: Any):
        self.code = code
        self.params = params
        if because is not None:
            # The reason an entry could not be read, as its own code and params.
            params["reason"] = because.code
            params["reason_params"] = because.params
        en, zh = MESSAGES[code]
        reasons = {
            "reason_en": because.messages["en"] if because else "",
            "reason_zh": because.messages["zh-CN"] if because else "",
        }
        self.messages = bilingual(
            zh.format(**params, **reasons), en.format(**params, **reasons)
        )
        super().__init__(self.messages["en"])


class ExpressionError(ParseError):
    """An entry is not a number or an expression this parser understands."""


class MatrixFormatError(ParseError):
    """The text is not a matrix; the message says where and what was expected.

    `row` and `col` count from 1, as a person does (None where the error is
    not about one row or cell); the message starts with the matrix's name.
    """

    def __init__(
        self,
        code: str,
        name: str,
        row: int | None = None,
        col: int | None = None,
        *,
        because: ParseError | None = None,
        **params: Any,
    ):
        super().__init__(code, because=because, row=row, col=col, **params)
        self.row = row
        self.col = col
        self.params["name"] = name
        self.messages = bilingual(
            f"{name}：{self.messages['zh-CN']}", f"{name}: {self.messages['en']}"
        )
        self.args = (self.messages["en"],)
