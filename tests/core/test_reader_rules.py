"""The shared reader's rules for writing a number, each with right and near-miss forms.

Every rule lives once in `quizsvc.parsing`, so a bank item, a generated
problem's grader, the practice pages and the lab read a number the same way:
a superscript is a power (8² is 64, never 82), ``{…}`` groups, Chinese
numerals are numbers, hedges such as 约 and 左右 are ignored, and code's
spellings of −∞ are −∞.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quizsvc import grading, problems
from quizsvc.parsing import (
    ExpressionError,
    parse_matrix,
    parse_scalar,
    parse_value,
)

SUPERSCRIPT = str.maketrans("0123456789-+.()", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺·⁽⁾")


@pytest.mark.parametrize(
    ("typed", "value", "near_miss"),
    [
        ("8²", 64, 82),
        ("2⁶", 64, 26),
        ("128⁻⁰·⁵", 128**-0.5, 128),
        ("2⁻³·⁵", 2**-3.5, -13),
        ("64^½", 8, 32),
        ("2⁻¹", 0.5, 21),
        ("e²/(e² + 1)", math.e**2 / (math.e**2 + 1), 0.731),
        ("e⁰·⁷⁰⁷¹", math.exp(0.7071), 2.0),
        ("1½", 1.5, 0.5),
        ("−½", -0.5, 0.5),
    ],
)
def test_a_superscript_is_a_power_never_more_digits(typed, value, near_miss):
    assert parse_value(typed) == pytest.approx(value, rel=1e-12)
    assert parse_value(typed) != pytest.approx(near_miss, rel=1e-6)


@pytest.mark.parametrize(
    ("typed", "value"),
    [
        ("e^{2}/(e^{2}+1)", math.e**2 / (math.e**2 + 1)),
        ("e^{1/√2}", math.exp(2**-0.5)),
        ("{1+1}*3", 6),
        ("2^{-1}", 0.5),
        ("1÷8", 0.125),
        ("5乘以7", 35),
        ("5 乘 7", 35),
        ("1 除以 8", 0.125),
        ("5x7", 35),
        ("5 x 7", 35),
        ("4x3/2", 6),
        ("\\frac{1}{\\sqrt{128}}", 128**-0.5),
        ("\\frac{e^2}{e^2 + 1}", math.e**2 / (math.e**2 + 1)),
    ],
)
def test_grouping_and_spoken_operators_read_as_arithmetic(typed, value):
    assert parse_value(typed) == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize(
    ("typed", "value"),
    [
        ("八", 8),
        ("十五", 15),
        ("三十五", 35),
        ("六十四", 64),
        ("一百二十八", 128),
        ("一百零八", 108),
        ("三百五", 350),
        ("两千零二十", 2020),
        ("三万五千", 35000),
        ("一亿", 100_000_000),
        ("三亿五", 350_000_000),
        ("三亿五千万", 350_000_000),
        ("一亿零五", 100_000_005),
        ("一亿零五万", 100_050_000),
        ("两亿三千四百万零一", 234_000_001),
        ("〇", 0),
        ("零点五", 0.5),
        ("负0.5", -0.5),
        ("负二分之一", -0.5),
        ("二分之一", 0.5),
        ("十六分之一", 1 / 16),
        ("六个", 6),
        ("一二八", 128),
    ],
)
def test_chinese_numerals_read_as_their_number(typed, value):
    assert parse_value(typed) == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize(
    "typed", ["三十十", "十二三", "两两", "万万", "五三十", "亿亿", "一亿万", "一二亿"]
)
def test_numerals_that_spell_no_number_are_unreadable_not_another_number(typed):
    with pytest.raises(ExpressionError) as caught:
        parse_value(typed)
    assert caught.value.code == "chinese_numeral"


@pytest.mark.parametrize(
    "typed",
    ["约 8", "约8", "大约8", "约为 8", "约等于8", "8 左右", "≈8", "~8", "= 8",
     "about 8", "8（约）", "8 (eight)", "八左右", "约八"],
)  # fmt: skip
def test_hedges_around_a_rounded_number_are_ignored(typed):
    assert parse_scalar(typed) == 8


@pytest.mark.parametrize(
    ("typed", "sign"),
    [
        ("float('-inf')", -1),
        ('float("-inf")', -1),
        ("-float('inf')", -1),
        ("-np.inf", -1),
        ("-numpy.inf", -1),
        ("-math.inf", -1),
        ("-torch.inf", -1),
        ("np.NINF", -1),
        ("负的无穷大", -1),
        ("−∞（负无穷）", -1),
        ("float('inf')", 1),
        ("np.inf", 1),
        ("-float('-inf')", 1),
    ],
)
def test_code_spellings_of_infinity_keep_their_sign(typed, sign):
    value = parse_value(typed)
    assert math.isinf(value) and math.copysign(1, value) == sign


def test_pytorchs_and_numpys_printing_reads_as_the_matrix():
    """Can a learner paste what their notebook printed, device and dtype included?"""
    printed = (
        "tensor([[1., 0.],\n        [0., 2.]], device='cuda:0', dtype=torch.float16)"
    )
    assert parse_matrix(printed, "V", parse_value).tolist() == [[1, 0], [0, 2]]
    assert parse_matrix("array([[ 0.7071,  0.    ]])", "S").tolist() == [[0.7071, 0]]
    assert parse_value("tensor(0.0884)") == 0.0884
    assert parse_matrix("[[2⁻¹, 八, 50%]]", "A", parse_value).tolist() == [
        [0.5, 8, 0.5]
    ]


def test_the_generated_grader_reads_a_superscript_factor():
    """Is 2⁻¹ the scale for head_dim = 4 in a generated problem, not 21?"""
    problem = problems.generate("scale", 0, 1)
    assert problem.to_dict()["given"] == {"head_dim": 4}
    right = grading.grade(problem, {"factor": "2⁻¹", "std": "√4"})
    assert right.correct and not right.format_errors
    wrong = grading.grade(problem, {"factor": "2⁻²", "std": "√4"})
    assert not wrong.correct and not wrong.format_errors


def test_a_doubled_sign_is_a_slip_not_a_sum():
    with pytest.raises(ExpressionError) as caught:
        parse_value("--1")
    assert caught.value.code == "doubled_sign"


# ---------------------------------------------------------------------------
# Laws: a right number written another way reads as the same value.


def _superscript(number: str) -> str:
    return number.translate(SUPERSCRIPT)


@settings(max_examples=300, deadline=None)
@given(
    base=st.integers(1, 30),
    exponent=st.integers(-4, 6),
    half=st.booleans(),
)
def test_a_power_written_with_superscripts_reads_as_that_power(base, exponent, half):
    """Is b written with a superscript exponent (2⁻¹, 8², 128⁻⁰·⁵) exactly b**n?"""
    power = exponent + (0.5 if half else 0)
    written = f"{exponent}.5" if half else f"{exponent}"
    if half and exponent < 0:
        power, written = exponent - 0.5, f"{exponent}.5"
    typed = f"{base}{_superscript(written)}"
    assert parse_value(typed) == pytest.approx(base**power, rel=1e-12)
    assert parse_scalar(typed.replace(str(base), f"({base})")) == pytest.approx(
        base**power, rel=1e-12
    )


def _trees():
    leaf = st.integers(1, 9).map(lambda n: (str(n), str(n), float(n)))

    def combine(parts):
        (lp, lb, lv), op, (rp, rb, rv) = parts
        value = {"+": lv + rv, "-": lv - rv, "*": lv * rv}[op]
        return f"({lp}{op}{rp})", f"{{{lb}{op}{rb}}}", value

    return st.recursive(
        leaf,
        lambda inner: st.tuples(inner, st.sampled_from("+-*"), inner).map(combine),
        max_leaves=8,
    )


@settings(max_examples=200, deadline=None)
@given(tree=_trees())
def test_braces_group_as_parentheses_do(tree):
    """Does {…} grouping give the same value as (…) for any expression?"""
    parenthesised, braced, value = tree
    assert parse_value(braced) == parse_value(parenthesised) == pytest.approx(value)


_DIGITS = "零一二三四五六七八九"


def _chinese(n: int) -> str:
    """Write n (0 ≤ n < 10⁸) in standard Chinese numerals, without the reader."""

    def section(x: int, leading: bool) -> str:
        out, pending_zero = "", False
        for size, unit in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
            digit = x // size % 10
            if digit == 0:
                pending_zero = pending_zero or bool(out)
                continue
            if pending_zero:
                out, pending_zero = out + "零", False
            if not (digit == 1 and unit == "十" and not out and leading):
                out += _DIGITS[digit]
            out += unit
        return out

    def below_yi(x: int, leading: bool) -> str:
        high, low = divmod(x, 10_000)
        if not high:
            return section(low, leading)
        text = section(high, leading) + "万"
        if low:
            text += ("零" if low < 1000 else "") + section(low, False)
        return text

    if n == 0:
        return "零"
    high, low = divmod(n, 100_000_000)
    if not high:
        return below_yi(low, True)
    text = below_yi(high, True) + "亿"
    if low:
        text += ("零" if low < 10_000_000 else "") + below_yi(low, False)
    return text


@settings(max_examples=500, deadline=None)
@given(
    n=st.one_of(st.integers(0, 99_999_999), st.integers(0, 10**12 - 1)),
    negative=st.booleans(),
    tenths=st.one_of(st.none(), st.integers(0, 9)),
)
def test_a_number_in_chinese_numerals_reads_as_that_number(n, negative, tenths):
    """Is 三十五, 一百零八, 负二十点五 … exactly the number it names?"""
    typed = ("负" if negative else "") + _chinese(n)
    value = float(n)
    if tenths is not None:
        typed += "点" + _DIGITS[tenths].replace("零", "〇")
        value += tenths / 10
    assert parse_value(typed) == pytest.approx(-value if negative else value)


@settings(max_examples=200, deadline=None)
@given(numerator=st.integers(1, 99), denominator=st.integers(1, 99))
def test_fen_zhi_is_a_fraction_the_other_way_round(numerator, denominator):
    """Is 七分之二 two sevenths (B/A for A分之B), never seven halves?"""
    typed = f"{_chinese(denominator)}分之{_chinese(numerator)}"
    assert parse_value(typed) == pytest.approx(numerator / denominator)


@settings(max_examples=200, deadline=None)
@given(
    x=st.floats(-1e4, 1e4, allow_nan=False).map(lambda v: round(v, 4)),
    hedge=st.sampled_from(["约 {}", "大约{}", "约为 {}", "{} 左右", "≈{}", "约{}左右"]),
)
def test_a_hedged_number_reads_as_the_number(x, hedge):
    assert parse_scalar(hedge.format(repr(x))) == x


def test_the_superscript_precheck_knows_every_superscript_and_fraction():
    """Does the quick check catch every character Unicode calls <super>/<fraction>?"""
    import sys
    import unicodedata

    from quizsvc.parsing.spelling import _SCRIPTED

    scripted = [
        chr(c)
        for c in range(sys.maxunicode + 1)
        if unicodedata.decomposition(chr(c)).startswith(("<super>", "<fraction>"))
    ]
    assert scripted and all(_SCRIPTED.match(char) for char in scripted)
