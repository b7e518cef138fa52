"""Read matrices and numbers as people type them.

Matrices may be JSON, MATLAB-style rows (`[1 2; 3 4]`), or one row a line, with
the full-width punctuation Chinese input methods produce. Entries may be plain
numbers or, through `parse_value` (and `parse_scalar` for a single answer box),
small expressions (`2/3`, `√2/2`, `1/sqrt(2)`,
`exp(1)`, `e`), `-inf` for a masked score and `undefined` / `未定义` / `nan` for
an undefined entry. Expressions are read by a recursive-descent parser over a
whitelist of operators and functions; nothing is ever passed to `eval`.

One module per concern: `spelling` (how people type: width, signs), `expressions`
(the expression parser), `values` (one entry: numbers, ±∞, undefined, flags),
`layout` (the rows and cells of typed text, read strictly: nothing typed
disappears), `matrices` (rows and columns of numbers) and `errors`. Pure
standard library and NumPy.
Errors are `MatrixFormatError`s and `ExpressionError`s: a machine `code` with
its `params`, and the message in both interface languages (`error.messages`,
picked with `quizsvc.text.pick`); a matrix's message names the row and column
(1-based, as a person counts) and what was expected. `str(error)` is English.
"""

from quizsvc.parsing.errors import ExpressionError, MatrixFormatError, ParseError
from quizsvc.parsing.expressions import (
    MAX_EXPRESSION_CHARS,
    MAX_EXPRESSION_DEPTH,
    parse_expression,
)
from quizsvc.parsing.matrices import MAX_INPUT_CHARS, parse_matrix
from quizsvc.parsing.spelling import normalize_text
from quizsvc.parsing.values import parse_flag, parse_number, parse_scalar, parse_value

__all__ = [
    "MAX_EXPRESSION_CHARS",
    "MAX_EXPRESSION_DEPTH",
    "MAX_INPUT_CHARS",
    "ExpressionError",
    "MatrixFormatError",
    "ParseError",
    "normalize_text",
    "parse_expression",
    "parse_flag",
    "parse_matrix",
    "parse_number",
    "parse_scalar",
    "parse_value",
]
