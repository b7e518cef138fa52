"""Checking typed answers to choice, numeric, cloze and ordering questions.

A cloze answer is right when it folds (`quizsvc.bank.equivalence`) onto an
accepted one, or reads as the same number; a numeric answer when its value,
read by the shared parser, lies within the tolerance. An answer that cannot be
read is not wrong: it carries ``detail["invalid"]`` so the learner is asked
again instead of recording a lapse.
"""

from __future__ import annotations

import math
import re
from typing import Any

from quizsvc.bank.equivalence import canonical_answer, exact_number
from quizsvc.bank.model import AnswerCheck, Question, is_number, within_tolerance
from quizsvc.parsing import ExpressionError, normalize_text, parse_scalar
from quizsvc.parsing.spelling import looks_like_chinese_number

__all__ = ["check_answer", "format_answer"]


def _parse_number_answer(text: str) -> float | None:
    """Read a typed number as every answer box does (None if it is no number)."""
    try:
        return parse_scalar(text)
    except ExpressionError:
        return None


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
    correct = within_tolerance(value, target, tolerance)
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
    if matched is None:
        matched = _described_symbol(answer, accepted)
    if (
        matched is None
        and looks_like_chinese_number(normalize_text(answer))
        and _parse_number_answer(answer) is None
    ):
        # Numerals that spell no number (三十十) are unreadable, not wrong.
        return _invalid(
            "cloze",
            expected,
            f"“{answer.strip()[:20]}”不是一个能读懂的数，请换一种写法，例如阿拉伯数字。",
            f"{answer.strip()[:20]!r} does not read as a number; write it another "
            "way, e.g. in digits.",
        )
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
        number = exact_number(canonical_answer(candidate))
        if number is not None and math.isclose(
            float(number), value, rel_tol=1e-12, abs_tol=1e-12
        ):
            return candidate
    return None


def _described_symbol(answer: str, accepted: list[str]) -> str | None:
    """Accept "每个头的维度 d": a right description followed by the right symbol.

    Both halves must be accepted answers on their own, so a wrong symbol after
    a right description ("key 位置 Tq") stays wrong.
    """
    head, _, symbol = normalize_text(answer).strip().rpartition(" ")
    if not head.strip() or not 0 < len(symbol) <= 4:
        return None
    keys = {canonical_answer(a): a for a in accepted}
    if canonical_answer(head) in keys and canonical_answer(symbol) in keys:
        return keys[canonical_answer(symbol)]
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
