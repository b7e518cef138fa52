"""Grade a learner's answers to a generated problem, step by step.

For each asked quantity the grader checks the learner's value against the
engine's exact one (within the problem's tolerance) and, for a step computed
from earlier ones, against what the learner's own earlier answers imply
(error carried forward). It then names the classic mistake that explains the
first wrong step, by comparing the learner's numbers with every buggy
pipeline the problem carries. Pure NumPy and standard library.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from quizsvc.parsing import (
    ExpressionError,
    MatrixFormatError,
    normalize_text,
    parse_flag,
    parse_matrix,
    parse_value,
)
from quizsvc.problems import Ask, Problem
from quizsvc.problems.pipelines import (
    RANK,
    argmax_weights,
    matmul,
    scores_as_weights,
    softmax_columns,
    softmax_rows,
    unnormalized_exp,
)

__all__ = [
    "MISCONCEPTIONS",
    "MISCONCEPTION_TITLES",
    "FormatError",
    "StepResult",
    "Verdict",
    "grade",
    "parse_answer",
]

MISCONCEPTIONS: dict[str, dict[str, str]] = {
    "no_scale": {
        "zh-CN": "看起来漏掉了缩放：分数应当是 QKᵀ 再乘 1/√d，而不是 QKᵀ 本身。",
        "en": "It looks like the scaling was left out: the scores are QKᵀ times "
        "1/√d, not QKᵀ itself.",
    },
    "scale_by_d": {
        "zh-CN": "看起来除以了 d；缩放应当除以 √d，也就是乘 head_dim**-0.5。",
        "en": "It looks like you divided by d; the scale divides by √d, i.e. "
        "multiplies by head_dim**-0.5.",
    },
    "scale_multiplied": {
        "zh-CN": "看起来把 √d 乘了上去；缩放是除以 √d，好让点积的标准差回到 1 左右。",
        "en": "It looks like you multiplied by √d; the scale divides by √d so the "
        "dot products' spread comes back to about 1.",
    },
    "softmax_over_queries": {
        "zh-CN": "看起来是按列做的归一化；softmax 沿 key 的方向进行，"
        "每个 query 那一行的"
        "权重加起来等于 1。",
        "en": "It looks like each column was normalized; the softmax runs along the "
        "keys, so each query's row of weights sums to 1.",
    },
    "no_softmax": {
        "zh-CN": "看起来直接把分数当成了权重；"
        "必须先做 softmax，权重才会非负、每行和为 1。",
        "en": "It looks like the scores were used as weights directly; the softmax "
        "must come first, so that weights are non-negative and each row sums to 1.",
    },
    "unnormalized_exp": {
        "zh-CN": "看起来算完 exp(S − m) 就停下了，没有除以这一行的总和；除以 Σ exp 之后"
        "才是权重。",
        "en": "It looks like you stopped at exp(S − m) without dividing by the row's "
        "sum; only after dividing by Σ exp are they weights.",
    },
    "mask_ignored": {
        "zh-CN": "看起来遮罩没有起作用：被遮住的格子分数应为 −∞，权重应为 0。",
        "en": "It looks like the mask was not applied: a hidden cell's score is −∞ "
        "and its weight 0.",
    },
    "mask_after_softmax": {
        "zh-CN": "看起来是先做 softmax、再把被遮住的格子清零，却没有重新归一化；"
        "遮罩应当在 "
        "softmax 之前加到分数上。",
        "en": "It looks like hidden cells were zeroed after the softmax without "
        "renormalizing; the mask belongs on the scores, before the softmax.",
    },
    "causal_flipped": {
        "zh-CN": "看起来因果遮罩的方向反了：query i 能看见 key 0…i（过去和它自己），"
        "看不见的是未来。",
        "en": "It looks like the causal mask is flipped: query i sees keys 0…i (the "
        "past and itself); what it cannot see is the future.",
    },
    "hard_argmax": {
        "zh-CN": "看起来只取了分数最大的那一行 V；attention 的输出是所有 V 行按权重的"
        "加权和，而不是只挑一个。",
        "en": "It looks like you took only the V row with the largest score; the "
        "output is a weighted sum of all V rows, not a single pick.",
    },
    "transposed": {
        "zh-CN": "数值是对的，但行列转置了："
        "每一行对应一个 query，列对应 key（或特征）。",
        "en": "The numbers are right but transposed: each row belongs to a query, "
        "the columns to keys (or features).",
    },
    "k_not_transposed": {
        "zh-CN": "看起来用的是 K 而不是 Kᵀ：分数是 QKᵀ，也就是每个 query 与每个 key "
        "做点积。",
        "en": "It looks like K was used where Kᵀ was needed: the scores are QKᵀ, "
        "the dot product of every query with every key.",
    },
}

# Short names of the misconceptions, for headings (the ids stay in the API,
# exports and tooltips).
MISCONCEPTION_TITLES: dict[str, dict[str, str]] = {
    "no_scale": {"zh-CN": "漏掉了缩放 1/√d", "en": "Scale 1/√d left out"},
    "scale_by_d": {"zh-CN": "除以 d 而不是 √d", "en": "Divided by d, not √d"},
    "scale_multiplied": {"zh-CN": "乘了 √d 而不是除以", "en": "Multiplied by √d"},
    "softmax_over_queries": {
        "zh-CN": "按列（沿 query）做了 softmax",
        "en": "Softmax down the columns (over queries)",
    },
    "no_softmax": {"zh-CN": "把分数直接当权重", "en": "Scores used as weights"},
    "unnormalized_exp": {
        "zh-CN": "exp 之后没有归一化",
        "en": "exp without normalizing",
    },
    "mask_ignored": {"zh-CN": "遮罩没有起作用", "en": "Mask not applied"},
    "mask_after_softmax": {
        "zh-CN": "在 softmax 之后才加遮罩",
        "en": "Mask applied after the softmax",
    },
    "causal_flipped": {"zh-CN": "因果遮罩方向反了", "en": "Causal mask flipped"},
    "hard_argmax": {"zh-CN": "只取了最大的那一个", "en": "Took only the largest"},
    "transposed": {"zh-CN": "行列转置了", "en": "Rows and columns swapped"},
    "k_not_transposed": {"zh-CN": "用了 K 而不是 Kᵀ", "en": "K used instead of Kᵀ"},
}

_ALL_CORRECT = {
    "zh-CN": "全部正确：每一步都在允许的误差之内。",
    "en": "All correct: every step is within the tolerance.",
}


@dataclass(frozen=True)
class FormatError:
    """An answer that could not be read; it is not an attempt and costs nothing."""

    quantity: str
    message: Mapping[str, str]
    row: int | None = None
    col: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable view."""
        return {
            "quantity": self.quantity,
            "row": self.row,
            "col": self.col,
            "message": dict(self.message),
        }


