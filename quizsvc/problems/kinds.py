"""One builder per problem kind: draw the givens, word the prompt, run the pipelines.

A builder returns a `Draft`; `generate` checks that every applicable mistake
gives an answer clearly apart from the correct one and from each other, and
draws again from the same seeded stream when it does not.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from quizsvc.problems.draws import Draws
from quizsvc.problems.model import DEFAULT_PRECISION, Ask, Choice, tolerance_for
from quizsvc.problems.pipelines import (
    Degenerate,
    Runs,
    causal_mask,
    output_pipelines,
    peak_tied,
    qkv_pipelines,
    score_pipelines,
)


@dataclass
class Draft:
    """A candidate problem before the distinctness check."""

    given: dict[str, Any]
    ask: tuple[Ask, ...]
    prompt: dict[str, str]
    runs: Runs
    context: dict[str, Any] = field(default_factory=dict)
    precision: int = DEFAULT_PRECISION
    transposed: bool = False


@dataclass(frozen=True)
class Level:
    """Sizes and entries a level draws from."""

    number: int
    tq: tuple[int, ...]
    tk: tuple[int, ...]
    d: tuple[int, ...]
    dv: tuple[int, ...]
    low: int
    high: int
    tenths: bool
    mask_chance: float


LEVEL_SPECS = {
    # By hand with a basic calculator: √d is whole, entries are small integers.
    1: Level(
        number=1,
        tq=(1, 2),
        tk=(2,),
        d=(1, 4),
        dv=(1, 2),
        low=-1,
        high=2,
        tenths=False,
        mask_chance=0.0,
    ),
    2: Level(
        number=2,
        tq=(1, 2, 3),
        tk=(2, 3),
        d=(1, 2, 3, 4),
        dv=(1, 2, 3),
        low=-2,
        high=2,
        tenths=False,
        mask_chance=0.5,
    ),
    # One-decimal entries in [-2, 2].
    3: Level(
        number=3,
        tq=(2, 3, 4),
        tk=(2, 3, 4),
        d=(2, 3, 4, 5, 6, 7, 8),
        dv=(2, 3, 4),
        low=-20,
        high=20,
        tenths=True,
        mask_chance=0.5,
    ),
}

QKV_MISTAKES = (
    "no_scale",
    "scale_by_d",
    "scale_multiplied",
    "softmax_over_queries",
    "no_softmax",
    "unnormalized_exp",
    "mask_ignored",
    "mask_after_softmax",
    "causal_flipped",
    "hard_argmax",
    "k_not_transposed",
)

LABELS = {
    "S": {"zh-CN": "分数 S", "en": "scores S"},
    "A": {"zh-CN": "权重 A", "en": "weights A"},
    "O": {"zh-CN": "输出 O", "en": "output O"},
    "visible": {
        "zh-CN": "可见性矩阵（1 = 可见，0 = 被遮住）",
        "en": "visibility matrix (1 = visible, 0 = hidden)",
    },
}
_QKV_ASK = {"visible": "visible", "S": "scores", "A": "weights", "O": "output"}


def _entries(draws: Draws, level: Level, shape: tuple[int, ...]) -> np.ndarray:
    """Matrix entries for this level: small integers, or one-decimal numbers."""
    return _as_entries(
        draws.integer_list(level.low, level.high, math.prod(shape)), level, shape
    )


def _as_entries(draw: list[int], level: Level, shape: tuple[int, ...]) -> np.ndarray:
    """Drawn integers as this level's entries: as they are, or in tenths."""
    values = np.array(draw, dtype=np.float64).reshape(shape)
    return values / 10.0 if level.tenths else values


def _partial_visibility(draws: Draws, tq: int, tk: int) -> np.ndarray:
    """A random mask hiding about a third of the cells, never a whole row."""
    draw = draws.integer_list(0, 2, tq * tk)
    visible = np.array(draw, dtype=np.int64).reshape(tq, tk) > 0
    counts = [sum(1 for x in draw[r * tk : (r + 1) * tk] if x) for r in range(tq)]
    for row, count in enumerate(counts):
        if not count:
            visible[row, draws.integer(0, tk - 1)] = True
    if sum(counts) == tq * tk:
        row = draws.integer(0, tq - 1)
        visible[row, draws.integer(0, tk - 1)] = False
    return visible


# Redrawing one part of a problem (a tied row, equal value rows) twenty times
# in a row has a probability far below 1e-9.
_MAX_REDRAWS = 20


