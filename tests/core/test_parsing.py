"""Reading matrices and numbers as learners type them, and never evaluating code."""

from __future__ import annotations

import contextlib
import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from quizsvc.parsing import (
    ExpressionError,
    MatrixFormatError,
    normalize_text,
    parse_expression,
    parse_flag,
    parse_matrix,
    parse_number,
    parse_scalar,
    parse_value,
)

# ---------------------------------------------------------------------------
# Matrices (the lab's and `quizsvc attention`'s behaviour, unchanged).


@pytest.mark.parametrize(
    "text",
    [
        "[[1, 0], [0, 2]]",
        "[1 0; 0 2]",
        "1 0\n0 2",
        "[1, 0], [0, 2]",
        "[1，0；0，2]",
        "１ ０\n０ ２",
    ],
)
def test_the_same_matrix_in_every_accepted_layout(text):
    """Do JSON, MATLAB rows, one row a line and full-width input all agree?"""
    assert parse_matrix(text).tolist() == [[1.0, 0.0], [0.0, 2.0]]


def test_a_flat_json_list_is_one_row_and_a_number_is_one_by_one():
    """Is [1, 2] a 1×2 matrix and 5 a 1×1 matrix?"""
    assert parse_matrix("[1, 2]").shape == (1, 2)
    assert parse_matrix("5").tolist() == [[5.0]]


def test_already_decoded_lists_are_accepted():
    """Can the web API pass the JSON arrays it decoded, with nulls and strings?"""
    matrix = parse_matrix([[1, "-inf"], [None, "1/2"]], "S", parse_value)
    assert matrix[0, 0] == 1 and math.isinf(matrix[0, 1]) and matrix[0, 1] < 0
    assert math.isnan(matrix[1, 0]) and matrix[1, 1] == 0.5


@pytest.mark.parametrize(
    ("text", "fragment", "row", "col"),
    [
        ("[[1, x]]", "row 1, column 2", 1, 2),
        ("[[1, 2], [3]]", "row 2 has 1", 2, None),
        ("", "empty input", None, None),
        ("[[1, [2]]]", "row 1, column 2", 1, 2),
        ('{"a": 1}', "list of rows", None, None),
    ],
)
def test_a_format_error_names_where_and_what(text, fragment, row, col):
    """Does every error say which row and column, in both languages?"""
    with pytest.raises(MatrixFormatError) as caught:
        parse_matrix(text, "Q")
    error = caught.value
    assert fragment in str(error)
    assert (error.row, error.col) == (row, col)
    assert set(error.messages) == {"zh-CN", "en"}
    assert error.messages["zh-CN"].startswith("Q：")


@pytest.mark.parametrize(
    ("read", "code", "params"),
    [
        (lambda: parse_value("1/0"), "division_by_zero", {}),
        (lambda: parse_value("foo"), "unknown_name", {"token": "foo"}),
        (
            lambda: parse_matrix("[[1, 2], [3]]", "K"),
            "matrix.ragged",
            {"row": 2, "width": 1, "other_row": 1, "other_width": 2, "name": "K"},
        ),
        (
            lambda: parse_matrix("[[1, 1/0]]", "S", parse_value),
            "matrix.bad_entry",
            {"row": 1, "col": 2, "entry": "1/0", "reason": "division_by_zero"},
        ),
    ],
)
def test_an_error_carries_a_code_and_params_beside_its_messages(read, code, params):
    """Can an edge tell errors apart by code, without reading the English text?"""
    with pytest.raises((ExpressionError, MatrixFormatError)) as caught:
        read()
    error = caught.value
    assert error.code == code
    assert params.items() <= error.params.items()
    assert error.messages["en"] == str(error)
    assert error.messages["zh-CN"] != error.messages["en"]


def test_a_too_long_input_is_refused_before_it_is_read():
    """Is a huge paste rejected with a message rather than parsed?"""
    with pytest.raises(MatrixFormatError, match="too long"):
        parse_matrix("1 " * 20_000)


def test_plain_numbers_stay_plain_for_the_lab():
    """Does the lab's default reader still refuse expressions?"""
    with pytest.raises(MatrixFormatError, match="row 1, column 1"):
        parse_matrix("[[1/2]]")
    assert parse_number("0.25") == 0.25


