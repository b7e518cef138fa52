"""Retrievability of many cards at once, with NumPy.

`retrievability_at` (from last-review times) and `retrievability_many` (from
elapsed days) equal py-fsrs `Scheduler.get_card_retrievability` card by card.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta

import numpy as np

from quizsvc.scheduling.cards import DEFAULT_PARAMETERS, _as_utc

DAY_MICROSECONDS = 86_400_000_000


def decay_of(parameters: Sequence[float]) -> float:
    """Return the forgetting-curve decay (FSRS-6's last parameter)."""
    return float(parameters[20])


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_NAT = np.iinfo(np.int64).min  # how NumPy stores NaT


def to_datetime64(moments: Iterable[datetime | None]) -> np.ndarray:
    """Convert aware datetimes to UTC datetime64[us] (None becomes NaT)."""
    try:
        micros = np.fromiter(
            ((m - _EPOCH) // _MICROSECOND if m is not None else _NAT for m in moments),
            dtype=np.int64,
        )
    except TypeError:
        raise ValueError("naive datetime: pass timezone-aware ones") from None
    return micros.view("datetime64[us]")


def elapsed_days(last_review: np.ndarray, now: datetime) -> np.ndarray:
    """Whole days from each last review to now, as py-fsrs counts them (floored).

    `last_review` holds datetime64 values (NaT for never reviewed → NaN).
    """
    last = np.asarray(last_review, dtype="datetime64[us]").view(np.int64)
    now_us = (_as_utc(now) - _EPOCH) // _MICROSECOND
    # Microsecond counts are exact in float64, and so is the floored quotient for
    # any span a card can have (far below the ~10^5 days where it would round).
    days = np.subtract(now_us, last, dtype=float)
    days /= DAY_MICROSECONDS
    np.floor(days, out=days)
    days[last == _NAT] = np.nan
    return days


def retrievability_many(
    stability: np.ndarray | Sequence[float | None],
    elapsed: np.ndarray | Sequence[float],
    decay: float | np.ndarray = DEFAULT_PARAMETERS[20],
) -> np.ndarray:
    """Recall probability of many cards at once (0 where never reviewed).

    Matches py-fsrs `Scheduler.get_card_retrievability`: R = (1 + f·t/S)^(−w20)
    with f = 0.9^(−1/w20) − 1, t the whole days since the last review (≥ 0).
    NaN stability or elapsed days mean "no review yet". `decay` (w20) is one
    number or one per card.
    """
    days = np.array(elapsed, dtype=float)
    return _forgetting_curve(days, np.asarray(stability, dtype=float), decay)


def retrievability_at(
    stability: np.ndarray | Sequence[float | None],
    last_review: np.ndarray,
    now: datetime,
    decay: float | np.ndarray = DEFAULT_PARAMETERS[20],
) -> np.ndarray:
    """Recall probability now of cards last reviewed at `last_review` (datetime64)."""
    days = elapsed_days(last_review, now)
    return _forgetting_curve(days, np.asarray(stability, dtype=float), decay)


def _forgetting_curve(
    days: np.ndarray, stability: np.ndarray, decay: float | np.ndarray
) -> np.ndarray:
    """Turn elapsed days into retrievability, in place: a class's worth of cards
    should cost one array and a few passes over it, not a temporary per step."""
    d = -np.asarray(decay, dtype=float)
    np.maximum(days, 0.0, out=days)
    days *= 0.9 ** (1.0 / d) - 1.0
    days /= stability
    days += 1.0
    np.power(days, d, out=days)
    days[np.isnan(days)] = 0.0
    return days