def _values(draws: Draws, level: Level, tk: int, dv: int) -> np.ndarray:
    """V [Tk, dv] with at least two different rows, so that O depends on A."""
    for _ in range(_MAX_REDRAWS):
        draw = draws.integer_list(level.low, level.high, tk * dv)
        if draw != draw[:dv] * tk:  # some row differs from the first
            return _as_entries(draw, level, (tk, dv))
    raise Degenerate("the value rows stay equal")


def _additive(visible: np.ndarray) -> np.ndarray:
    """The additive mask M: 0 where visible, -inf where hidden."""
    return np.where(visible, 0.0, -np.inf)


def _matrix_ask(name: str, shape: tuple[int, int], derive=None, label=None) -> Ask:
    return Ask(name, "matrix", shape, label or LABELS[name], derive=derive)


def _precision_note(precision: int) -> dict[str, str]:
    return {"zh-CN": f"保留 {precision} 位小数", "en": f"to {precision} decimals"}


def _map(runs: Runs, names: dict[str, str]) -> Runs:
    """Rename pipeline quantities to the problem's ask names."""
    return Runs(runs.names, {ask: runs.values[source] for ask, source in names.items()})


def _by_level(draws: Draws, level: Level, options: dict[int, tuple[int, ...]]) -> int:
    """Draw one of this level's options."""
    return draws.choice(options[level.number])


def _tied_row_indices(scores: np.ndarray) -> list[int]:
    """Rows whose largest visible score occurs twice (ties break hard_argmax).

    A score of -inf is a hidden cell: never within 1e-9 of a finite peak.
    """
    return [i for i, row in enumerate(scores.tolist()) if peak_tied(row)]


def _untied_scores(draws: Draws, level: Level, scores: np.ndarray) -> np.ndarray:
    """Redraw (in place) each score row whose largest visible entry is tied."""
    for _ in range(_MAX_REDRAWS):
        rows = _tied_row_indices(scores)
        if not rows:
            return scores
        fresh = _entries(draws, level, (len(rows), scores.shape[1]))
        scores[rows] = np.where(scores[rows] == -np.inf, -np.inf, fresh)
    raise Degenerate("a row's largest score stays tied")


def _k_for_kt_unseen(q: np.ndarray, k: np.ndarray, visible: np.ndarray | None) -> bool:
    """True if QK gives the same visible scores as QKᵀ (K square, d = Tk).

    Exact: entries are integers or tenths, so two scores are equal or at
    least 0.01 apart, which scaling keeps above the generator's margin.
    """
    apart = np.abs(q @ k - q @ k.T) > 1e-9
    return not np.count_nonzero(apart if visible is None else apart & visible)


def _sees_one_key(k: np.ndarray, seen: list | None, row: int) -> bool:
    """True if the row sees two keys or more, and all of them are the same."""
    keys = (
        k.tolist()
        if seen is None
        else [key for key, shown in zip(k.tolist(), seen[row], strict=True) if shown]
    )
    return len(keys) > 1 and all(key == keys[0] for key in keys)


def _untied_queries(
    draws: Draws,
    level: Level,
    q: np.ndarray,
    k: np.ndarray,
    visible: np.ndarray | None,
) -> None:
    """Redraw (in place) each query whose largest visible score QKᵀ is tied.

    Raises `Degenerate` when a query stays tied. Also raises it, before any
    pipeline runs, for two draws the generator would reject after all that
    work: every visible score 0 (scaled and unscaled scores agree), or K
    giving the same visible scores as Kᵀ.
    """
    # One product for the scores, then plain Python on their handful of rows.
    # Entries are integers or tenths, so two scores are either equal or at
    # least 0.01 apart, and rounding cannot change the verdict.
    seen = visible.tolist() if visible is not None else None
    zero_rows = [False] * q.shape[0]
    suspects = list(range(q.shape[0]))
    products = q @ k.T
    for attempt in range(_MAX_REDRAWS):
        tied = []
        # A row not redrawn stays untied: only redrawn rows need a new look.
        for i, row in zip(suspects, products.tolist(), strict=True):
            if seen is not None:
                row = [x for x, shown in zip(row, seen[i], strict=True) if shown]
            zero_rows[i] = all(-1e-9 <= x <= 1e-9 for x in row)
            if peak_tied(row):
                tied.append(i)
        if not tied:
            if q.shape[1] > 1 and all(zero_rows):
                raise Degenerate("every visible score is 0: no_scale looks right")
            if q.shape[1] == k.shape[0] and _k_for_kt_unseen(q, k, visible):
                raise Degenerate("K and Kᵀ give the same visible scores")
            return
        if all(_sees_one_key(k, seen, i) for i in tied):
            # These rows tie whatever query is drawn. Take the words the
            # remaining redraws would have taken, so that the next draw of the
            # problem starts where it always did, and give up now.
            draws.skip_integer_lists(
                level.low, level.high, len(tied) * q.shape[1], _MAX_REDRAWS - attempt
            )
            break
        fresh = _entries(draws, level, (len(tied), q.shape[1]))
        q[tied] = fresh
        products = fresh @ k.T
        suspects = tied
    raise Degenerate("a query's largest score stays tied")


