"""Kinds built on given scores or weights: softmax, weights, output,
temperature, shift invariance, uniform."""

from __future__ import annotations

import functools

import numpy as np

from quizsvc.problems.draws import Draws
from quizsvc.problems.kinds.base import (
    _MAX_REDRAWS,
    Draft,
    Level,
    _by_level,
    _entries,
    _matrix_ask,
    _partial_visibility,
    _precision_note,
    _untied_scores,
    _values,
)
from quizsvc.problems.model import DEFAULT_PRECISION, Ask, Choice, tolerance_for
from quizsvc.problems.pipelines import (
    Degenerate,
    Runs,
    output_pipelines,
    score_pipelines,
)


def _score_matrix(
    draws: Draws, level: Level, tq: int, tk: int, masked: bool
) -> np.ndarray:
    """A score matrix with this level's entries, some cells -inf if `masked`."""
    scores = _entries(draws, level, (tq, tk))
    if masked:
        scores = np.where(_partial_visibility(draws, tq, tk), scores, -np.inf)
    return scores


def build_softmax_row(draws: Draws, level: Level) -> Draft:
    """One query's scores → its weights."""
    tk = _by_level(draws, level, {1: (2,), 2: (2, 3), 3: (3, 4)})
    masked = tk > 2 and draws.chance(level.mask_chance)
    s = _untied_scores(draws, level, _score_matrix(draws, level, 1, tk, masked))
    runs = score_pipelines(
        s[None],
        None,
        candidates=("no_softmax", "unnormalized_exp", "hard_argmax"),
        ties_checked=True,
    )
    p = DEFAULT_PRECISION
    note = {
        "zh-CN": "分数为 −∞ 的 key 被遮住，权重为 0。" if masked else "",
        "en": " A key whose score is −∞ is masked and gets weight 0." if masked else "",
    }
    prompt = {
        "zh-CN": f"s 是一个 query 对 {tk} 个 key 的分数。"
        "请用 softmax 把它变成注意力权重 a："
        f"先减去最大值，再取指数，最后除以总和。{note['zh-CN']}"
        f"{_precision_note(p)['zh-CN']}。",
        "en": f"s holds one query's scores for {tk} keys. Turn them into attention "
        "weights a with the softmax: subtract the largest score, exponentiate, "
        f"then divide by the sum.{note['en']} Give the weights a "
        f"{_precision_note(p)['en']}.",
    }
    ask = (_matrix_ask("a", (1, tk), label={"zh-CN": "权重 a", "en": "weights a"}),)
    return Draft(
        {"s": s}, ask, prompt, Runs(runs.names, {"a": runs.values["weights"][:, 0]})
    )


def build_weights(draws: Draws, level: Level) -> Draft:
    """S → A, row by row."""
    tq, tk = draws.choice(level.tq), draws.choice(level.tk)
    s = _score_matrix(draws, level, tq, tk, draws.chance(level.mask_chance))
    s = _untied_scores(draws, level, s)
    runs = score_pipelines(
        s[None],
        None,
        candidates=(
            "softmax_over_queries",
            "no_softmax",
            "unnormalized_exp",
            "hard_argmax",
        ),
        ties_checked=True,
    )
    p = DEFAULT_PRECISION
    note = {
        "zh-CN": "为 −∞ 的格子被遮住，权重为 0。" if np.isneginf(s).any() else "",
        "en": " A −∞ cell is masked and gets weight 0." if np.isneginf(s).any() else "",
    }
    prompt = {
        "zh-CN": f"已知分数矩阵 S（{tq}×{tk}，每一行对应一个 query）。请对每一行分别做 "
        f"softmax，得到权重 A。{note['zh-CN']}{_precision_note(p)['zh-CN']}。",
        "en": f"S is a {tq}×{tk} score matrix, one row per query. Apply the softmax to "
        f"each row separately to get the weights A.{note['en']} Give A "
        f"{_precision_note(p)['en']}.",
    }
    runs = Runs(runs.names, {"A": runs.values["weights"][:, 0]})
    return Draft({"S": s}, (_matrix_ask("A", (tq, tk)),), prompt, runs, transposed=True)


_WEIGHT_STEPS = {1: 4, 2: 10, 3: 20}


