"""How people write numbers: one rule each, shared by every reader.

`normalize_text` folds what any typed text may hold (full-width characters,
Unicode signs, superscript powers such as ``8²`` or ``128⁻⁰·⁵``, vulgar
fractions such as ``½``). `spell_number` rewrites the spoken and written
forms of a number into the expression grammar (Chinese numerals 〇–九, 十,
百, 千, 万, 亿, 点, 负 and ``分之``; ``乘以``, ``除以``; TeX's ``\\frac{…}{…}``; ``{…}``
grouping). `strip_hedges` removes what people put around a rounded number
(``约``, ``大约``, ``约为``, ``≈``, a trailing ``左右``, a measure word ``个``, a
parenthesised gloss). `unwrap_array` reads NumPy's and PyTorch's printing
(``tensor([0, 3, 8], device='cuda:0', dtype=torch.int32)``), and
`code_infinity` the ways code spells ±∞ (``float('-inf')``, ``-np.inf`` …).
`spell_transpose` folds ``K转置``, ``K 的转置`` and ``K'`` to ``K^T``.

The bank's answer checks, the generated problems' grader, the practice pages
and the lab all read through these, so a number reads the same everywhere.
"""

from __future__ import annotations

import math
import re
import unicodedata

from quizsvc.parsing.errors import ExpressionError

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
        "｛": "{",
        "｝": "}",
        "−": "-",
        "–": "-",
        "—": "-",
        "﹣": "-",
        "＋": "+",
        "／": "/",
        "÷": "/",
        "\u2044": "/",  # the fraction slash NFKC leaves in 1⁄2
        "　": " ",
    }
)
# A decimal point between two superscript digits belongs to the exponent.
_SUPERSCRIPT_POINTS = "·⋅.･"


# Every character Unicode decomposes as <super> or <fraction>, so that text
# without one skips the character-by-character pass (tests/test_reader_rules.py
# checks the list against unicodedata).
_SCRIPTED = re.compile(
    "[\u00aa\u00b2-\u00b3\u00b9-\u00ba\u00bc-\u00be\u02b0-\u02b8\u02e0-\u02e4"
    "\u10fc\u1d2c-\u1d2e\u1d30-\u1d3a\u1d3c-\u1d4d\u1d4f-\u1d61\u1d78"
    "\u1d9b-\u1dbf\u2070-\u2071\u2074-\u207f\u2120\u2122\u2150-\u215f\u2189"
    "\u2c7d\u2d6f\u3192-\u319f\ua69c-\ua69d\ua770\ua7f2-\ua7f4\ua7f8-\ua7f9"
    "\uab5c-\uab5f\uab69\U00010781-\U00010785\U00010787-\U000107b0"
    "\U000107b2-\U000107ba\U0001f16a-\U0001f16c]"
)


def normalize_text(text: str) -> str:
    """Fold full-width characters, Unicode signs, superscripts and ½ to plain ASCII.

    A superscript is a power (``8²`` → ``8^2``, ``e⁻¹`` → ``e^(-1)``, ``Kᵀ`` →
    ``K^T``), never more digits; a vulgar fraction is a fraction in
    parentheses (``64^½`` → ``64^(1/2)``, ``1½`` → ``(1+1/2)``).
    """
    if text.isascii():
        return text
    if _SCRIPTED.search(text):
        text = _powers(text)
    return unicodedata.normalize("NFKC", text).translate(_TRANSLATE)


def _is_superscript(char: str) -> bool:
    return unicodedata.decomposition(char).startswith("<super>")