def test_matlab_spacing_decides_between_one_entry_and_two():
    """Is `1 -2` two entries and `1 - 2` one, as MATLAB reads them?"""
    assert parse_matrix("1 -2", number=parse_value).tolist() == [[1.0, -2.0]]
    assert parse_matrix("1 - 2", number=parse_value).tolist() == [[-1.0]]
    assert parse_matrix("1 / 2  3", number=parse_value).tolist() == [[0.5, 3.0]]
    assert parse_matrix("sqrt(2) / 2, 1", number=parse_value).tolist()[0][1] == 1.0


def test_a_row_written_as_one_undefined_fills_the_row():
    """Can a learner write a whole undefined row as a single word?"""
    matrix = parse_matrix("未定义\n0.5 0.5", "A", parse_value, width=2)
    assert np.isnan(matrix[0]).all() and matrix[1].tolist() == [0.5, 0.5]


def test_normalize_text_folds_what_chinese_input_methods_type():
    """Are full-width punctuation, digits and the Unicode minus folded to ASCII?"""
    assert normalize_text("［１，−２；３。５］") == "[1,-2;3.5]"
    assert normalize_text("1、2") == "1,2"


# ---------------------------------------------------------------------------
# Values and expressions.


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0.5", 0.5),
        ("2/3", 2 / 3),
        ("√2/2", math.sqrt(2) / 2),
        ("1/√2", 1 / math.sqrt(2)),
        ("sqrt(2)/2", math.sqrt(2) / 2),
        ("e", math.e),
        ("exp(1)", math.e),
        ("exp(0.7071) / (exp(0.7071) + 1)", math.exp(0.7071) / (math.exp(0.7071) + 1)),
        ("2√2", 2 * math.sqrt(2)),
        ("2^-1", 0.5),
        ("2**3", 8.0),
        ("-2^2", -4.0),
        ("(1+1)*3", 6.0),
        ("3 × 2 ÷ 4", 1.5),
        ("π", math.pi),
        ("ln(e)", 1.0),
        ("−0.5", -0.5),
        ("０.５", 0.5),
        ("1e-3", 0.001),
        ("128**-0.5", 128**-0.5),
    ],
)
def test_expressions_evaluate_as_written(text, expected):
    """Does each accepted spelling give the number a person means?"""
    assert parse_value(text) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("text", "sign"),
    [("-inf", -1), ("−∞", -1), ("-∞", -1), ("负无穷", -1), ("inf", 1), ("∞", 1)],
)
def test_infinities_for_masked_scores(text, sign):
    """Can a learner type a masked score in the ways they know?"""
    value = parse_value(text)
    assert math.isinf(value) and math.copysign(1, value) == sign


@pytest.mark.parametrize(
    "text", ["undefined", "未定义", "nan", "NaN", "null", " 未定义 "]
)
def test_undefined_spellings_are_nan(text):
    """Is an undefined entry read as NaN however it is spelled?"""
    assert math.isnan(parse_value(text))


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("1/0", "division by zero"),
        ("sqrt(-1)", "negative"),
        ("foo", "unknown name"),
        ("2^^3", "where a number should be"),
        ("(1", "expected ')'"),
        ("1 2", "after a complete value"),
        ("1e999", "too large"),
        ("exp(1000)", "too large"),
        ("9^9^9", "too large"),
        ("(-8)^(1/3)", "not a real number"),
        ("ln(0)", "positive"),
        ("x" * 300, "too long"),
        ("(" * 45 + "1" + ")" * 45, "nested too deeply"),
        ("-(" * 30 + "1" + ")" * 30, "nested too deeply"),
        ("--1", "two signs in a row"),
        ("1 - -2", "two signs in a row"),
        ("1 @ 2", "unexpected character"),
    ],
)
def test_bad_expressions_say_why(text, fragment):
    """Is every unreadable entry an ExpressionError with a bilingual reason?"""
    with pytest.raises(ExpressionError) as caught:
        parse_value(text)
    assert fragment in str(caught.value)
    assert caught.value.messages["zh-CN"]


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('true')",
        "().__class__.__bases__",
        "open('/etc/passwd')",
        "lambda: 1",
        "[1][0]",
        "exec('1')",
        "1 if 1 else 2",
    ],
)
def test_code_is_never_evaluated(text):
    """Is Python code refused as an unknown name or character, never run?"""
    with pytest.raises(ExpressionError):
        parse_expression(text)