def build_output(draws: Draws, level: Level) -> Draft:
    """O = AV from weights that are easy to multiply by hand."""
    number = level.number
    tq, tk = draws.choice(level.tq), draws.choice(level.tk)
    dv = draws.choice(level.dv)
    steps = _WEIGHT_STEPS[number]
    rows = []
    for _ in range(tq):
        # Each row: Tk parts of `steps` (quarters, tenths, twentieths) summing
        # to one, its largest part unique so "the V row with the largest
        # weight" is well defined. Every part is at least one step: a softmax
        # never gives a weight of exactly 0 or 1, and a row with a 1 would make
        # the output one V row, the "pick" the lesson says attention is not.
        for _attempt in range(_MAX_REDRAWS):
            cuts = sorted(draws.sample(range(1, steps), tk - 1))
            parts = [b - a for a, b in zip([0, *cuts], [*cuts, steps], strict=True)]
            if parts.count(max(parts)) == 1:
                break
        else:
            raise Degenerate("the largest weight stays tied")
        rows.append([p / steps for p in parts])
    a = np.array(rows, dtype=np.float64)
    v = _values(draws, level, tk, dv)
    runs = output_pipelines(a, v, candidates=("hard_argmax",))
    p = DEFAULT_PRECISION
    prompt = {
        "zh-CN": f"已知注意力权重 A（{tq}×{tk}，每一行的和为 1）"
        f"和值矩阵 V（{tk}×{dv}）。"
        f"请计算输出 O = AV，{_precision_note(p)['zh-CN']}。",
        "en": f"A holds the attention weights ({tq}×{tk}, each row sums to 1) "
        "and V the "
        f"values ({tk}×{dv}). Compute the output O = AV "
        f"{_precision_note(p)['en']}.",
    }
    runs = Runs(runs.names, {"O": runs.values["output"]})
    return Draft(
        {"A": a, "V": v}, (_matrix_ask("O", (tq, dv)),), prompt, runs, transposed=True
    )


_TEMPERATURES = {
    1: (0.5, 1.0, 2.0),
    2: (0.5, 1.0, 2.0, 4.0),
    3: (0.5, 0.8, 1.0, 1.5, 2.0, 3.0),
}


def build_temperature(draws: Draws, level: Level) -> Draft:
    """The same scores at two temperatures: which distribution is sharper?"""
    number = level.number
    tk = _by_level(draws, level, {1: (2,), 2: (2, 3), 3: (3, 4)})
    # Untied also means not all equal: one distribution is strictly sharper.
    s = _untied_scores(draws, level, _entries(draws, level, (1, tk)))
    tau1, tau2 = draws.sample(_TEMPERATURES[number], 2)
    runs = score_pipelines(
        np.array([s / tau1, s / tau2]),
        None,
        candidates=("no_softmax", "unnormalized_exp", "hard_argmax"),
        ties_checked=True,
    )
    sharper = 0.0 if tau1 < tau2 else 1.0
    weights = runs.values["weights"]
    runs = Runs(
        runs.names,
        {
            "A1": weights[:, 0],
            "A2": weights[:, 1],
            "sharper": np.full(len(runs.names), sharper),
        },
    )
    p = DEFAULT_PRECISION
    prompt = {
        "zh-CN": "对同一行分数 s 在两个温度下做 softmax："
        f"A1 = softmax(s/τ₁)，τ₁ = {tau1:g}；"
        f"A2 = softmax(s/τ₂)，τ₂ = {tau2:g}。请算出 A1 和 A2"
        f"（{_precision_note(p)['zh-CN']}），再判断哪一个分布更尖锐。",
        "en": f"Apply the softmax to the same score row s at two temperatures: "
        f"A1 = softmax(s/τ₁) with τ₁ = {tau1:g}, and A2 = softmax(s/τ₂) with "
        f"τ₂ = {tau2:g}. Compute A1 and A2 {_precision_note(p)['en']}, then say "
        "which distribution is sharper.",
    }
    ask = (
        _matrix_ask(
            "A1",
            (1, tk),
            label={
                "zh-CN": f"τ₁ = {tau1:g} 时的权重 A1",
                "en": f"weights A1 at τ₁ = {tau1:g}",
            },
        ),
        _matrix_ask(
            "A2",
            (1, tk),
            label={
                "zh-CN": f"τ₂ = {tau2:g} 时的权重 A2",
                "en": f"weights A2 at τ₂ = {tau2:g}",
            },
        ),
        Ask(
            "sharper",
            "choice",
            (),
            {"zh-CN": "哪一个更尖锐？", "en": "Which is sharper?"},
            choices=(
                Choice("A1", {"zh-CN": "A1 更尖锐", "en": "A1 is sharper"}),
                Choice("A2", {"zh-CN": "A2 更尖锐", "en": "A2 is sharper"}),
            ),
            derive=("sharper", "A1", "A2"),
        ),
    )
    return Draft({"s": s, "tau1": tau1, "tau2": tau2}, ask, prompt, runs)


_SHIFT_SIZE = {1: 3, 2: 5, 3: 30}


