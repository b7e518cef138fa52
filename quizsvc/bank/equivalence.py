"""The equivalence policy for cloze answers: which spellings are one answer.

Written down for authors in questions/README.md too. `canonical_answer` folds
a typed answer and every accepted answer the same way; two answers are the
same when their folds are equal. Numbers are read by the shared parser
(`quizsvc.parsing`), so a cloze reads a number exactly as a numeric item, a
generated problem and the lab do. What never matters:

- width, case, spaces, underscores and trailing punctuation: full-width
  ``［Ｔｑ，Ｔｋ］``, the Unicode minus ``−``, ``head dim`` = ``head_dim`` =
  ``headdim``;
- how a superscript, subscript, power or transpose is typed: ``Kᵀ`` = ``K^T``
  = ``K.T`` = ``KT`` = ``K'`` = ``K转置`` = ``K 的转置``, ``Tₖ`` = ``T_k`` =
  ``Tk``, ``e⁰`` = ``e^0`` = ``e^{0}``, ``**`` = ``^``;
- redundant parentheses around one symbol or number: ``1/(Tk)`` = ``1/Tk``,
  ``Tk^(-1)`` = ``Tk^-1``; a division written ``÷``, ``分之`` or TeX:
  ``1÷Tk`` = ``Tk分之一`` = ``\\frac{1}{Tk}`` = ``1/Tk``;
- a parenthesised gloss after the answer: ``Tk（key 位置）`` = ``Tk``,
  ``−∞（负无穷）`` = ``−∞``;
- how a number is written, where the answer is a number: ``1`` = ``1.00`` =
  ``e⁰`` = ``exp(0)`` = ``一``, ``1/√128`` = ``√128/128``, ``6`` = ``3*2`` =
  ``4x3/2`` = ``六`` = ``六个``, ``-0.5`` = ``负0.5`` = ``负二分之一`` (read by
  the shared parser; the values must agree to 12 significant digits);
- how a shape or a list is written: ``[Tq, Tk]`` = ``(Tq, Tk)`` = ``Tq, Tk`` =
  ``Tq×Tk`` = ``Tq x Tk`` = ``TqxTk`` = ``Tq*Tk`` = ``Tq · Tk`` = ``Tq 乘 Tk`` =
  ``Tq 乘以 Tk`` = ``Tq by Tk``, ``Tq 行 Tk 列`` = ``Tq rows, Tk columns``,
  and NumPy's and PyTorch's printing ``[0 3 8]`` = ``0 3 8`` =
  ``array([0., 3., 8.])`` = ``tensor([0, 3, 8], device='cuda:0',
  dtype=torch.int32)`` = ``[0, 3, 8,]`` = ``[0, 3.0, 8.0]`` = ``[0, 3, 8]``;
- how −∞ is spelled: every spelling `quizsvc.parsing.parse_value` reads,
  ``-inf`` = ``−∞`` = ``负无穷`` = ``负无穷大`` = ``负的无穷大`` = ``-无穷`` =
  ``negative infinity`` = ``float('-inf')`` = ``-np.inf`` = ``-math.inf``
  (and +∞ likewise, which stays a different answer);
- the language of a term: ``键`` = ``key`` = ``keys``, ``值`` = ``value``,
  ``查询`` = ``query``; ``键`` inside longer terms too (``键位置`` = ``key 位置``);
  ``遮罩`` = ``掩码`` = ``mask``, ``因果遮罩`` = ``causal mask``, ``特征维`` =
  ``特征维度`` = ``feature axis`` = ``feature dimension``; ``维度`` = ``维``; the
  particle ``的`` and a leading ``the``; a trailing ``矩阵`` / ``matrix`` is
  dropped (``值矩阵`` = ``value``), and so is an axis word after a one- or
  two-letter symbol (``Tk 轴`` = ``Tk``, ``d 维`` = ``d axis`` = ``d``);
- a measure word after a count: ``15 个`` = ``15``; ``½`` = ``1/2``.

Everything else matters: the order of a shape's axes, which symbol is typed
(``Tq`` is not ``Tk``, ``K`` is not ``V``), signs (``+∞`` is not ``−∞``) and
any number that differs. A letter and the word it stands for (``K`` and
``key``) are only the same answer when the question lists both.
"""

from __future__ import annotations

import math
import re
import unicodedata

from quizsvc.parsing import ExpressionError, normalize_text, parse_value
from quizsvc.parsing.spelling import (
    spell_number,
    spell_transpose,
    strip_gloss,
    unwrap_array,
)

__all__ = ["canonical_answer", "exact_number"]

