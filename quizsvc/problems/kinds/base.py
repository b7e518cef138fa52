"""What every kind builds on: the draft, the levels, labels and the shared
draws (entries, masks, untied scores and queries)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from quizsvc.problems.draws import Draws
from quizsvc.problems.model import DEFAULT_PRECISION, Ask
from quizsvc.problems.pipelines import (
    MISCONCEPTION_NAMES,
    Degenerate,
    Runs,
    peak_tied,
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

# Every named mistake has a buggy Q, K, V pipeline except "transposed" (the
# right numbers typed as their transpose), which the grader spots by shape.
QKV_MISTAKES = tuple(name for name in MISCONCEPTION_NAMES if name != "transposed")

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


# The bank writes "保留三位小数": a Chinese numeral, no spaces.
_ZH_DIGITS = "零一二三四五六七八九"


def _precision_note(precision: int) -> dict[str, str]:
    zh = "取整数" if precision == 0 else f"保留{_ZH_DIGITS[precision]}位小数"
    return {"zh-CN": zh, "en": f"to {precision} decimals"}


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