class StepResult(NamedTuple):
    """How one asked quantity was graded."""

    # A named tuple rather than a frozen dataclass: a grade builds one per
    # step, and a tuple is built several times faster.

    name: str
    answered: bool
    correct: bool
    score: float
    ok: Any = None
    consistent_with_previous: bool | None = None
    shape_error: Mapping[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable view."""
        return {
            "name": self.name,
            "answered": self.answered,
            "correct": self.correct,
            "score": self.score,
            "ok": self.ok,
            "consistent_with_previous": self.consistent_with_previous,
            "shape_error": dict(self.shape_error) if self.shape_error else None,
        }


class Verdict(NamedTuple):
    """The grade of one submission: per step, overall, and the diagnosis."""

    correct: bool
    score: float
    steps: tuple[StepResult, ...]
    misconception: str | None
    misconception_step: str | None
    feedback: Mapping[str, str]
    format_errors: tuple[FormatError, ...]

    @property
    def attempt(self) -> bool:
        """False when a format error means the submission should not count."""
        return not self.format_errors

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable view."""
        return {
            "correct": self.correct,
            "score": self.score,
            "attempt": self.attempt,
            "steps": [s.to_dict() for s in self.steps],
            "misconception": self.misconception,
            "misconception_step": self.misconception_step,
            "feedback": dict(self.feedback),
            "format_errors": [e.to_dict() for e in self.format_errors],
        }


# ---------------------------------------------------------------------------
# Reading answers.


def _size(shape: tuple[int, ...]) -> str:
    return "×".join(str(n) for n in shape) if shape else "1"


def parse_answer(
    value: Any,
    expected_shape: tuple[int, ...],
    *,
    name: str = "answer",
    number=parse_value,
) -> np.ndarray | FormatError:
    """Read a typed or JSON answer into an array of the expected shape.

    A single row or column is accepted either way round for a vector; a matrix
    typed transposed is returned as typed (the grader says so); any other
    shape, or text that is not a matrix, gives a `FormatError`.
    """
    expected_shape = tuple(expected_shape)
    if isinstance(value, np.ndarray) and value.dtype.kind in "fiu":
        array = value.astype(np.float64)
        if not expected_shape and array.size == 1:
            return array.reshape(())
    elif not expected_shape:
        return _parse_scalar(value, name, number)
    else:
        try:
            array = parse_matrix(value, name, number, width=expected_shape[-1])
        except MatrixFormatError as exc:
            return FormatError(name, exc.messages, exc.row, exc.col)
        except RecursionError:
            return FormatError(
                name,
                {
                    "zh-CN": f"{name}：嵌套太深，无法读取",
                    "en": f"{name}: nested too deeply to read",
                },
            )
    return (
        array
        if array.shape == expected_shape
        else _fit_shape(array, expected_shape, name)
    )


def _parse_scalar(value: Any, name: str, number) -> np.ndarray | FormatError:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return np.array(float(value))
    if isinstance(value, str) and not value.lstrip().startswith("["):
        try:
            return np.array(number(value))
        except ExpressionError as exc:
            return FormatError(
                name,
                {
                    "zh-CN": f"{name}：“{value.strip()[:40]}”不是数字（"
                    f"{exc.messages['zh-CN']}）",
                    "en": f"{name}: {value.strip()[:40]!r} is not a number "
                    f"({exc.messages['en']})",
                },
            )
        except (ValueError, TypeError, OverflowError):
            return FormatError(
                name,
                {
                    "zh-CN": f"{name}：“{value.strip()[:40]}”不是数字",
                    "en": f"{name}: {value.strip()[:40]!r} is not a number",
                },
            )
    try:
        array = parse_matrix(value, name, number)
    except MatrixFormatError as exc:
        return FormatError(name, exc.messages, exc.row, exc.col)
    except RecursionError:
        return FormatError(
            name,
            {
                "zh-CN": f"{name}：嵌套太深，无法读取",
                "en": f"{name}: nested too deeply to read",
            },
        )
    if array.size != 1:
        return FormatError(
            name,
            {
                "zh-CN": f"{name}：这里要填一个数，却得到 {_size(array.shape)} 个",
                "en": f"{name}: expected a single number, "
                f"got {_size(array.shape)} values",
            },
        )
    return array.reshape(())


def _fit_shape(
    array: np.ndarray, expected: tuple[int, ...], name: str
) -> np.ndarray | FormatError:
    # Called only for a shape that differs from `expected`; a scalar asked for
    # and one given were settled by the caller.
    if (
        len(expected) == 2
        and 1 in expected
        and array.size == max(expected)
        and 1 in array.shape
    ):
        return array.reshape(expected)  # a vector typed as a row or a column
    if expected and array.shape == expected[::-1]:
        return array  # transposed: graded, and the grader says so
    return FormatError(
        name,
        {
            "zh-CN": f"{name}：应当是 {_size(expected)}（"
            f"{_rows_of(expected, 'zh-CN')}），"
            f"却得到 {_size(array.shape)}",
            "en": f"{name}: expected {_size(expected)} ({_rows_of(expected, 'en')}), "
            f"got {_size(array.shape)}",
        },
    )


def _rows_of(shape: tuple[int, ...], lang: str) -> str:
    if len(shape) != 2:
        return "一个数" if lang == "zh-CN" else "one number"
    rows, cols = shape
    if lang == "zh-CN":
        return f"{rows} 行，每行 {cols} 个数"
    return f"{rows} row{'s' if rows != 1 else ''} of {cols}"


_AXIS_ALIASES = {
    "batch": ("batch", "b", "bs", "batch_size", "样本", "批"),
    "heads": ("heads", "head", "h", "n_heads", "num_heads", "头", "头数"),
    "Tq": ("tq", "t_q", "lq", "query", "queries", "query长度", "q长度"),
    "Tk": ("tk", "t_k", "lk", "key", "keys", "key长度", "k长度"),
    "d": ("d", "dk", "d_k", "head_dim", "dim"),
    "dv": ("dv", "d_v"),
}
_ALIAS_TO_AXIS = {
    alias: axis for axis, names in _AXIS_ALIASES.items() for alias in names
}


def _parse_shape(
    value: Any, ask: Ask, sizes: Mapping[str, int]
) -> np.ndarray | FormatError:
    expected = ask.shape[0]
    if isinstance(value, (list, tuple, np.ndarray)):
        tokens = [
            str(t) for t in (value.tolist() if isinstance(value, np.ndarray) else value)
        ]
    else:
        text = normalize_text(str(value)).strip().lower()
        tokens = [t for t in re.split(r"[\s,;×x*()\[\]]+", text) if t]
    numbers = []
    for position, token in enumerate(tokens, start=1):
        token = token.strip().lower()
        axis = _ALIAS_TO_AXIS.get(token)
        if axis is not None and axis in sizes:
            numbers.append(float(sizes[axis]))
            continue
        try:
            number = float(token)
        except ValueError:
            number = math.nan
        if not number.is_integer() or number < 1:
            return FormatError(
                ask.name,
                {
                    "zh-CN": f"{ask.name}：第 {position} 个维度“{token}”不是正整数，"
                    "也不是轴名（batch、heads、Tq、Tk、d、dv）",
                    "en": f"{ask.name}: dimension {position}, {token!r}, is neither a "
                    "positive whole number nor an axis name (batch, heads, Tq, Tk, "
                    "d, dv)",
                },
                None,
                position,
            )
        numbers.append(number)
    if len(numbers) != expected:
        return FormatError(
            ask.name,
            {
                "zh-CN": f"{ask.name}：形状应当有 {expected} 个维度，"
                f"例如 [2, 8, 5, 7]；却得到 {len(numbers)} 个",
                "en": f"{ask.name}: a shape here has {expected} dimensions, e.g. "
                f"[2, 8, 5, 7]; got {len(numbers)}",
            },
        )
    return np.array(numbers)


def _parse_choice(value: Any, ask: Ask) -> np.ndarray | FormatError:
    text = normalize_text(str(value)).strip().lower()
    for index, choice in enumerate(ask.choices):
        if (
            text == choice.value.lower()
            or any(text == label.lower() for label in choice.label.values())
            or text in _AXIS_ALIASES.get(choice.value, ())
        ):
            return np.array(float(index))
    options = ", ".join(c.value for c in ask.choices)
    return FormatError(
        ask.name,
        {
            "zh-CN": f"{ask.name}：“{text[:40]}”不是选项之一；可选：{options}",
            "en": f"{ask.name}: {text[:40]!r} is not one of the options: {options}",
        },
    )


def _parse_for(problem: Problem, ask: Ask, value: Any) -> np.ndarray | FormatError:
    try:
        form = ask.format
        if form == "matrix" or form == "number":  # the usual case first
            return parse_answer(value, ask.shape, name=ask.name)
        if form == "choice":
            return _parse_choice(value, ask)
        if form == "shape":
            return _parse_shape(value, ask, problem.context.get("sizes", {}))
        # boolean_matrix, the one format left: 0/1 or true/false per cell.
        return parse_answer(value, ask.shape, name=ask.name, number=parse_flag)
    except (ValueError, TypeError, OverflowError, RecursionError, MemoryError) as exc:
        # A last guard: whatever was typed, grading answers with a message.
        return FormatError(
            ask.name,
            {
                "zh-CN": f"{ask.name}：无法读取（{exc}）",
                "en": f"{ask.name}: cannot be read ({exc})",
            },
        )


def _blank(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, (list, tuple)):
        return len(value) == 0
    return False


# ---------------------------------------------------------------------------
# Error carried forward: what a step should be, given the learner's own
# earlier answers.


def _derive(
    problem: Problem, ask: Ask, parsed: Mapping[str, np.ndarray]
) -> np.ndarray | None:
    op, *sources = ask.derive
    if any(s not in parsed for s in sources):
        return None
    first = parsed[sources[0]]
    if op == "softmax":
        # A row that sees nothing has no weights (NaN).
        return softmax_rows(first) if first.ndim == 2 else None
    if op == "matmul_v":
        v = problem.context["V"]
        return first @ v if first.ndim == 2 and first.shape[1] == v.shape[0] else None
    if op == "mask_scores":
        raw = _raw_scores(problem)
        return np.where(first > 0.5, raw, -np.inf) if first.shape == raw.shape else None
    if op == "same_shape":
        return first
    if op == "output_shape":
        return np.concatenate([first[:-1], [float(problem.context["dv"])]])
    if op == "sharper":
        with np.errstate(all="ignore"):
            peaks = [
                np.nanmax(parsed[s]) if not np.isnan(parsed[s]).all() else math.nan
                for s in sources
            ]
        if (
            any(math.isnan(p) for p in peaks)
            or abs(peaks[0] - peaks[1]) <= problem.tolerance
        ):
            return None
        return np.array(0.0 if peaks[0] > peaks[1] else 1.0)
    raise ValueError(f"unknown derivation {op!r}")  # pragma: no cover


def _raw_scores(problem: Problem) -> np.ndarray:
    """QKᵀ/√d without any mask."""
    if "mask_ignored" in problem.names:  # that pipeline's scores are exactly these
        return problem.stacks["S"][problem.names.index("mask_ignored")]
    q, k = problem.given["Q"], problem.given["K"]
    return (q @ k.T) / math.sqrt(q.shape[1])


def _variants(
    problem: Problem, ask: Ask, parsed: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Each mistake applied to the learner's own previous step."""
    op, *sources = ask.derive
    known = set(problem.misconceptions)
    if any(s not in parsed for s in sources) or parsed[sources[0]].ndim != 2:
        return {}
    previous = parsed[sources[0]]
    out: dict[str, np.ndarray] = {}
    if op == "softmax":
        makers = {
            "softmax_over_queries": softmax_columns,
            "no_softmax": scores_as_weights,
            "unnormalized_exp": unnormalized_exp,
            "hard_argmax": argmax_weights,
        }
        for name, make in makers.items():
            if name in known:
                out[name] = make(previous)
        visible = problem.context.get("visible")
        if (
            "mask_after_softmax" in known
            and visible is not None
            and visible.shape == previous.shape
        ):
            out["mask_after_softmax"] = softmax_rows(previous) * visible
    elif op == "matmul_v" and "hard_argmax" in known:
        v = problem.context["V"]
        if previous.shape[1] == v.shape[0]:
            out["hard_argmax"] = matmul(argmax_weights(previous), v)
    return out


# ---------------------------------------------------------------------------
# Grading.


class _Step(NamedTuple):
    ask: Ask
    value: np.ndarray | None
    result: StepResult
    matches: list[bool] | None  # per pipeline (names, then virtual): agrees


def grade(problem: Problem, answers: Mapping[str, Any]) -> Verdict:
    """Grade the learner's answers (name → text, JSON list or number)."""
    return _grade(problem, answers)


# Learners type inf, NaN and huge numbers: arithmetic on them is expected.
@np.errstate(all="ignore")
def _grade(problem: Problem, answers: Mapping[str, Any]) -> Verdict:
    format_errors: list[FormatError] = []
    if type(answers) is not dict and not isinstance(answers, Mapping):
        answers = {}
        format_errors.append(
            FormatError(
                "answers",
                {
                    "zh-CN": '答案应当是“名称 → 值”的对应表，例如 {"S": "[[1, 0]]"}',
                    "en": "answers must map each quantity's name to a value, e.g. "
                    '{"S": "[[1, 0]]"}',
                },
            )
        )
    names = [a.name for a in problem.ask]
    # Usually every key names an asked quantity: one set check says so.
    unknown = () if problem.context["grading"]["asked"].issuperset(answers) else answers
    for key in unknown:
        if key not in names:
            format_errors.append(
                FormatError(
                    str(key),
                    {
                        "zh-CN": f"这道题没有“{key}”；要填的是：{'、'.join(names)}",
                        "en": f"this problem has no quantity {key!r}; it asks for "
                        f"{', '.join(names)}",
                    },
                )
            )
    parsed: dict[str, np.ndarray] = {}
    for ask in problem.ask:
        raw = answers.get(ask.name)
        if _blank(raw):
            continue
        value = _parse_for(problem, ask, raw)
        if isinstance(value, FormatError):
            format_errors.append(value)
        else:
            parsed[ask.name] = value

    steps, all_right = _grade_steps(problem, parsed)
    if all_right:
        results = _all_right(problem)
        if not format_errors:
            return Verdict(True, 1.0, results, None, None, dict(_ALL_CORRECT), ())
        steps = [
            _Step(ask, parsed[ask.name], result, None)
            for ask, result in zip(problem.ask, results, strict=True)
        ]
    misconception, where = (
        (None, None) if format_errors else _diagnose(problem, steps, parsed)
    )
    correct = not format_errors and all(s.result.correct for s in steps)
    score = (
        1.0 if correct else min(sum(s.result.score for s in steps) / len(steps), 1.0)
    )
    return Verdict(
        correct=correct,
        score=score,
        steps=tuple(s.result for s in steps),
        misconception=misconception,
        misconception_step=where,
        feedback=_feedback(problem, steps, misconception, where, format_errors),
        format_errors=tuple(format_errors),
    )


def _agreement(a: np.ndarray, b: np.ndarray, tolerance) -> tuple[np.ndarray, bool]:
    """Cell-wise agreement as `_close` gives it, and whether every cell agrees."""
    near = np.abs(a - b) <= tolerance
    # count_nonzero: a third of the cost of .all() on arrays this small.
    if np.count_nonzero(near) == near.size:  # the usual case: all finite, near
        return near, True
    # Only a cell holding ±inf or NaN can still agree (the same on both
    # sides); finite sums on both sides say there is none.
    if math.isfinite(float(a.sum()) + float(b.sum())):
        return near, False
    near |= a == b  # the same ±inf on both sides (a hidden cell's -inf)
    if np.count_nonzero(near) == near.size:
        return near, True
    near |= np.isnan(a) & np.isnan(b)  # NaN on both sides (a row with no weights)
    return near, bool(np.count_nonzero(near) == near.size)


def _close(a: np.ndarray, b: np.ndarray, tolerance) -> np.ndarray:
    """Cell-wise agreement within tolerance; ±inf and NaN must match exactly."""
    return _agreement(a, b, tolerance)[0]


def _grade_steps(
    problem: Problem, parsed: Mapping[str, np.ndarray]
) -> tuple[list[_Step], bool]:
    """Grade every step against every pipeline in a few whole-array operations.

    Also says whether every step is right: the usual case, answered at once
    (with no steps: `_all_right` has their results).
    """
    layout = problem.context["grading"]
    flat, spans = layout["flat"], layout["spans"]
    tolerance = layout["cell_tolerance"]
    count = flat.shape[0]
    fits = [a.name in parsed and parsed[a.name].shape == a.shape for a in problem.ask]
    # An answer of another shape (or none) stands in as NaN and matches nothing
    # here; `_off_shape_step` grades a transposed one.
    answer = np.concatenate(
        [
            parsed[a.name].ravel() if fit else np.full(hi - lo, np.nan)
            for a, fit, (lo, hi) in zip(problem.ask, fits, spans, strict=True)
        ]
    )
    near = np.abs(answer - flat) <= tolerance  # ±inf or NaN in flat: no match
    # One sum tells the cases apart: finite when every cell is (the usual
    # case), NaN when some cell may be NaN, ±inf when some is infinite.
    total = float(answer.sum())
    if not math.isfinite(total):
        near |= answer == flat  # ±inf on both sides
        if math.isnan(total):
            near |= np.isnan(answer) & np.isnan(flat)
        for fit, (lo, hi) in zip(fits, spans, strict=True):
            if not fit:
                near[:, lo:hi] = False
    if all(fits) and np.count_nonzero(near[0]) == near.shape[1]:
        return [], True
    for lo, hi in layout["never"]:
        near[-1, lo:hi] = False
    match = np.logical_and.reduceat(near, layout["starts"], axis=1).T.tolist()
    # Python lists from here on: a step has a handful of cells, and list
    # slices cost less than a NumPy call per step.
    right_cells = near[0].tolist()
    right = {a.name: fits[i] and match[i][0] for i, a in enumerate(problem.ask)}
    consistent, carried = _carried_forward(problem, parsed, right, tolerance)

    steps: list[_Step] = []
    for i, ask in enumerate(problem.ask):
        x = parsed.get(ask.name)
        if x is None:
            result = StepResult(ask.name, False, False, 0.0)
            steps.append(_Step(ask, None, result, None))
            continue
        correct = right[ask.name]
        agrees = consistent.get(i)
        if not fits[i]:
            steps.append(_off_shape_step(problem, ask, x, agrees, count))
            continue
        lo, hi = spans[i]
        cells = right_cells[lo:hi]
        if i in carried and not correct:
            # Error carried forward: a cell that agrees with the learner's own
            # earlier numbers counts as right.
            cells = [a or b for a, b in zip(cells, carried[i], strict=True)]
        if correct or agrees:
            score = 1.0
        elif ask.format == "choice":
            score = 0.0
        else:
            score = sum(cells) / len(cells)
        result = StepResult(
            ask.name, True, correct, score, _rows(cells, ask.shape), agrees
        )
        steps.append(_Step(ask, x, result, match[i]))
    return steps, False


def _rows(cells: list[bool], shape: tuple[int, ...]) -> Any:
    """Per-cell marks in the answer's shape: rows of bools, a list, or one bool."""
    if len(shape) == 2:
        width = shape[1]
        return [cells[r * width : (r + 1) * width] for r in range(shape[0])]
    return cells if shape else cells[0]


def _carried_forward(
    problem: Problem,
    parsed: Mapping[str, np.ndarray],
    right: Mapping[str, bool],
    tolerance: np.ndarray,
) -> tuple[dict[int, bool | None], dict[int, list[bool]]]:
    """For each answered derived step: does it follow from the learner's inputs?

    Returns the verdict per step index (None when it cannot be derived) and,
    for steps compared cell by cell, which cells agree (flat).
    """
    consistent: dict[int, bool | None] = {}
    carried: dict[int, list[bool]] = {}
    spans = problem.context["grading"]["spans"]
    for i, ask in enumerate(problem.ask):
        x = parsed.get(ask.name)
        if not ask.derive or x is None:
            continue
        if right[ask.name] and all(right[s] for s in ask.depends_on):
            consistent[i] = True  # right, from right inputs: nothing to carry
            continue
        derived = _derive(problem, ask, parsed)
        if derived is None:
            consistent[i] = None
        elif derived.shape != x.shape:
            consistent[i] = False
        else:
            # Every cell of one step has the same tolerance.
            near, consistent[i] = _agreement(x, derived, tolerance[spans[i][0]])
            carried[i] = near.ravel().tolist()
    return consistent, carried


def _all_right(problem: Problem) -> tuple[StepResult, ...]:
    """Every step right: full marks, each derived step consistent by construction."""
    results = []
    for ask in problem.ask:
        shape = ask.shape
        if len(shape) == 2:
            ok: Any = [[True] * shape[1] for _ in range(shape[0])]
        else:
            ok = [True] * shape[0] if shape else True
        consistent = True if ask.derive else None
        results.append(StepResult(ask.name, True, True, 1.0, ok, consistent))
    return tuple(results)


def _off_shape_step(
    problem: Problem, ask: Ask, x: np.ndarray, consistent: bool | None, count: int
) -> _Step:
    """Grade an answer typed transposed (the only other shape parsing lets by)."""
    truth = problem.answer[ask.name]
    matches = [False] * count
    if problem.virtual and ask.transposable and x.shape == truth.T.shape:
        matches[-1] = bool(_close(x, truth.T, problem.tolerance).all())
    message = {
        "zh-CN": f"{ask.label['zh-CN']} 应当是 {_size(truth.shape)}，却得到 "
        f"{_size(x.shape)}——是不是写成转置了？",
        "en": f"The {ask.label['en']}: expected {_size(truth.shape)}, got "
        f"{_size(x.shape)} — transposed?",
    }
    score = 1.0 if consistent else 0.0
    result = StepResult(ask.name, True, False, score, None, consistent, message)
    return _Step(ask, x, result, matches)


def _diagnose(
    problem: Problem, steps: list[_Step], parsed
) -> tuple[str | None, str | None]:
    """Name the mistake behind the first wrong step, or one made after it."""
    wrong = [
        i for i, s in enumerate(steps) if s.result.answered and not s.result.correct
    ]
    if not wrong:
        return None, None
    first = wrong[0]
    names = (*problem.names, *problem.virtual)
    candidates = [i for i, hit in enumerate(steps[first].matches) if hit and i > 0]
    if candidates:
        # The pipeline that explains the most steps; ties go to catalog order.
        rows = [s.matches for s in steps if s.matches is not None]
        counts = list(map(sum, zip(*rows, strict=True)))
        best = max(candidates, key=lambda i: (counts[i], -RANK[names[i]]))
        return names[best], steps[first].ask.name
    # No whole pipeline explains it: look for a mistake made on top of the
    # learner's own earlier (wrong) numbers.
    tolerance = problem.tolerance
    for i in wrong:
        step = steps[i]
        if step.ask.derive is None or step.result.consistent_with_previous:
            continue
        for name, value in _variants(problem, step.ask, parsed).items():
            if (
                value.shape == step.value.shape
                and _close(step.value, value, tolerance).all()
            ):
                return name, step.ask.name
        derived = _derive(problem, step.ask, parsed)
        if (
            step.ask.transposable
            and derived is not None
            and "transposed" in problem.virtual
            and derived.T.shape == step.value.shape
            and _close(step.value, derived.T, tolerance).all()
        ):
            return "transposed", step.ask.name
    for i in wrong:
        if _columns_normalized_single_query(problem, steps[i]):
            return "softmax_over_queries", steps[i].ask.name
    return None, None


def _columns_normalized_single_query(problem: Problem, step: _Step) -> bool:
    """Whether a one-query weights row is all ones on the keys it sees.

    With a single query, normalizing each column divides every visible cell by
    itself; problems leave this mistake out of their candidates (its pipeline
    needs more than one query), so it is recognized here.
    """
    truth = problem.answer.get(step.ask.name)
    value = step.value
    if truth is None or value is None or value.shape != truth.shape:
        return False
    if truth.ndim != 2 or truth.shape[0] != 1:
        return False
    with np.errstate(invalid="ignore"):
        sums = np.nansum(truth, axis=-1)
    visible = np.isfinite(truth) & (truth > 0)
    if visible.sum() < 2 or not np.allclose(sums, 1.0):
        return False  # not a row of weights, or one visible key: nothing to see
    return bool(np.all(np.abs(value[visible] - 1.0) <= problem.tolerance))


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
