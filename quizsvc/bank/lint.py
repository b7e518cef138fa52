"""Checks of the bank's wording: cues that let a learner guess, and house style.

Each function takes already-read data and returns messages (empty when all is
well); `quizsvc.bank.read` turns them into warnings or problems with a line.

- `guessable_choice`, `cloze_answer_in_prompt` and `mistakes_within_tolerance`
  find the cues a test-wise learner uses: they are warnings, never errors.
- `punctuation` and `math_markup` enforce the house style (full-width
  punctuation in Chinese prose, mathematics as `quizsvc.bank.markup`
  describes it): they are errors.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from quizsvc.bank.equivalence import canonical_answer
from quizsvc.bank.markup import notation_problems
from quizsvc.bank.model import LANGUAGES

__all__ = [
    "absolute_word_cue",
    "cloze_answer_in_prompt",
    "guessable_choice",
    "math_markup",
    "option_ids_out_of_order",
    "mistakes_within_tolerance",
    "punctuation",
]

_CJK = "\u3400-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef“”‘’…—"
_HAN = "\u3400-\u9fff\uf900-\ufaff"
# Parentheses around Chinese words are prose parentheses.
_PROSE_PARENS = re.compile(rf"\(([^()]*[{_HAN}][^()]*)\)")
_FULL_WIDTH_IN_ENGLISH = re.compile(r"[，。：；？！（）、]")
_SPANS = re.compile(r"\[[^\]]*\]|\([^)]*\)|[^\s,，。:：;；?？()（）、\[\]“”\"]+")


def guessable_choice(options: Sequence[dict], multiple: bool) -> list[str]:
    """Say where a single-answer item's correct option is the longest one."""
    if multiple:
        return []
    found = []
    for language in LANGUAGES:
        lengths = [len(option["text"][language]) for option in options]
        correct = [
            length
            for option, length in zip(options, lengths, strict=True)
            if option["correct"]
        ]
        others = [
            length
            for option, length in zip(options, lengths, strict=True)
            if not option["correct"]
        ]
        if correct and others and min(correct) > max(others):
            found.append(
                f"the correct option is the longest in {language} "
                f"({min(correct)} characters against at most {max(others)}): "
                "length alone gives it away; trim it or lengthen a distractor"
            )
    return found


# Strong absolutes: a test-wise learner strikes options that hold one, unread.
ABSOLUTE_WORDS = {
    "zh-CN": re.compile(
        r"一定|总是|任何|永远|必须|必定|绝不|从不|每[个一][^，。；、]{0,8}都"
    ),
    "en": re.compile(
        r"\b(?:always|every|everything|guaranteed|must|never)\b", re.IGNORECASE
    ),
}
_ABSOLUTE_EXAMPLES = {"zh-CN": "一定、总是、任何", "en": "always, every, must"}
# At most this many percentage points between the right and the wrong options.
ABSOLUTE_GAP = 10
# Fewer options than this on either side say nothing about a cue.
ABSOLUTE_MIN_OPTIONS = 5


def absolute_word_cue(options: Sequence[dict]) -> list[str]:
    """Say where absolute words mark the wrong options of a lesson (or the right).

    Counts, per language, the share of right options and of wrong options
    whose text holds a strong absolute (一定, 总是, 任何, always, every, must …);
    the two shares may differ by at most `ABSOLUTE_GAP` points.
    """
    right = [option for option in options if option["correct"]]
    wrong = [option for option in options if not option["correct"]]
    if min(len(right), len(wrong)) < ABSOLUTE_MIN_OPTIONS:
        return []
    found = []
    for language, pattern in ABSOLUTE_WORDS.items():
        marked_right = sum(bool(pattern.search(o["text"][language])) for o in right)
        marked_wrong = sum(bool(pattern.search(o["text"][language])) for o in wrong)
        share_right = 100 * marked_right / len(right)
        share_wrong = 100 * marked_wrong / len(wrong)
        if abs(share_right - share_wrong) > ABSOLUTE_GAP:
            found.append(
                f"absolute words ({_ABSOLUTE_EXAMPLES[language]} …) "
                f"are a cue in {language}: {marked_wrong}/{len(wrong)} wrong options "
                f"({share_wrong:.0f}%) against {marked_right}/{len(right)} right ones "
                f"({share_right:.0f}%), more than {ABSOLUTE_GAP} points apart; give "
                "some right options an absolute or hedge some distractors"
            )
    return found