def build_shift_invariance(draws: Draws, level: Level) -> Draft:
    """Adding a constant to a row of S leaves its softmax unchanged."""
    number = level.number
    tq = _by_level(draws, level, {1: (1,), 2: (1, 2), 3: (2, 3)})
    tk = _by_level(draws, level, {1: (2,), 2: (2, 3), 3: (3, 4)})
    s = _untied_scores(draws, level, _entries(draws, level, (tq, tk)))
    # A zero shift would show nothing: draw a size and a sign.
    sizes = draws.integer_list(1, _SHIFT_SIZE[number], tq)
    signs = draws.integer_list(0, 1, tq)
    c = np.array(
        [[size if sign else -size] for size, sign in zip(sizes, signs, strict=True)],
        dtype=np.float64,
    )
    if level.tenths:
        c = c / 10.0
    shifted = s + c
    runs = score_pipelines(
        np.array([s, shifted]),
        None,
        candidates=(
            "softmax_over_queries",
            "no_softmax",
            "unnormalized_exp",
            "hard_argmax",
        ),
        ties_checked=True,
    )
    weights = runs.values["weights"]
    # Each pipeline's own verdict on "same?": a learner who skips the softmax
    # sees the shift in their numbers and answers "different".
    same = (
        np.abs(weights[:, 0] - weights[:, 1]) <= tolerance_for(DEFAULT_PRECISION)
    ).all(axis=(1, 2))
    count = len(runs.names)
    runs = Runs(
        runs.names,
        {
            "S_shifted": np.repeat(shifted[None], count, axis=0),
            "A": weights[:, 0],
            "A_shifted": weights[:, 1],
            "same": np.where(same, 0.0, 1.0),
        },
    )
    p = DEFAULT_PRECISION
    prompt = {
        "zh-CN": "给分数矩阵 S 的每一行加上一个常数："
        "第 i 行的每个格子都加上 c 的第 i 个数。"
        f"请算出 S + c、A = softmax(S) 和 A′ = softmax(S + c)"
        f"（{_precision_note(p)['zh-CN']}），再判断 A 和 A′ 是否相同。",
        "en": "Add a constant to each row of the score matrix S: every cell of row i "
        "gets the i-th entry of c. Compute S + c, A = softmax(S) and "
        f"A′ = softmax(S + c) {_precision_note(p)['en']}, then say whether A and "
        "A′ are the same.",
    }
    return Draft({"S": s, "c": c}, _shift_asks(tq, tk), prompt, runs, transposed=True)


@functools.lru_cache(maxsize=64)
def _shift_asks(tq: int, tk: int) -> tuple[Ask, ...]:
    """S + c, softmax before and after the shift, and whether they differ."""
    return (
        _matrix_ask("S_shifted", (tq, tk), label={"zh-CN": "S + c", "en": "S + c"}),
        _matrix_ask(
            "A", (tq, tk), label={"zh-CN": "A = softmax(S)", "en": "A = softmax(S)"}
        ),
        _matrix_ask(
            "A_shifted",
            (tq, tk),
            derive=("softmax", "S_shifted"),
            label={"zh-CN": "A′ = softmax(S + c)", "en": "A′ = softmax(S + c)"},
        ),
        Ask(
            "same",
            "choice",
            (),
            {"zh-CN": "A 和 A′ 相同吗？", "en": "Are A and A′ the same?"},
            choices=(
                Choice("same", {"zh-CN": "相同", "en": "the same"}),
                Choice("different", {"zh-CN": "不同", "en": "different"}),
            ),
        ),
    )


def build_uniform(draws: Draws, level: Level) -> Draft:
    """Equal scores in a row: weights 1/Tk, output the mean of V's rows."""
    number = level.number
    tq = _by_level(draws, level, {1: (1,), 2: (1, 2), 3: (1, 2, 3)})
    tk = _by_level(draws, level, {1: (2,), 2: (2, 3), 3: (3, 4)})
    dv = draws.choice(level.dv)
    # Level 1 is the lesson's exercise: every score 0.
    row_scores = np.zeros((tq, 1)) if number == 1 else _entries(draws, level, (tq, 1))
    s = np.repeat(row_scores, tk, axis=1)
    v = _values(draws, level, tk, dv)
    runs = score_pipelines(
        s[None],
        v,
        candidates=("softmax_over_queries", "no_softmax", "unnormalized_exp"),
    )
    runs = Runs(
        runs.names,
        {"A": runs.values["weights"][:, 0], "O": runs.values["output"][:, 0]},
    )
    p = DEFAULT_PRECISION
    lesson = {"zh-CN": "", "en": ""}
    if number == 1:
        lesson = {
            "zh-CN": "和本课的练习一样，两个 key 的分数都是 0，只是 V 每次重新给出。",
            "en": " As in the lesson's exercise, both keys score 0, but V is drawn "
            "afresh.",
        }
    prompt = {
        "zh-CN": f"在 S 的每一行里，所有 key 的分数都相等。{lesson['zh-CN']}"
        f"请不看资料算出权重 A 和输出 O = AV，{_precision_note(p)['zh-CN']}。",
        "en": f"In each row of S every key has the same score.{lesson['en']} "
        f"Without notes, work out the weights A and the output O = AV "
        f"{_precision_note(p)['en']}.",
    }
    ask = (
        _matrix_ask("A", (tq, tk)),
        _matrix_ask("O", (tq, dv), derive=("matmul_v", "A")),
    )
    return Draft({"S": s, "V": v}, ask, prompt, runs, context={"V": v}, transposed=True)
