"""The one or two sentences a learner reads after a grade."""

from __future__ import annotations

import numpy as np

from quizsvc.grading import carried
from quizsvc.grading.messages import _ALL_CORRECT, MISCONCEPTIONS
from quizsvc.grading.verdict import FormatError, _Step
from quizsvc.problems import Problem


def _rounded_to(problem: Problem, step: _Step) -> int | None:
    """The decimals a wrong step was rounded to, when rounding is its only fault.

    Every cell outside the tolerance must equal the right value rounded (or cut)
    to fewer decimals than the problem asks for; the most such decimals is said.
    """
    truth = problem.answer.get(step.ask.name)
    value = step.value
    if truth is None or value is None or value.shape != np.shape(truth):
        return None
    truth = np.asarray(truth, dtype=float)
    if carried.PRUNE and _not_a_rounding(truth, value, problem):
        return None
    finite = np.isfinite(truth)
    if not np.array_equal(finite, np.isfinite(value)):
        return None
    if not np.array_equal(truth[~finite], value[~finite], equal_nan=True):
        return None
    exact, typed = truth[finite], value[finite]
    off = np.abs(typed - exact) > problem.tolerance
    if not off.any():
        return None
    exact, typed = exact[off], typed[off]
    fewest = np.full(exact.shape, -1)
    for decimals in range(problem.precision - 1, -1, -1):
        unit = 10.0**-decimals
        rounded = np.round(exact, decimals)
        cut = np.trunc(exact / unit) * unit
        near = (np.abs(typed - rounded) < 1e-9) | (np.abs(typed - cut) < 1e-9)
        fewest = np.where(near, decimals, fewest)
    if (fewest < 0).any():
        return None
    return int(fewest.max())


def _not_a_rounding(truth: np.ndarray, value: np.ndarray, problem: Problem) -> bool:
    """True when no cell outside the tolerance can be a rounding of the truth.

    A shortcut for `_rounded_to`, which then says None anyway: a rounded or
    cut value is less than 1 away from the exact one, and has at most
    `precision - 1` decimals.
    """
    # (The grader runs with NumPy's warnings off: inf - inf is a quiet NaN.)
    gap = np.abs(value - truth)
    off = gap > problem.tolerance  # NaN (the same ±inf or NaN) is not off
    if problem.precision < 1 or not np.count_nonzero(off):
        return True
    if np.count_nonzero(gap[off] > 1.0 + 1e-6):
        return True
    # In units of the last decimal allowed, a rounding is a whole number.
    scaled = value[off] * 10.0 ** (problem.precision - 1)
    slack = 1e-8 * 10.0 ** (problem.precision - 1)
    return bool(np.count_nonzero(np.abs(scaled - np.rint(scaled)) > slack))


def _feedback(
    problem: Problem,
    steps: list[_Step],
    misconception: str | None,
    where: str | None,
    format_errors: list[FormatError],
) -> dict[str, str]:
    """One or two sentences pointing at the first wrong step."""
    if format_errors:
        first = format_errors[0].message
        return {
            "zh-CN": f"{first['zh-CN']}。这次不算作答，改好格式再提交即可。",
            "en": f"{first['en']}. This does not count as an attempt; fix the format "
            "and submit again.",
        }
    if all(s.result.correct for s in steps):
        return dict(_ALL_CORRECT)
    if not any(s.result.answered for s in steps):
        return {"zh-CN": "还没有填写任何答案。", "en": "Nothing has been answered yet."}
    index, first = next((i, s) for i, s in enumerate(steps) if not s.result.correct)
    label = first.ask.label
    if not first.result.answered:
        return {
            "zh-CN": f"{label['zh-CN']} 还没有填写。",
            "en": f"No answer yet for the {label['en']}.",
        }
    explained = misconception is not None and where == first.ask.name
    if first.result.shape_error:
        opening = dict(first.result.shape_error)
        if explained:
            explanation = MISCONCEPTIONS[misconception]
            opening = {
                "zh-CN": opening["zh-CN"] + explanation["zh-CN"],
                "en": f"{opening['en']} {explanation['en']}",
            }
    elif explained:
        explanation = MISCONCEPTIONS[misconception]
        opening = {
            "zh-CN": f"第一个出错的步骤是{label['zh-CN']}。{explanation['zh-CN']}",
            "en": f"The first wrong step is the {label['en']}. {explanation['en']}",
        }
    elif first.ask.format == "choice":
        opening = {
            "zh-CN": f"“{label['zh-CN']}”选错了。",
            "en": f"The answer to “{label['en']}” is not right.",
        }
    elif (decimals := _rounded_to(problem, first)) is not None:
        opening = {
            "zh-CN": f"{label['zh-CN']} 算对了，只是只保留了 {decimals} 位小数；"
            f"这里要求保留 {problem.precision} 位，请多写几位再提交。",
            "en": f"The {label['en']} is computed right but kept only {decimals} "
            f"decimals; {problem.precision} are asked for, so write more digits.",
        }
    else:
        cells = np.ravel(first.result.ok) if first.result.ok is not None else []
        total, bad = len(cells), len(cells) - int(sum(cells))
        opening = {
            "zh-CN": f"第一个出错的步骤是{label['zh-CN']}：{bad}/{total} 个格子超出了"
            "允许"
            "的误差，请重新检查这一步。",
            "en": f"The first wrong step is the {label['en']}: {bad} of {total} cells "
            "are outside the tolerance; recheck that step.",
        }
    later = steps[index + 1 :]
    if misconception is not None and not explained:
        explanation = MISCONCEPTIONS[misconception]
        other = problem.asked(where).label
        english = explanation["en"][0].lower() + explanation["en"][1:]
        closing = {
            "zh-CN": f"另外，在{other['zh-CN']} 这一步：{explanation['zh-CN']}",
            "en": f"Also, in the {other['en']}: {english}",
        }
    elif any(
        s.result.consistent_with_previous and not s.result.correct for s in later
    ) and all(
        s.result.correct or s.result.consistent_with_previous
        for s in later
        if s.result.answered
    ):
        # Only when every later step holds up: "your later steps follow" must
        # not be said of an output that is wrong on its own terms too.
        closing = {
            "zh-CN": f"后面的步骤与你自己算出的{label['zh-CN']} 前后一致，已经给分。",
            "en": f"Your later steps follow correctly from your own {label['en']} "
            "and earn their credit.",
        }
    else:
        return opening
    # Chinese sentences follow each other without a space; English ones with one.
    return {
        "zh-CN": opening["zh-CN"] + closing["zh-CN"],
        "en": f"{opening['en']} {closing['en']}",
    }