_SHAPE_BRACKETS = re.compile(r"^[\[(](.*)[\])]$")
# Sizes multiplied with ×, *, 乘 or 乘以, or an x or "by" between spaces (or an
# x between digits).
_PRODUCT = re.compile(r"\s*(?:乘以|[×*乘])+\s*|\s+(?:x|by)\s+")
_NUMBERS_BY_X = re.compile(r"^\d+(?:x\d+)+$")  # "2x3": sizes typed without spaces
# "·" multiplies two sizes (Tq · Tk) but stays a product sign inside a formula
# such as Q·Kᵀ, where it is dropped.
_DOT = re.compile(r"\s*[·⋅]\s*")
_SIZE = re.compile(r"^(?:t[a-z0-9_]*|d[a-z0-9_]*|\d+|batch|heads?)$")
_DIM = re.compile(r"^[a-z0-9_+\-/]+$")
_NUMBER_DIM = re.compile(r"^-?\d+\.?\d*$")
_MULTIPLY_SIGNS = re.compile(r"[·⋅*]")
# "TqxTk": an x between two sizes, told apart from words such as "exp" because
# the size after it starts with a capital letter or a digit.
_SIZES_BY_X = re.compile(r"^([A-Za-z][A-Za-z0-9_]*|\d+)x([A-Z0-9][A-Za-z0-9_]*)$")
_NUMBER_LIST = re.compile(r"^-?\d+(?:\.\d*)?(?:\s+-?\d+(?:\.\d*)?)+$")
# "Tq 行 Tk 列", "Tq rows, Tk columns": a shape said in words.
_ROWS_COLUMNS = re.compile(
    r"^([a-z0-9_]+)\s*(?:行|rows?)[\s,，]*(?:and\s+)?([a-z0-9_]+)\s*(?:列|columns?)$"
)
_REDUNDANT_PARENS = re.compile(r"(?<![a-z0-9_)])\((-?[a-z0-9.]+)\)")
_TRANSPOSE = re.compile(r"([a-z])(?:\^t|\.t)(?![a-z0-9])")

# Chinese and English names of one idea, folded to one spelling.
_TERMS = {
    "键": "key", "keys": "key",
    "值": "value", "values": "value",
    "查询": "query", "queries": "query",
    "遮罩": "mask", "掩码": "mask", "masks": "mask",
    "因果遮罩": "causalmask", "因果掩码": "causalmask",
    "特征维": "featureaxis", "特征轴": "featureaxis",
    "featuredimension": "featureaxis", "featuredim": "featureaxis",
}  # fmt: skip
# The same words inside a longer term: 键位置 = key 位置.
_TERM_PARTS = (("维度", "维"), ("的", ""), ("键", "key"))
_MATRIX_WORDS = ("矩阵", "matrix")
# "Tk 轴", "d 维", "d axis": an axis word after a short symbol names that axis.
_AXIS_WORDS = ("维", "轴", "axis", "dimension", "dim")
_SHORT_SYMBOL = re.compile(r"^[a-z][a-z0-9]?$")
_WORDS = set(_TERMS.values())


def _split_product(text: str) -> list[str]:
    if _NUMBERS_BY_X.match(text):
        return text.split("x")
    dotted = _DOT.split(text)
    if len(dotted) > 1 and all(_SIZE.match(part) for part in dotted):
        return dotted
    parts = [part.strip() for part in _PRODUCT.split(text)]
    if len(parts) == 1 and _NUMBER_LIST.match(text.strip()):
        # NumPy prints an array as [0 3 8].
        return text.split()
    return parts


def _shape_dims(text: str) -> list[str] | None:
    """Return the dimensions if `text` spells a shape, such as [Tq, Tk] or Tq×Tk."""
    bracketed = _SHAPE_BRACKETS.match(text)
    if bracketed:
        parts = [p.strip() for p in bracketed.group(1).split(",")]
        if len(parts) > 1 and not parts[-1] and all(parts[:-1]):
            parts = parts[:-1]  # Python's trailing comma: [0, 3, 8,]
        if len(parts) == 1 and text.startswith("("):
            return None  # "(1/Tk)", "(-1/2)": grouping, not a one-axis shape
        if len(parts) == 1:
            parts = _split_product(parts[0])
            if len(parts) == 1:
                parts = parts[0].split() or [""]
            if len(parts) == 1 and exact_number(parts[0]) is not None:
                return None  # "(-1/2)" is a number in parentheses
    else:
        parts = [p.strip() for p in text.split(",")]
        if len(parts) < 2:
            parts = _split_product(text)
        if len(parts) < 2:
            return None
    dims = [_dimension(part) for part in parts]
    if not all(dims):
        return None
    return dims


