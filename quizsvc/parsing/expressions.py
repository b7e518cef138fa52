"""Evaluate a small arithmetic expression safely: a recursive-descent parser.

The grammar is a whitelist of operators (+ − × ÷ ^ √, an x between two
numbers, and implicit multiplication), functions (sqrt, exp, ln, log) and
constants (e, π); nothing is ever passed to `eval`. The other spellings of
a number (superscripts, Chinese numerals, ``乘以``, TeX, ``{…}``) are
rewritten into this grammar first (`quizsvc.parsing.spelling`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from quizsvc.parsing.errors import ExpressionError
from quizsvc.parsing.spelling import normalize_text, spell_number

MAX_EXPRESSION_CHARS = 200
# Deep enough for any honest expression, shallow enough to keep recursion cheap.
MAX_EXPRESSION_DEPTH = 40

_CONSTANTS = {"e": math.e, "pi": math.pi, "π": math.pi}


def _sqrt(x: float) -> float:
    if x < 0:
        raise ExpressionError("negative_root", value=f"{x:g}")
    return math.sqrt(x)


def _log(x: float) -> float:
    if x <= 0:
        raise ExpressionError("log_domain", value=f"{x:g}")
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


def _times_by_x(tokens: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """Read an x between two numbers as a multiplication sign: 5x7, 4 x 3/2."""
    for index in range(1, len(tokens) - 1):
        if (
            tokens[index] == ("name", "x")
            and (tokens[index - 1][0] == "num" or tokens[index - 1] == ("op", ")"))
            and (tokens[index + 1][0] == "num" or tokens[index + 1] == ("op", "("))
        ):
            tokens[index] = ("op", "*")
    return tokens


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
                raise ExpressionError("unexpected_character", char=bad)
            index = match.end()
            if match.group("num") is not None:
                tokens.append(("num", float(match.group("num"))))
            elif match.group("name") is not None:
                tokens.append(("name", match.group("name").lower()))
            else:
                op = match.group("op")
                tokens.append(("op", _OPERATOR_ALIASES.get(op, op)))
        return _times_by_x(tokens)

    def peek(self) -> tuple[str, Any] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> tuple[str, Any]:
        token = self.peek()
        if token is None:
            raise ExpressionError("ends_early")
        self.pos += 1
        return token

    def expect(self, op: str) -> None:
        token = self.peek()
        if token != ("op", op):
            raise ExpressionError("expected", token=op)
        self.pos += 1

    def parse(self) -> float:
        if not self.tokens:
            raise ExpressionError("empty")
        value = self.expr()
        if self.peek() is not None:
            kind, token = self.peek()
            shown = token if kind != "num" else f"{token:g}"
            raise ExpressionError("trailing", token=shown)
        return value

    def _enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_EXPRESSION_DEPTH:
            raise ExpressionError("too_deep")

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
                    raise ExpressionError("division_by_zero")
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
                    "not_real_power", base=f"{base:g}", exponent=f"{exponent:g}"
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
            raise ExpressionError("unknown_name", token=token)
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
        raise ExpressionError("number_expected", token=token)


def parse_expression(text: str) -> float:
    """Evaluate a small arithmetic expression safely and return a finite float."""
    return evaluate(normalize_text(text))


def evaluate(text: str) -> float:
    """Evaluate text that `normalize_text` has already folded."""
    text = text.strip()
    if len(text) > MAX_EXPRESSION_CHARS:
        raise ExpressionError("too_long", limit=MAX_EXPRESSION_CHARS)
    text = spell_number(text)
    try:
        value = _Parser(text).parse()
    except OverflowError:
        raise ExpressionError("too_large") from None
    if not math.isfinite(value):
        raise ExpressionError("not_finite")
    return value
