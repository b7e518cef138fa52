"""Checking typed answers to choice, numeric, cloze and ordering questions.

The equivalence policy for cloze answers (also written down for authors in
questions/README.md). `canonical_answer` folds a typed answer and every
accepted answer the same way; two answers are the same when their folds are
equal. What never matters:

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
from typing import Any

from quizsvc.bank.model import AnswerCheck, Question, is_number
from quizsvc.parsing import (
    ExpressionError,
    normalize_text,
    parse_expression,
    parse_value,
)

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
            if len(parts) == 1 and _exact_number(parts[0]) is not None:
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
    number = _exact_number(_COUNT_WORD.sub("", folded))
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


def _exact_number(text: str) -> str | None:
    """Return a number's canonical spelling (12 significant digits), else None."""
    text = text.replace(_FRACTION_SLASH, "/")
    if not text or _DOUBLED_SIGN.search(text) or not re.search(r"\d|^e$|π|pi", text):
        return None
    try:
        value = parse_expression(text)
    except ExpressionError:
        return None
    return f"{value + 0.0:.12g}"


def _parse_number_answer(text: str) -> float | None:
    """Read a typed number with the one expression parser (`6/√2`, `1/sqrt(2)`)."""
    cleaned = normalize_text(text).replace(_FRACTION_SLASH, "/").strip()
    # "15 个" counts fifteen things: the measure word is not part of the number.
    cleaned = _COUNT_WORD.sub("", cleaned.lstrip("≈~=")).strip()
    percent = cleaned.endswith("%")
    cleaned = cleaned.rstrip("%").strip()
    # A doubled sign ("--1") is a slip of the keyboard, not a sum to simplify.
    if not cleaned or _DOUBLED_SIGN.search(cleaned):
        return None
    try:
        value = parse_expression(cleaned)
    except ExpressionError:
        return None
    return value / 100 if percent else value


def _tokens(answer: Any, extra_separators: str = "") -> list[str] | None:
    if isinstance(answer, str):
        text = normalize_text(answer).casefold().replace("→", ",")
        text = text.replace("->", ",")
        return [t for t in re.split(rf"[,;\s、{extra_separators}]+", text) if t]
    if isinstance(answer, (list, tuple)) and all(isinstance(x, str) for x in answer):
        return [normalize_text(x).casefold().strip() for x in answer]
    return None


def _invalid(kind: str, expected: str, zh: str, en: str) -> AnswerCheck:
    return AnswerCheck(
        False, 0.0, expected, {"type": kind, "invalid": {"zh-CN": zh, "en": en}}
    )


def check_answer(question: Question, answer: Any) -> AnswerCheck:
    """Grade a typed answer to a choice, numeric, cloze or ordering question.

    Answers that cannot be read (an empty string, an unknown option, text where
    a number is expected) are not correct and carry ``detail["invalid"]``, a
    bilingual message, so a caller can ask again instead of recording a lapse.
    Recall is self-rated and generated questions go through quizsvc.grading:
    asking for either raises ValueError.
    """
    checker = _CHECKERS.get(question.type)
    if checker is None:
        raise ValueError(
            f"{question.type} questions are not checked here (recall is self-rated; "
            "generated problems are graded by quizsvc.grading)"
        )
    return checker(question, answer)


def _check_choice(question: Question, answer: Any) -> AnswerCheck:
    options = {option["id"]: option for option in question.data["options"]}
    correct = [o["id"] for o in question.data["options"] if o["correct"]]
    expected = ", ".join(correct)
    chosen = _tokens(answer)
    if not chosen:
        return _invalid("choice", expected, "请选择一个选项。", "Choose an option.")
    unknown = [c for c in chosen if c not in options]
    if unknown:
        return _invalid(
            "choice",
            expected,
            f"没有这个选项：{'、'.join(unknown)}。",
            f"No such option: {', '.join(unknown)}.",
        )
    chosen = list(dict.fromkeys(chosen))
    if not question.data["multiple"] and len(chosen) > 1:
        return _invalid(
            "choice",
            expected,
            "这道题只选一个选项。",
            "This question takes exactly one option.",
        )
    wrong = [c for c in chosen if c not in correct]
    missed = [c for c in correct if c not in chosen]
    hits = len(correct) - len(missed)
    # Each wrong pick cancels a right one, so ticking everything never pays.
    score = max(0.0, (hits - len(wrong)) / len(correct))
    detail = {
        "type": "choice",
        "chosen": chosen,
        "correct": correct,
        "missed": missed,
        "wrong": wrong,
        "misconceptions": [
            options[c]["misconception"] for c in wrong if options[c]["misconception"]
        ],
        "why_wrong": {c: dict(options[c]["why"]) for c in wrong},
    }
    is_correct = not wrong and not missed
    return AnswerCheck(is_correct, 1.0 if is_correct else score, expected, detail)


