"""Checking typed answers to choice, numeric, cloze and ordering questions."""

from __future__ import annotations

import math
import re
import unicodedata
from typing import Any

from quizsvc.bank.model import AnswerCheck, Question, is_number
from quizsvc.parsing import ExpressionError, normalize_text, parse_expression

_SHAPE_BRACKETS = re.compile(r"^[\[(](.*)[\])]$")
# Sizes multiplied with × or an x between spaces (or digits); "*" and "·" stay
# multiplication signs inside formulas such as Q·Kᵀ.
_PRODUCT = re.compile(r"\s*×+\s*|\s+x\s+")
_NUMBERS_BY_X = re.compile(r"^\d+(?:x\d+)+$")  # "2x3": sizes typed without spaces
_DIM = re.compile(r"^[a-z0-9_+\-/]+$")
_MULTIPLY_SIGNS = re.compile(r"[·⋅*]")
_DOUBLED_SIGN = re.compile(r"[-+]\s*[-+]")


def _split_product(text: str) -> list[str]:
    if _NUMBERS_BY_X.match(text):
        return text.split("x")
    return [part.strip() for part in _PRODUCT.split(text)]


def _shape_dims(text: str) -> list[str] | None:
    """Return the dimensions if `text` spells a shape, such as [Tq, Tk] or Tq×Tk."""
    bracketed = _SHAPE_BRACKETS.match(text)
    if bracketed:
        parts = [p.strip() for p in bracketed.group(1).split(",")]
        if len(parts) == 1:
            parts = _split_product(parts[0])
    else:
        parts = _split_product(text)
        if len(parts) < 2:
            return None
    dims = [p.replace("_", "") for p in parts]
    if not all(dim and _DIM.match(dim) for dim in dims):
        return None
    return dims


def canonical_answer(text: str) -> str:
    """Fold a typed answer so equivalent spellings compare equal.

    Full-width characters, Unicode minus, case, spaces and multiplication dots
    never matter ("**" reads as "^"); a shape written as [Tq, Tk], (Tq, Tk),
    Tq×Tk or Tq x Tk becomes "(tq,tk)".
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
    folded = normalize_text(text).casefold().strip().rstrip(".;,").strip()
    dims = _shape_dims(folded)
    if dims is not None:
        return "(" + ",".join(dims) + ")"
    # "**" is a power, as is "^"; any other multiplication sign is noise.
    folded = _MULTIPLY_SIGNS.sub("", folded.replace("**", "^"))
    folded = re.sub(r"\s+", "", folded)
    # Removing spaces can bring a combining mark next to a letter (NFKC spells
    # "¯" as space + U+0304): compose again.
    return unicodedata.normalize("NFKC", folded).rstrip(".;,")


def _parse_number_answer(text: str) -> float | None:
    """Read a typed number with the one expression parser (`6/√2`, `1/sqrt(2)`)."""
    cleaned = normalize_text(text).strip().lstrip("≈~=").strip()
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
            f"没有这个选项:{', '.join(unknown)}。",
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
    correct = matched is not None
    return AnswerCheck(
        correct,
        1.0 if correct else 0.0,
        expected,
        {"type": "cloze", "normalized": typed, "matched": matched},
    )


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
        parts_zh, parts_en = [], []
        if unknown:
            parts_zh.append(f"没有这些步骤:{', '.join(unknown)}")
            parts_en.append(f"unknown steps: {', '.join(unknown)}")
        if missing:
            parts_zh.append(f"缺少:{', '.join(missing)}")
            parts_en.append(f"missing: {', '.join(missing)}")
        if repeated:
            parts_zh.append(f"重复:{', '.join(repeated)}")
            parts_en.append(f"repeated: {', '.join(repeated)}")
        return _invalid(
            "ordering",
            expected,
            "每个步骤恰好用一次;" + ";".join(parts_zh) + "。",
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