def _powers(text: str) -> str:
    """Spell superscript runs as ^(…) and vulgar fractions as (n/m)."""
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            body = unicodedata.normalize("NFKC", "".join(run))
            out.append("^" + (body if len(body) == 1 else f"({body})"))
            run.clear()

    for index, char in enumerate(text):
        if _is_superscript(char):
            run.append(char)
            continue
        following = text[index + 1 : index + 2]
        if (
            char in _SUPERSCRIPT_POINTS
            and run
            and following
            and _is_superscript(following)
        ):
            run.append(".")
            continue
        flush()
        if unicodedata.decomposition(char).startswith("<fraction>"):
            fraction = unicodedata.normalize("NFKC", char).replace("\u2044", "/")
            whole = re.search(r"[0-9０-９]+$", "".join(out))
            if whole:  # a mixed number: 1½ is one and a half
                digits = whole.group()
                joined = "".join(out)[: -len(digits)]
                out[:] = [joined, f"({digits}+{fraction})"]
            else:
                out.append(f"({fraction})")
            continue
        out.append(char)
    flush()
    return "".join(out)


# --------------------------------------------------------------------------
# Numbers spoken and written in other notations.

_DIGITS = {
    "〇": 0, "零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4,
    "五": 5, "六": 6, "七": 7, "八": 8, "九": 9,
}  # fmt: skip
_UNITS = {"十": 10, "百": 100, "千": 1000}
_NUMERAL_CHARS = "".join(_DIGITS) + "".join(_UNITS) + "万亿"
_NUMERAL_RUN = re.compile(
    rf"[{_NUMERAL_CHARS}]+(?:点[〇零一二三四五六七八九]+)?|点[〇零一二三四五六七八九]+"
)
# Only numeral characters, a sign, 分之 and a measure word: a Chinese number.
_CHINESE_NUMBER = re.compile(rf"^\s*[负+\-]?[{_NUMERAL_CHARS}点分之个\s]+$")
_OPERAND = r"(-?\d+(?:\.\d+)?|[A-Za-z_][A-Za-z0-9_]*|\([^()]*\)|√\d+(?:\.\d+)?)"
_OVER = re.compile(rf"{_OPERAND}\s*分之\s*{_OPERAND}")
_WORD_OPERATORS = (("乘以", "*"), ("除以", "/"), ("乘", "*"))
_HAN = re.compile(r"[\u3007\u3400-\u9fff]")
_TEX = (
    (re.compile(r"\\sqrt\s*\{([^{}]*)\}"), r"√(\1)"),
    (re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}"), r"((\1)/(\2))"),
    (re.compile(r"\\(?:cdot|times)"), "*"),
    (re.compile(r"\\div"), "/"),
    (re.compile(r"\\infty"), "∞"),
    (re.compile(r"\\(?:left|right)\b"), ""),
    (re.compile(r"\\pi\b"), "π"),
)


def spell_number(text: str) -> str:
    """Rewrite a number's other spellings into the expression grammar.

    Chinese numerals become digits (``三十五`` → ``35``, ``一百零八`` → ``108``,
    ``零点五`` → ``0.5``), ``负`` a minus sign, ``X分之Y`` the fraction ``Y/X``,
    ``乘以`` / ``乘`` and ``除以`` the operators, TeX fractions and roots their
    plain forms, and ``{…}`` parentheses. A run of numerals that does not
    spell a number (``三十十``) is an `ExpressionError`, not another number.
    """
    if "\\" in text:
        for pattern, replacement in _TEX:
            text = pattern.sub(replacement, text)
    if _HAN.search(text):
        text = _NUMERAL_RUN.sub(_numeral_digits, text).replace("负", "-")
        if "分之" in text:
            text = _OVER.sub(r"(\2)/(\1)", text)
        for word, operator in _WORD_OPERATORS:
            text = text.replace(word, operator)
    if "{" in text:
        text = text.replace("{", "(").replace("}", ")")
    return text


def looks_like_chinese_number(text: str) -> bool:
    """Whether `text` is written only with Chinese numerals (and 负, 分之, 个)."""
    return bool(_CHINESE_NUMBER.match(text)) and any(
        char in _NUMERAL_CHARS for char in text
    )


def _numeral_digits(match: re.Match) -> str:
    run = match.group()
    whole, _, decimals = run.partition("点")
    integer = _chinese_integer(whole) if whole else 0
    if integer is None:
        raise ExpressionError("chinese_numeral", token=run)
    if not decimals:
        return str(integer)
    return f"{integer}." + "".join(str(_DIGITS[char]) for char in decimals)