def format_answer(answer: float, tolerance: float) -> str:
    """Write a numeric answer with as many decimals as its tolerance resolves."""
    if tolerance <= 0:
        return f"{answer:g}"
    decimals = max(0, math.ceil(-math.log10(2 * tolerance) - 1e-9))
    return f"{answer:.{decimals}f}"


def _check_numeric(question: Question, answer: Any) -> AnswerCheck:
    target = question.data["answer"]
    tolerance = question.data["tolerance"]
    expected = format_answer(target, tolerance)
    if is_number(answer):
        value: float | None = float(answer)
    elif isinstance(answer, str):
        value = _parse_number_answer(answer)
    else:
        value = None
    if value is None or not math.isfinite(value):
        return _invalid(
            "numeric",
            expected,
            "请输入一个数，例如 0.5、1/2 或 √2/2。",
            "Type a number, such as 0.5, 1/2 or √2/2.",
        )
    gap = abs(value - target)
    # A hair of slack so 0.1 + 0.2-style rounding never fails an exact answer.
    correct = gap <= tolerance + 1e-9 * max(1.0, abs(target))
    return AnswerCheck(
        correct,
        1.0 if correct else 0.0,
        expected,
        {
            "type": "numeric",
            "value": value,
            "answer": target,
            "tolerance": tolerance,
            "error": gap,
        },
    )


def _check_cloze(question: Question, answer: Any) -> AnswerCheck:
    accepted = question.data["accepted"]
    expected = accepted[0]
    if not isinstance(answer, str) or not answer.strip():
        return _invalid("cloze", expected, "请填写空白处。", "Fill in the blank.")
    typed = canonical_answer(answer)
    matched = next((a for a in accepted if canonical_answer(a) == typed), None)
    if matched is None:
        # "3*2" folds like a shape, yet where a number is asked it is 6.
        matched = _same_number(answer, accepted)
    correct = matched is not None
    return AnswerCheck(
        correct,
        1.0 if correct else 0.0,
        expected,
        {"type": "cloze", "normalized": typed, "matched": matched},
    )


def _same_number(answer: str, accepted: list[str]) -> str | None:
    """Return the accepted number that the typed expression equals, if any."""
    value = _parse_number_answer(answer)
    if value is None:
        return None
    for candidate in accepted:
        number = _exact_number(canonical_answer(candidate))
        if number is not None and math.isclose(
            float(number), value, rel_tol=1e-12, abs_tol=1e-12
        ):
            return candidate
    return None


def _check_ordering(question: Question, answer: Any) -> AnswerCheck:
    steps = [step["id"] for step in question.data["steps"]]
    expected = " → ".join(steps)
    given = _tokens(answer, ">")
    if not given:
        return _invalid(
            "ordering", expected, "请按顺序列出所有步骤。", "List every step in order."
        )
    if sorted(given) != sorted(steps):
        unknown = sorted(set(given) - set(steps))
        missing = sorted(set(steps) - set(given))
        repeated = sorted({g for g in given if given.count(g) > 1})
        # Steps are named as the learner sees them, never by their ids.
        names = {step["id"]: step["text"] for step in question.data["steps"]}

        def named(ids: list[str], language: str) -> str:
            separator = "、" if language == "zh-CN" else ", "
            return separator.join(names[i][language] for i in ids)

        parts_zh, parts_en = [], []
        if unknown:
            parts_zh.append(f"没有这些步骤：{'、'.join(unknown)}")
            parts_en.append(f"unknown steps: {', '.join(unknown)}")
        if missing:
            parts_zh.append(f"缺少：{named(missing, 'zh-CN')}")
            parts_en.append(f"missing: {named(missing, 'en')}")
        if repeated:
            parts_zh.append(f"重复：{named(repeated, 'zh-CN')}")
            parts_en.append(f"repeated: {named(repeated, 'en')}")
        return _invalid(
            "ordering",
            expected,
            "每个步骤恰好用一次；" + "；".join(parts_zh) + "。",
            "Use every step exactly once; " + "; ".join(parts_en) + ".",
        )
    position = {step: i for i, step in enumerate(given)}
    pairs = len(steps) * (len(steps) - 1) // 2
    in_order = sum(
        position[steps[i]] < position[steps[j]]
        for i in range(len(steps))
        for j in range(i + 1, len(steps))
    )
    first_wrong = next(
        (i for i, (a, b) in enumerate(zip(given, steps, strict=True)) if a != b), None
    )
    correct = first_wrong is None
    return AnswerCheck(
        correct,
        1.0 if correct else in_order / pairs,
        expected,
        {
            "type": "ordering",
            "order": given,
            "expected": steps,
            "first_wrong": first_wrong,
            "pairs_in_order": in_order,
            "pairs": pairs,
        },
    )


_CHECKERS = {
    "choice": _check_choice,
    "numeric": _check_numeric,
    "cloze": _check_cloze,
    "ordering": _check_ordering,
}
