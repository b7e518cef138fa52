"""The equivalence policy for cloze answers: which spellings are one answer.

Written down for authors in questions/README.md too. `canonical_answer` folds
a typed answer and every accepted answer the same way; two answers are the
same when their folds are equal. What never matters:

- width, case, spaces, underscores and trailing punctuation: full-width
  ``［Ｔｑ，Ｔｋ］``, the Unicode minus ``−``, ``head dim`` = ``head_dim`` =
  ``headdim``;
- how a superscript, subscript or power is typed: ``Kᵀ`` = ``K^T`` = ``K.T``
  = ``KT``, ``Tₖ`` = ``T_k`` = ``Tk``, ``e⁰`` = ``e^0`` = ``e^{0}``, ``**`` = ``^``;
- redundant parentheses around one symbol or number: ``1/(Tk)`` = ``1/Tk``,
  ``Tk^(-1)`` = ``Tk^-1``;
- how a number is written, where the answer is a number: ``1`` = ``1.00`` =
  ``e⁰`` = ``exp(0)``, ``1/√128`` = ``√128/128``, ``6`` = ``3*2`` (read by the
  one expression parser in `quizsvc.parsing`; the values must agree to 12
  significant digits);
- how a shape or a list is written: ``[Tq, Tk]`` = ``(Tq, Tk)`` = ``Tq, Tk`` =
  ``Tq×Tk`` = ``Tq x Tk`` = ``TqxTk`` = ``Tq*Tk`` = ``Tq 乘 Tk`` = ``Tq by Tk``,
  ``Tq 行 Tk 列`` = ``Tq rows, Tk columns``, and NumPy's and PyTorch's
  printing ``[0 3 8]`` = ``0 3 8`` = ``array([0, 3, 8])``
  = ``tensor([0, 3, 8], dtype=torch.int32)`` = ``[0, 3, 8]``;
- how −∞ is spelled: every spelling `quizsvc.parsing.parse_value` reads in a
  matrix answer, ``-inf`` = ``−∞`` = ``负无穷`` = ``负无穷大`` = ``-无穷`` =
  ``−无穷大`` = ``negative infinity`` (and +∞ likewise, which stays a different
  answer);
- the language of a term: ``键`` = ``key`` = ``keys``, ``值`` = ``value``,
  ``查询`` = ``query``, ``遮罩`` = ``掩码`` = ``mask``, ``因果遮罩`` = ``causal
  mask``, ``特征维`` = ``特征维度`` = ``feature axis`` = ``feature dimension``; a
  trailing ``矩阵`` / ``matrix`` is dropped (``值矩阵`` = ``value``), and so is
  an axis word after a one- or two-letter symbol (``Tk 轴`` = ``Tk``,
  ``d 维`` = ``d axis`` = ``d``);
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

from quizsvc.parsing import (
    ExpressionError,
    normalize_text,
    parse_expression,
    parse_value,
)

__all__ = ["canonical_answer", "exact_number"]

_SHAPE_BRACKETS = re.compile(r"^[\[(](.*)[\])]$")
# Sizes multiplied with ×, *, 乘, or an x or "by" between spaces (or an x
# between digits); "·" stays a multiplication sign inside formulas such as Q·Kᵀ.
_PRODUCT = re.compile(r"\s*[×*乘]+\s*|\s+(?:x|by)\s+")
_NUMBERS_BY_X = re.compile(r"^\d+(?:x\d+)+$")  # "2x3": sizes typed without spaces
_DIM = re.compile(r"^[a-z0-9_+\-/]+$")
_MULTIPLY_SIGNS = re.compile(r"[·⋅*]")
_DOUBLED_SIGN = re.compile(r"[-+]\s*[-+]")
# "TqxTk": an x between two sizes, told apart from words such as "exp" because
# the size after it starts with a capital letter or a digit.
_SIZES_BY_X = re.compile(r"^([A-Za-z][A-Za-z0-9_]*|\d+)x([A-Z0-9][A-Za-z0-9_]*)$")
_NUMBER_LIST = re.compile(r"^-?\d+(?:\.\d+)?(?:\s+-?\d+(?:\.\d+)?)+$")
# np.array([0, 3, 8]) or torch.tensor([0, 3, 8], dtype=torch.int32): the list.
_ARRAY_WRAPPER = re.compile(
    r"^(?:np\.array|numpy\.array|array|torch\.tensor|tensor)"
    r"\((.*?)(?:,\s*dtype\s*=\s*[\w.]+)?\)$"
)
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
    "特征维": "featureaxis", "特征维度": "featureaxis", "特征轴": "featureaxis",
    "featuredimension": "featureaxis", "featuredim": "featureaxis",
}  # fmt: skip
_MATRIX_WORDS = ("矩阵", "matrix")
# "Tk 轴", "d 维", "d axis": an axis word after a short symbol names that axis.
_AXIS_WORDS = ("维度", "维", "轴", "axis", "dimension", "dim")
_SHORT_SYMBOL = re.compile(r"^[a-z][a-z0-9]?$")
# NFKC spells ½ as 1⁄2, with a fraction slash the expression parser does not read.
_FRACTION_SLASH = "\u2044"
_COUNT_WORD = re.compile(r"(?<=[\d)])\s*个$")  # "6 个": six of something
_WORDS = set(_TERMS.values())


def _scripts_as_powers(text: str) -> str:
    """Spell superscripts as powers and subscripts as _x: Kᵀ → K^T, e⁻¹ → e^(-1)."""
    out, run, kind = [], [], None

    def flush() -> None:
        if run:
            body = unicodedata.normalize("NFKC", "".join(run))
            if kind == "super":
                out.append("^" + (body if len(body) == 1 else f"({body})"))
            else:
                out.append("_" + body)
            run.clear()

    for char in text:
        decomposition = unicodedata.decomposition(char)
        this = (
            "super"
            if decomposition.startswith("<super>")
            else "sub"
            if decomposition.startswith("<sub>")
            else None
        )
        if this != kind:
            flush()
            kind = this
        if this is None:
            out.append(char)
        else:
            run.append(char)
    flush()
    return "".join(out)


def _split_product(text: str) -> list[str]:
    if _NUMBERS_BY_X.match(text):
        return text.split("x")
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
    dims = [p.replace("_", "") for p in parts]
    if not all(dim and _DIM.match(dim) for dim in dims):
        return None
    return dims


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
    raw = normalize_text(_scripts_as_powers(text)).strip().rstrip(".;,").strip()
    wrapped = _ARRAY_WRAPPER.match(raw)
    if wrapped:
        raw = wrapped.group(1).strip()
    by_x = _SIZES_BY_X.match(raw)
    if by_x:
        raw = f"{by_x.group(1)} x {by_x.group(2)}"
    folded = raw.casefold().replace("**", "^")
    folded = _ROWS_COLUMNS.sub(r"\1, \2", folded)
    infinity = _infinity(folded)
    if infinity is not None:
        return infinity
    dims = _shape_dims(folded)
    if dims is not None:
        return "(" + ",".join(dims) + ")"
    folded = folded.replace("{", "(").replace("}", ")")
    number = exact_number(_COUNT_WORD.sub("", folded))
    if number is not None:
        return number
    # Any multiplication sign left is noise between symbols (Q·Kᵀ = QKᵀ).
    folded = re.sub(r"[\s_]+", "", _MULTIPLY_SIGNS.sub("", folded))
    # Removing spaces can bring a combining mark next to a letter (NFKC spells
    # "¯" as space + U+0304): compose again.
    folded = unicodedata.normalize("NFKC", folded).rstrip(".;,")
    folded = _TRANSPOSE.sub(r"\1t", _REDUNDANT_PARENS.sub(r"\1", folded))
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
    text = text.replace(_FRACTION_SLASH, "/")
    if not text or _DOUBLED_SIGN.search(text) or not re.search(r"\d|^e$|π|pi", text):
        return None
    try:
        value = parse_expression(text)
    except ExpressionError:
        return None
    return f"{value + 0.0:.12g}"
