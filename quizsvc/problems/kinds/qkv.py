"""Kinds built on Q, K and V: scores, attention, causal, padding, the lesson."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from quizsvc.problems.draws import Draws
from quizsvc.problems.kinds.base import (
    _QKV_ASK,
    LABELS,
    QKV_MISTAKES,
    Draft,
    Level,
    _additive,
    _by_level,
    _entries,
    _map,
    _matrix_ask,
    _partial_visibility,
    _precision_note,
    _untied_queries,
    _values,
)
from quizsvc.problems.model import DEFAULT_PRECISION, Ask
from quizsvc.problems.pipelines import (
    causal_mask,
    qkv_pipelines,
)


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
            "zh-CN": "；M 中为 −∞ 的格子在 S 中也写 −∞ 或 -inf",
            "en": "; a cell where M is −∞ is −∞ in S too (write −∞ or -inf)",
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
            "zh-CN": "M 中为 −∞ 的格子在 S 中写 −∞ 或 -inf。",
            "en": "Where M is −∞, write −∞ or -inf in S. ",
        }
    if causal:
        given["causal"] = True
        extra = {
            "zh-CN": "使用因果遮罩：query i 只能看见 key 0…i，"
            "其余格子在 S 中写 −∞ 或 -inf。",
            "en": "A causal mask applies: query i sees only keys 0…i; write −∞ or -inf "
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
        "（被遮住的格子写 −∞ 或 -inf）、"
        f"权重 A 和输出 O，{_precision_note(p)['zh-CN']}。",
        "en": f"Self-attention over a sequence of {t} positions with a causal mask "
        f"(query i sees only keys 0…i), d = {d}. First give the visibility "
        f"matrix (1 = visible, 0 = hidden), then the scores S (write −∞ or -inf for "
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
    causal = number >= 2 and draws.chance(0.7)
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
        f"看见填充的 key{also['zh-CN']}。d = {d}。"
        "请算出分数 S（被遮住的格子写 −∞ 或 -inf）、"
        f"权重 A 和输出 O，{_precision_note(p)['zh-CN']}。如果某个 query 的所有 key "
        "都被遮住，softmax 没有合法的分母，这一行的 A 和 O 请写“未定义”。",
        "en": f"key_valid marks which keys are real (1) and which are padding (0); no "
        f"query may attend to a padding key{also['en']}. With d = {d}, compute "
        f"the scores S (write −∞ or -inf for hidden cells), the weights A and the "
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