# ---------------------------------------------------------------------------
# Kinds built on Q, K, V.


def _qkv_draw(
    draws: Draws, level: Level, *, tq: int | None = None, tk: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Q [Tq, d], K [Tk, d] and V [Tk, dv] with this level's sizes and entries."""
    tq = tq or draws.choice(level.tq)
    tk = tk or draws.choice(level.tk)
    d = draws.choice(level.d)
    dv = draws.choice(level.dv)
    # One draw for both Q and K: fewer calls into the generator.
    flat = _entries(draws, level, (tq * d + tk * d,))
    q = flat[: tq * d].reshape(tq, d)
    k = flat[tq * d :].reshape(tk, d)
    return q, k, _values(draws, level, tk, dv)


def _qkv_given(q, k, v=None, **extra) -> dict[str, Any]:
    given: dict[str, Any] = {"Q": q, "K": k}
    if v is not None:
        given["V"] = v
    given["d"] = q.shape[1]
    given.update(extra)
    return given


def build_scores(draws: Draws, level: Level) -> Draft:
    """S from Q and K, with an additive mask M at levels 2 and 3 now and then."""
    q, k, _ = _qkv_draw(draws, level)
    tq, tk, d = q.shape[0], k.shape[0], q.shape[1]
    visible = (
        _partial_visibility(draws, tq, tk) if draws.chance(level.mask_chance) else None
    )
    runs = qkv_pipelines(
        q,
        k,
        np.zeros((tk, 1)),
        visible=visible,
        causal=False,
        candidates=(
            "no_scale",
            "scale_by_d",
            "scale_multiplied",
            "mask_ignored",
            "k_not_transposed",
        ),
    )
    given = _qkv_given(q, k)
    plus_m = ""
    notes = {"zh-CN": "", "en": ""}
    if visible is not None:
        given["M"] = _additive(visible)
        plus_m = " + M"
        notes = {
            "zh-CN": "；M 中为 -inf 的格子在 S 中也写 -inf",
            "en": "; a cell where M is -inf is -inf in S too",
        }
    p = DEFAULT_PRECISION
    prompt = {
        "zh-CN": f"Q 的每一行是一个 query，K 的每一行是一个 key，d = {d}。"
        f"请计算分数 S = QKᵀ/√d{plus_m}（{tq}×{tk}），"
        f"{_precision_note(p)['zh-CN']}{notes['zh-CN']}。",
        "en": f"Each row of Q is a query and each row of K a key; d = {d}. "
        f"Compute the scores S = QKᵀ/√d{plus_m} ({tq}×{tk}) "
        f"{_precision_note(p)['en']}{notes['en']}.",
    }
    ask = (_matrix_ask("S", (tq, tk)),)
    return Draft(given, ask, prompt, _map(runs, {"S": "scores"}), transposed=True)


@functools.lru_cache(maxsize=256)
def _step_asks(
    tq: int, tk: int, dv: int, *, visible_first: bool = False
) -> tuple[Ask, ...]:
    asks = []
    if visible_first:
        asks.append(Ask("visible", "boolean_matrix", (tq, tk), LABELS["visible"]))
        asks.append(_matrix_ask("S", (tq, tk), derive=("mask_scores", "visible")))
    else:
        asks.append(_matrix_ask("S", (tq, tk)))
    asks.append(_matrix_ask("A", (tq, tk), derive=("softmax", "S")))
    asks.append(_matrix_ask("O", (tq, dv), derive=("matmul_v", "A")))
    return tuple(asks)


def _step_context(v: np.ndarray, visible: np.ndarray) -> dict[str, Any]:
    """What the grader needs to carry errors forward: V and the visible cells."""
    return {"V": v, "visible": visible}


def build_attention(draws: Draws, level: Level) -> Draft:
    """S, A and O from Q, K and V; levels 2–3 may add a mask, level 3 causal."""
    causal = False
    visible = None
    # Level 1: no mask; level 2: none or an additive M; level 3: also causal.
    roll = draws.integer(0, level.number - 1)
    if roll == 2:
        causal = True
        tq = tk = draws.choice(level.tk)
        q, k, v = _qkv_draw(draws, level, tq=tq, tk=tk)
    else:
        q, k, v = _qkv_draw(draws, level)
        if roll >= 1:
            visible = _partial_visibility(draws, q.shape[0], k.shape[0])
    tq, tk, d, dv = q.shape[0], k.shape[0], q.shape[1], v.shape[1]
    full = visible if visible is not None else np.ones((tq, tk), dtype=bool)
    if causal:
        full = full & causal_mask(tq, tk)
    # Without a mask every cell is visible: the tie check needs no mask then.
    _untied_queries(draws, level, q, k, full if roll else None)
    runs = qkv_pipelines(
        q,
        k,
        v,
        visible=visible,
        causal=causal,
        candidates=QKV_MISTAKES,
        ties_checked=True,
    )
    given = _qkv_given(q, k, v)
    plus_m = ""
    extra = {"zh-CN": "", "en": ""}
    if visible is not None:
        given["M"] = _additive(visible)
        plus_m = " + M"
        extra = {
            "zh-CN": "M 中为 -inf 的格子在 S 中写 -inf。",
            "en": "Where M is -inf, write -inf in S. ",
        }
    if causal:
        given["causal"] = True
        extra = {
            "zh-CN": "使用因果遮罩：query i 只能看见 key 0…i，其余格子在 S 中写 -inf。",
            "en": "A causal mask applies: query i sees only keys 0…i; write -inf "
            "in S for the rest. ",
        }
    p = DEFAULT_PRECISION
    prompt = {
        "zh-CN": f"已知 Q、K、V，d = {d}。请一步一步地算：先求分数 S = QKᵀ/√d{plus_m}，"
        f"再对每一行做 softmax 得到权重 A，最后求输出 O = AV。{extra['zh-CN']}"
        f"每一步都{_precision_note(p)['zh-CN']}。",
        "en": f"Given Q, K and V with d = {d}, work step by step: the scores "
        f"S = QKᵀ/√d{plus_m}, then the weights A (softmax of each row of S), "
        f"then the output O = AV. {extra['en']}Give every step "
        f"{_precision_note(p)['en']}.",
    }
    return Draft(
        given,
        _step_asks(tq, tk, dv),
        prompt,
        _map(runs, {"S": "scores", "A": "weights", "O": "output"}),
        context=_step_context(v, full),
        transposed=True,
    )


def build_causal(draws: Draws, level: Level) -> Draft:
    """Self-attention under a causal mask: visibility, then S, A, O."""
    t = _by_level(draws, level, {1: (2,), 2: (2, 3), 3: (3, 4)})
    q, k, v = _qkv_draw(draws, level, tq=t, tk=t)
    d, dv = q.shape[1], v.shape[1]
    full = causal_mask(t, t)
    _untied_queries(draws, level, q, k, full)
    runs = qkv_pipelines(
        q,
        k,
        v,
        visible=None,
        causal=True,
        candidates=QKV_MISTAKES,
        ties_checked=True,
        with_visible=True,
    )
    p = DEFAULT_PRECISION
    prompt = {
        "zh-CN": f"这是长度为 {t} 的序列上的自注意力，使用因果遮罩"
        "（query i 只能看见 key "
        f"0…i），d = {d}。先写出可见性矩阵（1 = 可见，0 = 被遮住），再依次算出分数 S"
        f"（被遮住的格子写 -inf）、权重 A 和输出 O，{_precision_note(p)['zh-CN']}。",
        "en": f"Self-attention over a sequence of {t} positions with a causal mask "
        f"(query i sees only keys 0…i), d = {d}. First give the visibility "
        f"matrix (1 = visible, 0 = hidden), then the scores S (write -inf for "
        f"hidden cells), the weights A and the output O, "
        f"{_precision_note(p)['en']}.",
    }
    given = _qkv_given(q, k, v, causal=True)
    return Draft(
        given,
        _step_asks(t, t, dv, visible_first=True),
        prompt,
        _map(runs, _QKV_ASK),
        context=_step_context(v, full),
        transposed=True,
    )


def build_padding_mask(draws: Draws, level: Level) -> Draft:
    """A key-padding mask; with left padding under a causal mask a row is undefined."""
    number = level.number
    causal = number >= 2 and draws.chance(0.5)
    if causal:
        t = draws.choice((2, 3)) if number == 2 else draws.choice((3, 4))
        q, k, v = _qkv_draw(draws, level, tq=t, tk=t)
        # Left padding: the first keys are padding, so the first queries see nothing.
        padded = draws.integer(1, t - 1 if number == 2 else t - 2)
        key_valid = np.arange(t) >= padded
    else:
        tk = 2 if number == 1 else draws.choice((2, 3) if number == 2 else (3, 4))
        q, k, v = _qkv_draw(draws, level, tk=tk)
        if number == 1:
            key_valid = np.arange(tk) != draws.integer(0, tk - 1)
        else:
            key_valid = np.arange(tk) < tk - draws.integer(1, tk - 1)
    tq, tk, d, dv = q.shape[0], k.shape[0], q.shape[1], v.shape[1]
    visible = np.repeat(key_valid[None, :], tq, axis=0)
    full = visible & causal_mask(tq, tk) if causal else visible
    _untied_queries(draws, level, q, k, full)
    runs = qkv_pipelines(
        q,
        k,
        v,
        visible=visible,
        causal=causal,
        candidates=QKV_MISTAKES,
        ties_checked=True,
    )
    also = {
        "zh-CN": "，同时使用因果遮罩（query i 只能看见 key 0…i）" if causal else "",
        "en": ", and a causal mask also applies (query i sees only keys 0…i)"
        if causal
        else "",
    }
    p = DEFAULT_PRECISION
    prompt = {
        "zh-CN": "key_valid 标出哪些 key 是真实内容（1）、哪些是填充（0）；"
        "任何 query 都不能"
        f"看见填充的 key{also['zh-CN']}。d = {d}。请算出分数 S（被遮住的格子写 -inf）、"
        f"权重 A 和输出 O，{_precision_note(p)['zh-CN']}。如果某个 query 的所有 key "
        "都被遮住，softmax 没有合法的分母，这一行的 A 和 O 请写“未定义”。",
        "en": f"key_valid marks which keys are real (1) and which are padding (0); no "
        f"query may attend to a padding key{also['en']}. With d = {d}, compute "
        f"the scores S (write -inf for hidden cells), the weights A and the "
        f"output O {_precision_note(p)['en']}. If every key is hidden from a "
        'query, the softmax has no valid denominator: write "undefined" for '
        "that row of A and O.",
    }
    given = _qkv_given(
        q, k, v, key_valid=key_valid.astype(np.int64)[None, :], causal=causal
    )
    return Draft(
        given,
        _step_asks(tq, tk, dv),
        prompt,
        _map(runs, {"S": "scores", "A": "weights", "O": "output"}),
        context=_step_context(v, full),
        transposed=True,
    )


LESSON_Q = np.array([[1.0, 0.0]])
LESSON_K = np.array([[1.0, 0.0], [0.0, 1.0]])
LESSON_V = np.array([[1.0, 0.0], [0.0, 2.0]])


def build_lesson_example(draws: Draws, level: Level) -> Draft:
    """The lesson's worked example: q = [1, 0], K = I, V = diag(1, 2), d = 2."""
    runs = qkv_pipelines(
        LESSON_Q,
        LESSON_K,
        LESSON_V,
        visible=None,
        causal=False,
        # K is symmetric here, so K and Kᵀ give the same scores: not diagnosable.
        candidates=(
            "no_scale",
            "scale_by_d",
            "scale_multiplied",
            "no_softmax",
            "unnormalized_exp",
            "hard_argmax",
        ),
    )
    p = DEFAULT_PRECISION
    prompt = {
        "zh-CN": "本课的例子：q = [1, 0]，k₀ = [1, 0]，k₁ = [0, 1]，v₀ = [1, 0]，"
        f"v₁ = [0, 2]，d = 2。请依次算出分数 S、权重 A 和输出 O，"
        f"{_precision_note(p)['zh-CN']}。",
        "en": "The lesson's worked example: q = [1, 0], k₀ = [1, 0], k₁ = [0, 1], "
        "v₀ = [1, 0], v₁ = [0, 2], d = 2. Compute the scores S, the weights A "
        f"and the output O in turn, {_precision_note(p)['en']}.",
    }
    given = _qkv_given(LESSON_Q, LESSON_K, LESSON_V)
    return Draft(
        given,
        _step_asks(1, 2, 2),
        prompt,
        _map(runs, {"S": "scores", "A": "weights", "O": "output"}),
        context=_step_context(LESSON_V, np.ones((1, 2), dtype=bool)),
    )


# ---------------------------------------------------------------------------
# Kinds built on given scores or weights.


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
        "zh-CN": "分数为 -inf 的 key 被遮住，权重为 0。" if masked else "",
        "en": " A key whose score is -inf is masked and gets weight 0."
        if masked
        else "",
    }
    prompt = {
        "zh-CN": f"s 是一个 query 对 {tk} 个 key 的分数。"
        "请用 softmax 把它变成注意力权重 a："
        f"先减去最大值，再取指数，最后除以总和。{note['zh-CN']}"
        f"{_precision_note(p)['zh-CN']}。",
        "en": f"s holds one query's scores for {tk} keys. Turn them into attention "
        "weights a with the softmax: subtract the largest score, exponentiate, "
        f"then divide by the sum.{note['en']} Give a "
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
        "zh-CN": "为 -inf 的格子被遮住，权重为 0。" if np.isneginf(s).any() else "",
        "en": " A -inf cell is masked and gets weight 0."
        if np.isneginf(s).any()
        else "",
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
        # weight" is well defined.
        for _attempt in range(_MAX_REDRAWS):
            if number == 1:
                cuts = sorted(draws.sample(range(1, steps), tk - 1))
            else:
                cuts = sorted(draws.integers(0, steps, (tk - 1,)).tolist())
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


# ---------------------------------------------------------------------------
# Kinds about sizes and factors.

_HEAD_DIMS = {
    1: (4, 9, 16, 25, 36, 64, 100),
    2: (2, 3, 5, 8, 32, 128),
    3: (48, 80, 96, 112, 128, 256),
}


def build_scale(draws: Draws, level: Level) -> Draft:
    """The factor head_dim**-0.5 and the spread √d of an unscaled dot product."""
    d = draws.choice(_HEAD_DIMS[level.number])
    root = math.sqrt(d)
    runs = Runs(
        ["correct", "no_scale", "scale_by_d", "scale_multiplied"],
        {
            "factor": np.array([1.0 / root, 1.0, 1.0 / d, root]),
            "std": np.full(4, root),
        },
    )
    p = DEFAULT_PRECISION
    prompt = {
        "zh-CN": f"一个注意力头的 head_dim = {d}。"
        "（1）分数要乘的缩放因子 head_dim**-0.5 是多少？"
        "（2）若 q、k 的各个分量相互独立、均值为 0、方差为 1，"
        f"点积 q·k 的标准差约为多少？两问都{_precision_note(p)['zh-CN']}，"
        f"也可以写 1/√{d} 这样的式子。",
        "en": f"An attention head has head_dim = {d}. (1) What is the scale factor "
        "head_dim**-0.5 that multiplies the scores? (2) If the components of q "
        "and k are independent with mean 0 and variance 1, about how large is "
        f"the standard deviation of q·k? Answer both {_precision_note(p)['en']}; "
        f"an expression such as 1/√{d} is fine too.",
    }
    ask = (
        Ask(
            "factor",
            "number",
            (),
            {"zh-CN": "缩放因子 head_dim**-0.5", "en": "scale factor head_dim**-0.5"},
        ),
        Ask(
            "std",
            "number",
            (),
            {"zh-CN": "q·k 的标准差", "en": "standard deviation of q·k"},
        ),
    )
    return Draft({"head_dim": d}, ask, prompt, runs)


_SHAPE_POOLS = {
    1: {"all": tuple(range(2, 10))},
    2: {"all": tuple(range(2, 17))},
    3: {
        "batch": (2, 3, 4, 6),
        "heads": (8, 12, 16, 32),
        "Tq": (5, 7, 9, 10, 11),
        "Tk": (13, 17, 20, 24),
        "d": (64, 128),
        "dv": (40, 48, 80, 96),
    },
}
SHAPE_NAMES = ("batch", "heads", "Tq", "Tk", "d", "dv")
AXIS_LABELS = {
    "batch": {"zh-CN": "batch（样本）", "en": "batch"},
    "heads": {"zh-CN": "heads（头）", "en": "heads"},
    "Tq": {"zh-CN": "Tq（query 位置）", "en": "Tq (query positions)"},
    "Tk": {"zh-CN": "Tk（key 位置）", "en": "Tk (key positions)"},
    "d": {"zh-CN": "d（每头 Q/K 维度）", "en": "d (per-head query/key size)"},
    "dv": {"zh-CN": "dv（每头 V 维度）", "en": "dv (per-head value size)"},
}


def build_shapes(draws: Draws, level: Level) -> Draft:
    """Shapes of S, A, O in a multi-head layer, and the axis each product contracts."""
    pools = _SHAPE_POOLS[level.number]
    if "all" in pools:
        sizes = dict(zip(SHAPE_NAMES, draws.sample(pools["all"], 6), strict=True))
    else:
        sizes = {name: draws.choice(pools[name]) for name in SHAPE_NAMES}
    b, h, tq, tk, dv = (sizes[n] for n in ("batch", "heads", "Tq", "Tk", "dv"))
    choices = tuple(Choice(name, AXIS_LABELS[name]) for name in SHAPE_NAMES)
    index = {name: float(i) for i, name in enumerate(SHAPE_NAMES)}

    # Row 0 is correct; row 1 writes every matrix transposed.
    runs = Runs(
        ["correct", "transposed"],
        {
            "S_shape": np.array([[b, h, tq, tk], [b, h, tk, tq]], dtype=np.float64),
            "A_shape": np.array([[b, h, tq, tk], [b, h, tk, tq]], dtype=np.float64),
            "O_shape": np.array([[b, h, tq, dv], [b, h, dv, tq]], dtype=np.float64),
            "QK_contracts": np.full(2, index["d"]),
            "AV_contracts": np.full(2, index["Tk"]),
        },
    )
    prompt = {
        "zh-CN": f"一个多头注意力层：batch = {b}，头数 heads = {h}，"
        f"query 长度 Tq = {tq}，"
        f"key 长度 Tk = {tk}，每个头的 Q/K 维度 d = {sizes['d']}，V 维度 dv = {dv}。"
        "请按 [batch, heads, 行, 列] 的顺序写出 S、A、O 的形状，并指出 QKᵀ 和 AV "
        "各自沿哪一个轴求和（被收缩掉）。",
        "en": f"A multi-head attention layer has batch = {b}, heads = {h}, "
        "query length "
        f"Tq = {tq}, key length Tk = {tk}, per-head query/key size d = "
        f"{sizes['d']} and per-head value size dv = {dv}. Give the shapes of S, "
        "A and O in the order [batch, heads, rows, columns], and say which axis "
        "each product, QKᵀ and AV, sums over (contracts).",
    }
    ask = (
        Ask("S_shape", "shape", (4,), {"zh-CN": "S 的形状", "en": "shape of S"}),
        Ask(
            "A_shape",
            "shape",
            (4,),
            {"zh-CN": "A 的形状", "en": "shape of A"},
            derive=("same_shape", "S_shape"),
        ),
        Ask(
            "O_shape",
            "shape",
            (4,),
            {"zh-CN": "O 的形状", "en": "shape of O"},
            derive=("output_shape", "A_shape"),
        ),
        Ask(
            "QK_contracts",
            "choice",
            (),
            {"zh-CN": "QKᵀ 收缩的轴", "en": "axis QKᵀ contracts"},
            choices=choices,
        ),
        Ask(
            "AV_contracts",
            "choice",
            (),
            {"zh-CN": "AV 收缩的轴", "en": "axis AV contracts"},
            choices=choices,
        ),
    )
    return Draft(
        dict(sizes),
        ask,
        prompt,
        runs,
        context={"dv": dv, "sizes": sizes},
        precision=0,
    )


BUILDERS: dict[str, Callable[[Draws, Level], Draft]] = {
    "scores": build_scores,
    "softmax_row": build_softmax_row,
    "weights": build_weights,
    "output": build_output,
    "attention": build_attention,
    "causal": build_causal,
    "padding_mask": build_padding_mask,
    "shapes": build_shapes,
    "scale": build_scale,
    "temperature": build_temperature,
    "shift_invariance": build_shift_invariance,
    "uniform": build_uniform,
    "lesson_example": build_lesson_example,
}