def _chinese_integer(run: str) -> int | None:
    """Read 三十五, 一百零八, 两千零二十, 三万五千, 一亿零五万 or 一二八 (None if
    malformed)."""
    if all(char in _DIGITS for char in run):
        if len(run) > 1 and "两" in run:
            return None  # 两 counts things; it is not a digit read out
        return int("".join(str(_DIGITS[char]) for char in run))
    if run.count("亿") > 1:
        return None
    if "亿" in run:
        high, _, low = run.partition("亿")
        upper = _below_yi(high) if high else 1
        if low.startswith("万"):
            return None  # 一亿万: 万 of nothing
        if len(low) == 1 and _DIGITS.get(low):
            lower = _DIGITS[low] * 10_000_000  # 三亿五 = 350 000 000, as for 万
        else:
            lower = _below_yi(low) if low else 0
        if upper is None or lower is None:
            return None
        return upper * 100_000_000 + lower
    return _below_yi(run)


def _below_yi(run: str) -> int | None:
    """Read a number below 亿 (10^8): sections of 十/百/千 around one 万."""
    if run.count("万") > 1:
        return None
    high, _, low = run.rpartition("万")
    if "万" in run:
        upper = _section(high, 0) if high else 1
        lower = _section(low, 10_000) if low else 0
        if upper is None or lower is None:
            return None
        return upper * 10_000 + lower
    return _section(run, 0)