def _dimension(part: str) -> str:
    """One axis of a shape or one entry of a list ("" if it is neither)."""
    if _NUMBER_DIM.match(part):
        return f"{float(part) + 0.0:.12g}"  # 3.0 and 3. are 3, as in a list
    dim = part.replace("_", "")
    return dim if dim and _DIM.match(dim) else ""


def canonical_answer(text: str) -> str:
    """Fold a typed answer so that equivalent spellings compare equal.

    The module docstring lists what is folded; folding twice is folding once.
    """
    folded = _fold_once(text)
    # Dropping a sign or a space can reveal a shape ("1x1*" → "1x1"); fold
    # until nothing changes, so that folding an answer twice is folding it once.
    for _ in range(4):
        again = _fold_once(folded)
        if again == folded:
            break
        folded = again
    return folded


def _fold_once(text: str) -> str:
    raw = normalize_text(text).strip().rstrip(".;,").strip()
    raw = unwrap_array(strip_gloss(raw))
    infinity = _infinity(raw.casefold())
    if infinity is not None:
        return infinity
    raw = _spoken(spell_transpose(raw))
    by_x = _SIZES_BY_X.match(raw)
    if by_x:
        raw = f"{by_x.group(1)} x {by_x.group(2)}"
    folded = raw.casefold().replace("**", "^")
    folded = re.sub(r"^the\s+", "", folded)
    folded = _ROWS_COLUMNS.sub(r"\1, \2", folded)
    dims = _shape_dims(folded)
    if dims is not None:
        return "(" + ",".join(dims) + ")"
    folded = folded.replace("{", "(").replace("}", ")")
    number = exact_number(folded)
    if number is not None:
        return number
    # Any multiplication sign left is noise between symbols (Q·Kᵀ = QKᵀ).
    folded = re.sub(r"[\s_]+", "", _MULTIPLY_SIGNS.sub("", folded))
    # Removing spaces can bring a combining mark next to a letter (NFKC spells
    # "¯" as space + U+0304): compose again.
    folded = unicodedata.normalize("NFKC", folded).rstrip(".;,")
    folded = _TRANSPOSE.sub(r"\1t", _REDUNDANT_PARENS.sub(r"\1", folded))
    folded = _outer_parentheses_dropped(folded)
    if folded not in _TERMS:
        for part, replacement in _TERM_PARTS:
            folded = folded.replace(part, replacement)
    for word in _MATRIX_WORDS:
        stem = folded.removesuffix(word)
        if stem != folded and (len(stem) == 1 or _TERMS.get(stem, stem) in _WORDS):
            folded = stem
    for word in _AXIS_WORDS:
        stem = folded.removesuffix(word)
        if stem != folded and _SHORT_SYMBOL.match(stem):
            folded = stem
            break
    return _TERMS.get(folded, folded)


def _outer_parentheses_dropped(text: str) -> str:
    """Drop parentheses that wrap the whole answer: (1/tk) is 1/tk."""
    while text.startswith("(") and text.endswith(")"):
        depth = 0
        for index, char in enumerate(text):
            depth += {"(": 1, ")": -1}.get(char, 0)
            if depth == 0 and index < len(text) - 1:
                return text  # "(a)/(b)": the first pair closes early
        text = text[1:-1]
    return text


def _spoken(text: str) -> str:
    """Spell Chinese numerals, 分之 and TeX as the expression grammar does."""
    try:
        return spell_number(text)
    except ExpressionError:
        return text  # not a number after all; compared as typed


def _infinity(text: str) -> str | None:
    """Return "-inf" or "inf" if `text` spells an infinity the parser reads."""
    if not re.search(r"inf|∞|无穷|无限", text):
        return None
    try:
        value = parse_value(re.sub(r"\s+", "", text))
    except ExpressionError:
        return None
    if not math.isinf(value):
        return None
    return "-inf" if value < 0 else "inf"


def exact_number(text: str) -> str | None:
    """Return a number's canonical spelling (12 significant digits), else None."""
    # Only text that holds a digit (or is e or π) is a number: a symbol such as
    # "d" must not read as an unknown name's error, nor "pie" as π·e.
    if not text or not re.search(r"\d|^e$|π|pi", _spoken(text)):
        return None
    try:
        value = parse_value(text)
    except ExpressionError:
        return None
    if not math.isfinite(value):
        return None
    return f"{value + 0.0:.12g}"