def test_truth_values_are_not_numbers():
    """Is a JSON true refused where a number is expected?"""
    with pytest.raises(ExpressionError):
        parse_value(True)


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("1", 1.0),
        ("0", 0.0),
        (True, 1.0),
        (False, 0.0),
        ("是", 1.0),
        ("否", 0.0),
        ("true", 1.0),
        ("False", 0.0),
        (1, 1.0),
        ("✓", 1.0),
        ("一", 1.0),
        ("零", 0.0),
    ],
)
def test_visibility_flags(token, expected):
    """Are 1/0, true/false and 是/否 all read as visibility flags?"""
    assert parse_flag(token) == expected


def test_a_flag_must_be_zero_or_one():
    """Is 0.5 refused as a visibility flag?"""
    with pytest.raises(ExpressionError, match="1 \\(visible\\) or 0 \\(hidden\\)"):
        parse_flag(0.5)


# ---------------------------------------------------------------------------
# Laws.

_leaf = st.integers(min_value=1, max_value=9)


def _expression_trees(depth: int = 3):
    return st.recursive(
        _leaf.map(lambda n: (str(n), float(n))),
        lambda inner: st.tuples(inner, st.sampled_from("+-*/"), inner).map(_combine),
        max_leaves=depth * 3,
    )


def _combine(parts):
    (left_text, left), op, (right_text, right) = parts
    value = {
        "+": left + right,
        "-": left - right,
        "*": left * right,
        "/": left / right if right else math.nan,
    }[op]
    return f"({left_text}{op}{right_text})", value


@settings(max_examples=300, deadline=None)
@given(_expression_trees())
def test_the_parser_agrees_with_arithmetic(tree):
    """Does a random arithmetic expression evaluate to what Python computes?"""
    text, value = tree
    if math.isnan(value):
        with pytest.raises(ExpressionError):
            parse_expression(text)
    else:
        assert parse_expression(text) == pytest.approx(value, rel=1e-9, abs=1e-12)


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6))
def test_every_printed_float_reads_back_exactly(x):
    """Does repr(x), with a Unicode minus, parse back to the same float?"""
    assert parse_value(repr(x).replace("-", "−")) == x


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_any_text_is_a_value_or_an_expression_error(text):
    """Does arbitrary text never raise anything but ExpressionError?"""
    with contextlib.suppress(ExpressionError):
        parse_value(text)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.lists(st.integers(-50, 50).map(lambda n: n / 4), min_size=3, max_size=3),
        min_size=1,
        max_size=4,
    ),
    st.sampled_from(["json", "matlab", "lines", "chinese"]),
)
def test_a_matrix_reads_back_from_every_layout(rows, layout):
    """Does a matrix printed in any accepted layout parse back to itself?"""
    cells = [[repr(x) for x in row] for row in rows]
    text = {
        "json": "[" + ", ".join("[" + ", ".join(r) + "]" for r in cells) + "]",
        "matlab": "[" + "; ".join(" ".join(r) for r in cells) + "]",
        "lines": "\n".join(" ".join(r) for r in cells),
        "chinese": "；".join("，".join(r) for r in cells).replace("-", "−"),
    }[layout]
    assert parse_matrix(text, number=parse_value).tolist() == rows


_PLAIN_NUMBERS = st.one_of(
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=True, allow_infinity=True, width=64),
)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 4).flatmap(
        lambda width: st.lists(
            st.lists(_PLAIN_NUMBERS, min_size=width, max_size=width),
            min_size=1,
            max_size=4,
        )
    ),
    st.one_of(st.none(), st.integers(1, 4)),
)
@example([[float("nan")], [float("nan")]], 3)  # a lone undefined entry: its row
@example([[1, 2], [3, 4]], None)
@example([[float("nan")]], 2)  # one undefined row, brackets or not, fills the width
@example([[0], [float("nan")]], 2)  # a short row beside a filled one: both refuse
def test_rows_of_plain_numbers_read_as_the_general_path_reads_them(rows, width):
    """Do JSON rows of numbers, read at once, equal them read entry by entry?"""
    as_text = [[repr(float(x)) for x in row] for row in rows]

    def outcome(value):
        try:
            return parse_matrix(value, "A", parse_value, width=width)
        except MatrixFormatError as exc:
            return (exc.code, exc.row, exc.col)

    fast, slow = outcome(rows), outcome(as_text)
    if isinstance(fast, tuple) or isinstance(slow, tuple):
        assert fast == slow
        return
    np.testing.assert_array_equal(fast, slow)
    if len(rows) == 1:  # a single row may come without its brackets
        bare = parse_matrix(rows[0], "A", parse_value, width=width)
        np.testing.assert_array_equal(bare, fast)