def option_ids_out_of_order(options: Sequence[dict]) -> list[str]:
    """Say where letter ids do not run a, b, c … in file order (a late insertion)."""
    ids = [option["id"] for option in options]
    letters = all(isinstance(i, str) and len(i) == 1 and i.isalpha() for i in ids)
    if letters and ids != sorted(ids):
        return [
            f"the option ids run {', '.join(ids)}: an id out of order marks an "
            "option added late; give them in order"
        ]
    return []


def cloze_answer_in_prompt(
    prompt: dict, accepted: Sequence[str]
) -> list[tuple[str, str]]:
    """Say (language, message) where a cloze prompt contains an accepted answer."""
    keys = {canonical_answer(answer): answer for answer in accepted}
    found = []
    for language in LANGUAGES:
        text = prompt[language]
        spans = {canonical_answer(span) for span in _SPANS.findall(text)}
        for key, answer in keys.items():
            inside = key in spans or (
                re.search(f"[{_HAN}]", answer) is not None and answer in text
            )
            if inside:
                found.append(
                    (
                        language,
                        f"the {language} prompt contains its own answer {answer!r}",
                    )
                )
    return found


def punctuation(text: str, language: str) -> list[str]:
    """Say where prose punctuation has the wrong width for its language.

    Chinese prose takes ，。：；？！（）; mathematics keeps ASCII, so a mark
    inside [ ] or ( ) without Chinese in them (a shape, a list, a call) is
    left alone. English text takes no full-width marks.
    """
    if language == "en":
        marks = sorted(set(_FULL_WIDTH_IN_ENGLISH.findall(text)))
        if marks:
            return [f"English text uses full-width {' '.join(marks)}"]
        return []
    found = []
    depth = 0
    for at, char in enumerate(text):
        if char in "[(":
            depth += 1
        elif char in "])":
            depth = max(0, depth - 1)
        elif char in _FULL_WIDTH and depth == 0 and _is_prose_mark(text, at):
            found.append(
                f"Chinese prose uses a half-width {char!r} near "
                f"{_context(text, at)!r}: write {_FULL_WIDTH[char]}"
            )
    for match in _PROSE_PARENS.finditer(text):
        found.append(
            f"Chinese prose uses half-width parentheses around "
            f"{_context(text, match.start(), 12)!r}: write （）"
        )
    return found


def _is_prose_mark(text: str, at: int) -> bool:
    """Is the mark at `at` punctuation of Chinese prose rather than mathematics?"""
    before = text[at - 1] if at else ""
    after = text[at + 1 : at + 2]
    following = text[at + 1 :].lstrip(" ")[:1]
    if re.match(f"[{_CJK}]", before) or re.match(f"[{_CJK}]", following):
        return True
    # A mark glued to the next word ("d = 2,q = …") is a folded full-width one.
    return bool(after) and not after.isspace() and not after.isdigit()


_FULL_WIDTH = {",": "，", ":": "：", ";": "；", "?": "？", "!": "！"}


def _context(text: str, at: int, width: int = 8) -> str:
    return text[max(0, at - width) : at + width].replace("\n", " ")


def math_markup(text: str) -> list[str]:
    """Say where mathematics is written in a way a page cannot render."""
    return notation_problems(text)


# --------------------------------------------------------------------------
# Misconceptions that land on a numeric item's key


def mistakes_within_tolerance(spec: dict, answer: float, tolerance: float) -> list[str]:
    """Name the classic mistakes whose number lies within the item's tolerance."""
    found = []
    for name, value in _mistaken_values(spec).items():
        if math.isfinite(value) and abs(value - answer) <= tolerance + 1e-12:
            found.append(
                f"the mistake {name} gives {value:.6g}, within the tolerance "
                f"{tolerance:g} of the answer {answer:g}: the item cannot tell "
                "it from the right method; change the numbers"
            )
    return found


