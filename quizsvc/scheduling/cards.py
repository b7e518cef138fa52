"""Card transitions: FSRS-6 (py-fsrs) with quizsvc's steps and a seeded fuzz.

`review_card(card, rating, now, ...)` runs py-fsrs with learning steps of 1 and
10 minutes and a relearning step of 10 minutes. Fuzz is on, drawn from a seed
(`fuzz_seed(card_id, reps)`) instead of the global random state, so replaying a
card's log (`replay_card`) reproduces its schedule exactly.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import IntEnum
from functools import lru_cache

import numpy as np
from fsrs import Card as FsrsCard
from fsrs import Rating as FsrsRating
from fsrs import Scheduler
from fsrs import State as FsrsState
from fsrs.scheduler import (
    DEFAULT_PARAMETERS as FSRS_DEFAULT_PARAMETERS,
)
from fsrs.scheduler import (
    FUZZ_RANGES,
    LOWER_BOUNDS_PARAMETERS,
    UPPER_BOUNDS_PARAMETERS,
)

DEFAULT_PARAMETERS: tuple[float, ...] = tuple(FSRS_DEFAULT_PARAMETERS)
DEFAULT_DESIRED_RETENTION = 0.9
LEARNING_STEPS = (timedelta(minutes=1), timedelta(minutes=10))
RELEARNING_STEPS = (timedelta(minutes=10),)
MAXIMUM_INTERVAL_DAYS = 36500

# Card states: py-fsrs's Learning / Review / Relearning, and 0 for never answered.
STATE_NEW, STATE_LEARNING, STATE_REVIEW, STATE_RELEARNING = 0, 1, 2, 3


class Rating(IntEnum):
    """The four FSRS answer grades."""

    AGAIN = 1
    HARD = 2
    GOOD = 3
    EASY = 4


@dataclass(frozen=True)
class CardState:
    """A card's FSRS memory and schedule (state 0 = never answered)."""

    state: int = STATE_NEW
    step: int | None = None
    stability: float | None = None
    difficulty: float | None = None
    due: datetime | None = None
    last_review: datetime | None = None
    reps: int = 0
    lapses: int = 0


@lru_cache(maxsize=64)
def _scheduler(parameters: tuple[float, ...], desired_retention: float) -> Scheduler:
    # Fuzz is applied here (fuzz_interval_days) from an explicit seed, not from
    # py-fsrs's use of the global random generator.
    return Scheduler(
        parameters=parameters,
        desired_retention=desired_retention,
        learning_steps=LEARNING_STEPS,
        relearning_steps=RELEARNING_STEPS,
        maximum_interval=MAXIMUM_INTERVAL_DAYS,
        enable_fuzzing=False,
    )


def fuzz_seed(card_id: int, reps: int) -> str:
    """Return the fuzz seed of a card's review number `reps` (0 = first)."""
    return f"quizsvc-fuzz:{card_id}:{reps}"


def fuzz_interval_days(
    interval_days: int, uniform: float, maximum_interval: int = MAXIMUM_INTERVAL_DAYS
) -> int:
    """Spread an interval as py-fsrs does, given a uniform draw in [0, 1)."""
    if interval_days < 2.5:
        return interval_days
    delta = 1.0
    for fuzz_range in FUZZ_RANGES:
        delta += fuzz_range["factor"] * max(
            min(float(interval_days), fuzz_range["end"]) - fuzz_range["start"], 0.0
        )
    lowest = max(2, round(interval_days - delta))
    highest = min(round(interval_days + delta), maximum_interval)
    lowest = min(lowest, highest)
    return min(round(uniform * (highest - lowest + 1) + lowest), maximum_interval)


def review_card(
    card: CardState,
    rating: int,
    now: datetime,
    *,
    parameters: Sequence[float] = DEFAULT_PARAMETERS,
    desired_retention: float = DEFAULT_DESIRED_RETENTION,
    seed: str | int | None = None,
) -> CardState:
    """Return the card after answering it with `rating` at `now` (FSRS-6).

    With a seed, Review intervals are fuzzed as py-fsrs fuzzes them; without
    one they are not (tests that want exact intervals pass no seed).
    """
    now = _as_utc(now)
    rating = Rating(rating)
    scheduler = _scheduler(tuple(float(p) for p in parameters), desired_retention)
    before = FsrsCard(
        card_id=0,
        state=FsrsState.Learning if card.state == STATE_NEW else FsrsState(card.state),
        step=0 if card.state == STATE_NEW else card.step,
        stability=card.stability,
        difficulty=card.difficulty,
        due=card.due or now,
        last_review=card.last_review,
    )
    after, _log = scheduler.review_card(before, FsrsRating(int(rating)), now)
    due = after.due
    if seed is not None and after.state == FsrsState.Review:
        days = (after.due - now).days
        fuzzed = fuzz_interval_days(days, random.Random(seed).random())
        due = now + timedelta(days=fuzzed)
    lapsed = card.state == STATE_REVIEW and rating == Rating.AGAIN
    return CardState(
        state=int(after.state),
        step=after.step,
        stability=after.stability,
        difficulty=after.difficulty,
        due=due,
        last_review=now,
        reps=card.reps + 1,
        lapses=card.lapses + int(lapsed),
    )


def replay_card(
    reviews: Iterable[tuple[datetime, int]],
    *,
    card_id: int,
    parameters: Sequence[float] = DEFAULT_PARAMETERS,
    desired_retention: float = DEFAULT_DESIRED_RETENTION,
) -> CardState:
    """Rebuild a card's state from its review log (oldest first), fuzz included."""
    card = CardState()
    for reviewed_at, rating in reviews:
        card = review_card(
            card,
            rating,
            reviewed_at,
            parameters=parameters,
            desired_retention=desired_retention,
            seed=fuzz_seed(card_id, card.reps),
        )
    return card


def check_parameters(parameters: Sequence[float]) -> tuple[float, ...]:
    """Return FSRS-6 parameters as a tuple, clipped into py-fsrs's bounds."""
    values = np.asarray(parameters, dtype=float)
    if values.shape != (len(DEFAULT_PARAMETERS),) or not np.isfinite(values).all():
        raise ValueError(
            f"FSRS-6 needs {len(DEFAULT_PARAMETERS)} finite parameters, "
            f"got {values.size}"
        )
    clipped = np.clip(values, LOWER_BOUNDS_PARAMETERS, UPPER_BOUNDS_PARAMETERS)
    return tuple(float(v) for v in clipped)


def _as_utc(moment: datetime) -> datetime:
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"naive datetime {moment!r}: pass a timezone-aware one")
    return moment.astimezone(UTC)