def _section(run: str, above: int) -> int | None:
    """Read a number below 10 000 written with 十, 百 and 千 (None if malformed).

    A digit right after a unit, with no 零 between, is one unit lower, as
    people abbreviate: 三百五 = 350, 十五 = 15; after 万 (`above`), 三万五 =
    35 000. Units must fall from left to right.
    """
    value, digit, last_unit, skipped = 0, None, 10_000, False
    for char in run:
        if char in _DIGITS:
            if digit is not None or (skipped and _DIGITS[char] == 0):
                return None
            if _DIGITS[char] == 0:
                skipped = True
            else:
                digit = _DIGITS[char]
            continue
        unit = _UNITS[char]
        if unit >= last_unit:
            return None
        value += (1 if digit is None else digit) * unit
        digit, last_unit, skipped = None, unit, False
    if digit is not None:
        if skipped:
            value += digit
        elif last_unit < 10_000:
            value += digit * (last_unit // 10)
        else:
            value += digit * (above // 10 if above else 1)
    return value


# --------------------------------------------------------------------------
# What people put around a number.

_LEADING_HEDGE = re.compile(
    r"^(?:约等于|约为|大约是|大约|大概|大致|约|approximately|approx\.?|about|"
    r"around|roughly|[≈~=≒])\s*",
    re.IGNORECASE,
)
_TRAILING_HEDGE = re.compile(r"\s*(?:左右|上下|or so)$", re.IGNORECASE)
_MEASURE_WORD = re.compile(rf"(?<=[\d)%{_NUMERAL_CHARS}])\s*个$")
# A trailing parenthesised gloss: "Tk（key 位置）", "−∞（负无穷）", "3 (three)".
_GLOSS = re.compile(r"^(?P<head>.*?\S)\s*\((?P<gloss>[^()]*)\)$")
_CALLS = ("sqrt", "exp", "ln", "log", "float", "tensor", "array")


def strip_gloss(text: str) -> str:
    """Drop a parenthesised gloss after a value: words, not part of it.

    ``Tk（key 位置）`` is ``Tk`` and ``8 (eight)`` is ``8``; ``exp(1)``,
    ``2(3)`` and ``(Tq, Tk)`` are left alone: a call, a product and a shape.
    """
    match = _GLOSS.match(text)
    if match is None:
        return text
    head, gloss = match.group("head"), match.group("gloss")
    words = re.search(r"[\u4e00-\u9fff]|[A-Za-z]{2,}", gloss)
    call = re.search(r"[A-Za-z_.]+$", head)
    if not words or (call and call.group().split(".")[-1].lower() in _CALLS):
        return text
    if head[-1] in "+-*/^×·÷√=,([":
        return text  # "1/(Tk)": the parentheses close an operand
    if (
        text[match.end("head")] == "("
        and head[-1].isalnum()
        and not re.search(r"[\u4e00-\u9fff]", gloss)
    ):
        return text  # "f(key)": glued to a name, it reads as a call
    return head


# ASCII text holds a hedge, a gloss or a percent sign only with one of these.
_ASCII_HEDGE = re.compile(r"[~=%(]|about|approx|around|roughly|or so", re.IGNORECASE)


def strip_hedges(text: str) -> tuple[str, bool]:
    """Remove hedges around a number; say whether it ended with a percent sign."""
    if text.isascii() and not _ASCII_HEDGE.search(text):
        return text.strip(), False  # the usual entry: nothing to remove
    for _ in range(3):
        before = text
        text = strip_gloss(text.strip())
        text = _TRAILING_HEDGE.sub("", _LEADING_HEDGE.sub("", text))
        text = _MEASURE_WORD.sub("", text).strip()
        if text == before:
            break
    percent = text.endswith("%")
    return (text[:-1].rstrip() if percent else text), percent


# --------------------------------------------------------------------------
# Code's spellings: arrays, tensors, infinities.

_ARRAY_CALL = re.compile(r"^(?:(?:np|numpy|torch)\.)?(?:array|tensor|asarray)\(")
_KEYWORD_ARGUMENT = re.compile(
    r"\s*,\s*[A-Za-z_]\w*\s*=\s*(?:'[^']*'|\"[^\"]*\"|<[^<>]*>|[\w.:\-]+)"
)
_CODE_INFINITY = re.compile(
    r"^(?P<outer>[+-]?)(?:float\((?P<q>['\"])(?P<inner>[+-]?)(?:inf|infinity)(?P=q)\)"
    r"|(?:np|numpy|math|torch)\.(?:inf|infty|infinity)|(?:np|numpy)\.(?P<n>ninf))$"
)


def unwrap_array(text: str) -> str:
    """Return the list inside NumPy's or PyTorch's printing of an array.

    ``tensor([0, 3, 8], device='cuda:0', dtype=torch.int32)`` and
    ``array([0., 3., 8.])`` are ``[0, 3, 8]`` and ``[0., 3., 8.]``; anything
    else is returned as it is.
    """
    stripped = text.strip()
    call = _ARRAY_CALL.match(stripped)
    if call is None or not stripped.endswith(")"):
        return text
    body = stripped[call.end() : -1]
    depth, end = 0, len(body)
    for index, char in enumerate(body):
        if char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
        elif char == "," and depth == 0:
            end = index
            break
    rest = body[end:]
    while rest:
        keyword = _KEYWORD_ARGUMENT.match(rest)
        if keyword is None:
            return text if rest.strip() not in (",", "") else body[:end].strip()
        rest = rest[keyword.end() :]
    return body[:end].strip()


def code_infinity(word: str) -> float | None:
    """±∞ as code spells it (``float('-inf')``, ``-np.inf``), or None."""
    match = _CODE_INFINITY.match(word)
    if match is None:
        return None
    inner = match.group("inner") == "-" or match.group("n") is not None
    negative = (match.group("outer") == "-") != inner
    return -math.inf if negative else math.inf


# --------------------------------------------------------------------------
# Symbols.

_TRANSPOSED_WORD = re.compile(r"([A-Za-z][A-Za-z0-9_]*)\s*(?:的\s*)?转置")
_PRIMED = re.compile(r"(?<![A-Za-z0-9_'])([A-Za-z])'(?![A-Za-z0-9_'])")


def spell_transpose(text: str) -> str:
    """Write ``K转置``, ``K 的转置`` and ``K'`` as ``K^T``."""
    return _PRIMED.sub(r"\1^T", _TRANSPOSED_WORD.sub(r"\1^T", text))