def _mistaken_values(spec: dict) -> dict[str, float]:
    """Return the asked quantity as each applicable classic mistake computes it.

    A mistake applies when it changes the asked entry, or when the item's own
    scale is the one a wrong rule would give (scale 0.5 with d = 2 is 1/d):
    then a learner with the wrong rule is told they are right.
    """
    from quizsvc.engine import AttentionInputError, attention

    quantity, index = spec["quantity"], tuple(spec["index"])
    inputs = {
        "mask": spec["mask"],
        "causal": spec["causal"],
        "scale": spec["scale"],
        "temperature": spec["temperature"],
    }
    q, k, v = (np.asarray(spec[name], dtype=float) for name in ("q", "k", "v"))
    d = q.shape[-1]
    try:
        trace = attention(q, k, v, **inputs)
    except AttentionInputError:
        return {}
    correct = _pick(trace, quantity, index)
    variants: dict[str, dict[str, Any]] = {}
    wrong_scales = {
        "no_scale": 1.0,
        "scale_by_d": 1.0 / d,
        "scale_multiplied": math.sqrt(d),
    }
    values: dict[str, float] = {}
    if d > 1:
        # With d = 1 every scale is 1: the item gives its scores ready-made.
        for name, wrong in wrong_scales.items():
            if math.isclose(wrong, trace.scale, rel_tol=1e-12):
                if spec["scale"] is not None:
                    values[name] = correct  # the item's scale is the wrong rule's
            else:
                variants[name] = {"scale": wrong}
    if spec["mask"] is not None or spec["causal"]:
        variants["mask_ignored"] = {"mask": None, "causal": False}
    tq, tk = q.shape[0], k.shape[0]
    if spec["causal"] and tq == tk and spec["mask"] is None:
        flipped = np.where(np.triu(np.ones((tq, tk), dtype=bool)), 0.0, -np.inf)
        variants["causal_flipped"] = {"mask": flipped, "causal": False}

    changed: dict[str, float] = {}
    for name, change in variants.items():
        try:
            mistaken = attention(q, k, v, **{**inputs, **change})
        except AttentionInputError:
            continue
        changed[name] = _pick(mistaken, quantity, index)
    if quantity in ("weights", "output"):
        for name, weights in _weights_mistakes(trace, q, k).items():
            chosen = weights if quantity == "weights" else weights @ v
            changed[name] = float(chosen[index])
    values.update((name, value) for name, value in changed.items() if value != correct)
    return values


def _pick(trace: Any, quantity: str, index: tuple) -> float:
    array = (
        trace.exp_unshifted()
        if quantity == "exp_unshifted"
        else getattr(trace, quantity)
    )
    return float(array[index])


@np.errstate(over="ignore", invalid="ignore", divide="ignore")
def _weights_mistakes(
    trace: Any, q: np.ndarray, k: np.ndarray
) -> dict[str, np.ndarray]:
    """Weights as the mistakes made after the scores would compute them."""
    scores = np.asarray(trace.scores)
    peak = scores.max(axis=-1, keepdims=True)
    shifted = np.exp(scores - peak)
    found = {
        "unnormalized_exp": shifted,
        "no_softmax": np.where(np.isfinite(scores), scores, 0.0),
        "hard_argmax": (
            np.arange(scores.shape[-1]) == scores.argmax(axis=-1)[:, None]
        ).astype(float),
    }
    column_peak = scores.max(axis=0, keepdims=True)
    columns = np.exp(scores - column_peak)
    found["softmax_over_queries"] = columns / columns.sum(axis=0, keepdims=True)
    if scores.shape[0] == scores.shape[1]:
        transposed = scores.T
        rows = np.exp(transposed - transposed.max(axis=-1, keepdims=True))
        found["transposed"] = rows / rows.sum(axis=-1, keepdims=True)
    hidden = np.isneginf(scores)
    if hidden.any():
        unmasked = (q @ k.T) * trace.scale / trace.temperature
        plain = np.exp(unmasked - unmasked.max(axis=-1, keepdims=True))
        plain = plain / plain.sum(axis=-1, keepdims=True)
        found["mask_after_softmax"] = np.where(hidden, 0.0, plain)
    return found