# ---------------------------------------------------------------------------
# One reader for every answer box: parse_scalar.

# ASCII digits and punctuation as a Chinese input method types them.
_FULL_WIDTH = str.maketrans("0123456789./()-+", "０１２３４５６７８９．／（）－＋")


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("6/√2", 6 / math.sqrt(2)),
        ("3√2", 3 * math.sqrt(2)),
        ("√2/2", math.sqrt(2) / 2),
        ("1/sqrt(2)", 1 / math.sqrt(2)),
        ("≈0.67", 0.67),
        ("= 1/2", 0.5),
        ("50%", 0.5),
        ("１／√２", 1 / math.sqrt(2)),
        ("−0.25", -0.25),
        ("exp(1)/(1+e)", math.e / (1 + math.e)),
    ],
)
def test_a_number_box_reads_what_the_hint_promises(text, value):
    assert parse_scalar(text) == pytest.approx(value, rel=1e-12)


@given(
    p=st.integers(-10_000, 10_000),
    q=st.integers(1, 10_000),
    full_width=st.booleans(),
)
def test_fractions_read_exactly_in_either_width(p, q, full_width):
    """Is p/q read as p/q, typed in ASCII or in full-width characters?"""
    text = f"{p}/{q}"
    if full_width:
        text = text.translate(_FULL_WIDTH)
    assert parse_scalar(text) == pytest.approx(p / q, rel=1e-12, abs=1e-15)


@given(
    a=st.integers(1, 50),
    b=st.integers(1, 200),
    form=st.sampled_from(["{a}√{b}", "{a}/√{b}", "{a}/sqrt({b})", "√{b}/{a}"]),
)
def test_roots_read_as_written(a, b, form):
    """Are a√b, a/√b, a/sqrt(b) and √b/a the numbers they say?"""
    expected = {
        "{a}√{b}": a * math.sqrt(b),
        "{a}/√{b}": a / math.sqrt(b),
        "{a}/sqrt({b})": a / math.sqrt(b),
        "√{b}/{a}": math.sqrt(b) / a,
    }[form]
    text = form.format(a=a, b=b)
    assert parse_scalar(text) == pytest.approx(expected, rel=1e-12)
    assert parse_scalar(text.translate(_FULL_WIDTH)) == pytest.approx(expected)


@given(x=st.floats(allow_nan=False, allow_infinity=False, width=64))
def test_any_decimal_reads_back_itself(x):
    """Does every finite float, written out, read back as itself (also full-width)?"""
    assert parse_scalar(repr(x)) == x
    assert parse_scalar(repr(x).translate(_FULL_WIDTH)) == x


@pytest.mark.parametrize("text", ["-inf", "−∞", "负无穷", "-无穷"])
def test_minus_infinity_only_where_it_makes_sense(text):
    assert parse_scalar(text, infinite=True) == -math.inf
    with pytest.raises(ExpressionError) as info:
        parse_scalar(text)
    assert "无穷" in info.value.messages["zh-CN"]


@pytest.mark.parametrize("text", ["未定义", "undefined", "NaN"])
def test_undefined_only_where_it_makes_sense(text):
    assert math.isnan(parse_scalar(text, undefined=True))
    with pytest.raises(ExpressionError) as info:
        parse_scalar(text)
    assert info.value.messages["en"] and info.value.messages["zh-CN"]


@given(text=st.text(max_size=30))
def test_a_number_box_never_fails_but_with_an_expression_error(text):
    """Whatever is typed, is the answer a float or a bilingual ExpressionError?"""
    try:
        value = parse_scalar(text)
    except ExpressionError as exc:
        assert exc.messages["zh-CN"] and exc.messages["en"]
    else:
        assert math.isfinite(value)
