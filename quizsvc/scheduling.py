"""Scheduling policy: what to review when, and how good the schedule is.

Pure computation, no database or web code: NumPy, the standard library, py-fsrs
(FSRS-6 card transitions) and, imported only when fitting, fsrs-rs-python.
`quizsvc.services` feeds it rows and stores what it returns.

- Card transitions: `review_card(card, rating, now, ...)` runs py-fsrs with
  learning steps of 1 and 10 minutes and a relearning step of 10 minutes. Fuzz
  is on, drawn from a seed (`fuzz_seed(card_id, reps)`) instead of the global
  random state, so replaying a card's log reproduces its schedule exactly.
- Rating policy (README "Scheduling"): `rate_graded_answer` turns an auto-graded
  answer into Again/Hard/Good/Easy; `rate_recall` reads a learner's own rating
  of a recall item (four buttons, or Pass/Fail in two-button mode).
- The daily queue: `learner_day` finds the learner's day from their time zone
  and rollover hour; `build_queue` picks due reviews (lowest retrievability
  first), then new items (unlocked lessons, skill order, skills staggered),
  within the day's limits, and never puts two items of one skill back to back
  when it can avoid it, counting the latest answers too.
- Retrievability of many cards at once: `retrievability_at` (from last-review
  times) and `retrievability_many` (from elapsed days), NumPy, equal to py-fsrs
  `Scheduler.get_card_retrievability` card by card.
- Evaluation: `evaluate_models` splits a review log by time and scores FSRS with
  the default parameters, FSRS with parameters fitted on the earlier part, and
  Anki's SM-2 (`sm2_intervals`) by log loss and RMSE(bins).
"""

from __future__ import annotations

import csv
import itertools
import random
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, time, timedelta
from enum import IntEnum
from functools import lru_cache
from typing import Literal
from zoneinfo import ZoneInfo

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
# A card in a learning step that comes due within this much of now joins the
# queue now, as Anki's "learn ahead limit" does, rather than leaving a gap —
# but only once STEP_SPACING of its step has passed since its last answer.
LEARN_AHEAD = timedelta(minutes=20)
# The least share of a learning step that must pass before the card is asked
# again (1-minute step: 30 s; 10-minute step: 5 min). Otherwise a step is
# pulled forward whenever the queue runs dry, and the "spaced" repeat comes
# seconds after the answer it was meant to space out.
STEP_SPACING = 0.5
# "Fast" needs a baseline: the median of at least this many earlier timed,
# correct answers of the same item type.
MIN_TIMED_ANSWERS = 5
# Below this many reviews a fitted parameter set mostly reflects noise.
MIN_REVIEWS_TO_OPTIMIZE = 400
DAY_MICROSECONDS = 86_400_000_000

# Card states: py-fsrs's Learning / Review / Relearning, and 0 for never answered.
STATE_NEW, STATE_LEARNING, STATE_REVIEW, STATE_RELEARNING = 0, 1, 2, 3


class Rating(IntEnum):
    """The four FSRS answer grades."""

    AGAIN = 1
    HARD = 2
    GOOD = 3
    EASY = 4


# --- card transitions --------------------------------------------------------


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


# --- retrievability ----------------------------------------------------------


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


# --- rating policy -----------------------------------------------------------


@dataclass(frozen=True)
class GradedAnswer:
    """The outcome of an auto-graded answer."""

    correct: bool
    # 1.0 full credit; between 0 and 1 partial credit.
    score: float = 1.0
    hint_used: bool = False
    # How many tries this answer took (1 = first try).
    attempts: int = 1

    def __post_init__(self) -> None:
        if not 0.0 <= self.score <= 1.0:  # also refuses NaN
            raise ValueError(f"score must be between 0 and 1, got {self.score}")
        if self.attempts < 1:
            raise ValueError(f"attempts must be at least 1, got {self.attempts}")


def typical_duration_ms(
    durations: Iterable[int | None], minimum: int = MIN_TIMED_ANSWERS
) -> float | None:
    """Return the median of the known durations, or None with fewer than `minimum`."""
    known = [d for d in durations if d is not None]
    if len(known) < minimum:
        return None
    return float(statistics.median(known))


def needs_typical_duration(answer: GradedAnswer, duration_ms: int | None) -> bool:
    """Whether the rating of this answer depends on how fast it was."""
    return duration_ms is not None and rate_graded_answer(answer) == Rating.GOOD


def rate_graded_answer(
    answer: GradedAnswer,
    *,
    duration_ms: int | None = None,
    typical_ms: float | None = None,
) -> Rating:
    """Turn an auto-graded answer into an FSRS rating.

    Wrong → Again. Right with partial credit, after a hint or after more than
    one try → Hard. Right on the first try → Good, or Easy when it also took
    less than `typical_ms` (the learner's median time on this item type).
    """
    if not answer.correct:
        return Rating.AGAIN
    if answer.score < 1.0 or answer.hint_used or answer.attempts > 1:
        return Rating.HARD
    fast = (
        typical_ms is not None and duration_ms is not None and duration_ms < typical_ms
    )
    return Rating.EASY if fast else Rating.GOOD


RECALL_CHOICES: Mapping[str, Rating] = {
    "again": Rating.AGAIN,
    "hard": Rating.HARD,
    "good": Rating.GOOD,
    "easy": Rating.EASY,
}
# Pass/Fail are Good/Again; those two names are accepted as well.
TWO_BUTTON_CHOICES: Mapping[str, Rating] = {
    "pass": Rating.GOOD,
    "fail": Rating.AGAIN,
    "good": Rating.GOOD,
    "again": Rating.AGAIN,
}


def rate_recall(choice: str, *, two_button: bool = False) -> Rating:
    """Read a learner's rating of a recall item (again/hard/good/easy, pass/fail)."""
    key = choice.strip().lower()
    allowed = TWO_BUTTON_CHOICES if two_button else RECALL_CHOICES
    if key not in allowed:
        raise ValueError(
            f"unknown rating {choice!r}: expected one of {', '.join(allowed)}"
        )
    return allowed[key]


# --- the learner's day and the daily queue -----------------------------------


def learner_day(
    now: datetime, timezone_name: str, rollover_hour: int
) -> tuple[datetime, datetime]:
    """Return the UTC start and end of the learner's day that contains `now`."""
    if not 0 <= rollover_hour <= 23:
        raise ValueError(f"rollover hour must be 0..23, got {rollover_hour}")
    zone = ZoneInfo(timezone_name)
    local = _as_utc(now).astimezone(zone)
    day = (local.replace(tzinfo=None) - timedelta(hours=rollover_hour)).date()
    start = datetime.combine(day, time(rollover_hour), tzinfo=zone).astimezone(UTC)
    end = datetime.combine(
        day + timedelta(days=1), time(rollover_hour), tzinfo=zone
    ).astimezone(UTC)
    return start, end


@dataclass(frozen=True)
class DueCard:
    """A card the learner has answered before, as the queue sees it."""

    item_id: str
    skill_id: str | None
    state: int
    due: datetime
    retrievability: float
    # When it was last answered: a learning step may be asked ahead of its due
    # time only STEP_SPACING of the step after it (None: no such bound).
    last_review: datetime | None = None
    # The learning or relearning step it is in (None in the Review state).
    step: int | None = None

    def answers_left(self) -> int:
        """Answers it needs today if each is right: the steps left, or one."""
        if self.state == STATE_LEARNING:
            return max(1, len(LEARNING_STEPS) - (self.step or 0))
        if self.state == STATE_RELEARNING:
            return max(1, len(RELEARNING_STEPS) - (self.step or 0))
        return 1

    def spaced_from(self) -> datetime:
        """The earliest moment a learning step may be asked again, ahead of due."""
        if self.last_review is None or self.due <= self.last_review:
            return self.due - LEARN_AHEAD
        step = self.due - self.last_review
        return max(self.last_review + step * STEP_SPACING, self.due - LEARN_AHEAD)


@dataclass(frozen=True)
class NewItem:
    """An item the learner has never answered."""

    item_id: str
    skill_id: str | None
    lesson_id: str
    # (lesson position, skill position, item position): the order to learn in.
    order: tuple[int, int, int]
    # The item's place among all its skill's items (0 = the first), started or
    # not; None when unknown (then counted among the items given).
    skill_index: int | None = None


@dataclass(frozen=True)
class LessonProgress:
    """How far a learner has got into a lesson's items."""

    prerequisites: tuple[str, ...]
    introduced: int
    total: int

    @property
    def complete(self) -> bool:
        """Every item of the lesson has been introduced."""
        return self.introduced >= self.total


@dataclass(frozen=True)
class QueueEntry:
    """One step of the daily queue."""

    item_id: str
    skill_id: str | None
    kind: Literal["review", "new"]
    due: datetime | None = None
    retrievability: float | None = None


def unlocked_lessons(lessons: Mapping[str, LessonProgress]) -> set[str]:
    """Return the lessons whose known prerequisites have all been introduced."""
    return {
        lesson_id
        for lesson_id, progress in lessons.items()
        if all(lessons[p].complete for p in progress.prerequisites if p in lessons)
    }


def build_queue(
    due_cards: Iterable[DueCard],
    new_items: Iterable[NewItem],
    lessons: Mapping[str, LessonProgress],
    *,
    now: datetime,
    day_end: datetime,
    reviews_remaining: int,
    new_remaining: int,
    previous_skill: str | None = None,
    just_answered: str | None = None,
) -> list[QueueEntry]:
    """Build the learner's queue: due reviews, then new items, skills spread out.

    Reviews due before the day ends, and learning steps due by now, come lowest
    retrievability first, up to `reviews_remaining`. New items of unlocked
    lessons follow, up to `new_remaining` and the review capacity left, each
    skill in bank order and the skills in the lesson's order, but staggered
    (`introduction_order`) so a skill is not drilled to exhaustion before the
    next one starts. Learning steps that come due within LEARN_AHEAD go last,
    as Anki's learn-ahead does, but only once STEP_SPACING of their step has
    passed since their last answer (`DueCard.spaced_from`); the item
    `just_answered` is never asked ahead of its due time and, when due, goes
    after everything else (a card just failed is not asked again at once while
    other work is waiting). A learning step not yet spaced is left out: the
    queue may then be empty while steps wait (see `next_ready`).
    Finally no two entries of one skill are adjacent, counting the skill of the
    latest answer (`previous_skill`), unless only that skill is left.
    """
    now = _as_utc(now)
    learn_ahead = now + LEARN_AHEAD
    ready: list[DueCard] = []
    ahead: list[DueCard] = []
    for card in due_cards:
        if card.state == STATE_REVIEW:
            if card.due < day_end:
                ready.append(card)
        elif card.item_id == just_answered:
            # Its whole step has passed: asked again, but after all else.
            if card.due <= now:
                ahead.append(card)
        elif card.due <= now:
            ready.append(card)
        elif card.due <= learn_ahead and card.spaced_from() <= now:
            ahead.append(card)
    ready.sort(key=lambda c: (c.retrievability, c.due, c.item_id))
    # The item just answered goes after the other learn-ahead cards, even one
    # due a minute later: asking it again at once is what this rule avoids.
    ahead.sort(key=lambda c: (c.item_id == just_answered, c.due, c.item_id))
    limit = max(reviews_remaining, 0)
    reviews = [
        QueueEntry(c.item_id, c.skill_id, "review", c.due, c.retrievability)
        for c in ready[:limit]
    ]
    capacity = max(0, min(new_remaining, limit - len(reviews)))
    open_lessons = unlocked_lessons(lessons)
    fresh = introduction_order(i for i in new_items if i.lesson_id in open_lessons)
    news = [QueueEntry(i.item_id, i.skill_id, "new") for i in fresh[:capacity]]
    room = max(0, limit - len(reviews) - len(news))
    later = [
        QueueEntry(c.item_id, c.skill_id, "review", c.due, c.retrievability)
        for c in ahead[:room]
    ]
    return spread_skills(reviews + news + later, previous_skill)


def next_ready(
    due_cards: Iterable[DueCard],
    *,
    now: datetime,
    day_end: datetime,
    just_answered: str | None = None,
) -> datetime | None:
    """When the earliest learning step held back by the spacing rule may be
    asked (after now, before the day ends), or None when none waits."""
    now = _as_utc(now)
    waiting = []
    for card in due_cards:
        if card.state == STATE_REVIEW or card.due >= day_end:
            continue
        ready_at = card.due if card.item_id == just_answered else card.spaced_from()
        if ready_at > now:
            waiting.append(ready_at)
    return min(waiting, default=None)


# How many items of a skill come before the next skill's first item.
SKILL_STAGGER = 1


def introduction_order(new_items: Iterable[NewItem]) -> list[NewItem]:
    """Order new items: lessons in order; within a lesson, skills in order and
    each skill's items in bank order, the next skill starting after
    SKILL_STAGGER items of the one before.

    Item n of a skill at position p gets the rank n + SKILL_STAGGER * p (ties go
    to the earlier skill), so the first skill's second item comes with the
    second skill's first, and so on: skills are met in the lesson's order and
    then practised side by side. n counts the skill's items already started, so
    the stagger holds from one day to the next.
    """
    ordered = sorted(new_items, key=lambda item: (item.order, item.item_id))
    counted: dict[tuple[int, int, str | None], int] = {}
    ranked = []
    for index, item in enumerate(ordered):
        group = (item.order[0], item.order[1], item.skill_id)
        within = item.skill_index
        if within is None:
            within = counted.get(group, 0)
            counted[group] = within + 1
        rank = (item.order[0], within + SKILL_STAGGER * item.order[1], item.order[1])
        ranked.append((rank, index, item))
    ranked.sort(key=lambda entry: entry[:2])
    return [item for _rank, _index, item in ranked]


def spread_skills(
    entries: Sequence[QueueEntry], previous_skill: str | None = None
) -> list[QueueEntry]:
    """Reorder as little as possible so no skill follows itself while avoidable.

    Greedy: take the earliest remaining entry whose skill differs from the one
    just placed (at the start, the skill of the latest answer); only when every
    remaining entry shares it, take the earliest.
    """
    remaining = list(entries)
    result: list[QueueEntry] = []
    while remaining:
        previous = result[-1].skill_id if result else previous_skill
        index = next(
            (
                i
                for i, entry in enumerate(remaining)
                if entry.skill_id is None or entry.skill_id != previous
            ),
            0,
        )
        result.append(remaining.pop(index))
    return result


# --- evaluating schedulers on a review log -----------------------------------


@dataclass(frozen=True)
class LoggedReview:
    """One row of a review log."""

    card_id: int | str
    reviewed_at: datetime
    rating: int


REVIEW_LOG_COLUMNS = ("card_id", "review_rating", "review_time", "review_duration")


def parse_review_log(lines: Iterable[str]) -> list[LoggedReview]:
    """Read a CSV review log (card_id, review_rating, review_time, review_duration).

    Times are ISO 8601 with an offset; ratings 1-4; the duration (milliseconds)
    may be empty. A bad row raises ValueError naming its line.
    """
    reader = csv.DictReader(lines)
    missing = [c for c in REVIEW_LOG_COLUMNS if c not in (reader.fieldnames or ())]
    if missing:
        raise ValueError(
            f"line 1: the header lacks {', '.join(missing)} "
            f"(expected {','.join(REVIEW_LOG_COLUMNS)})"
        )
    log = []
    for row in reader:
        line = reader.line_num
        try:
            rating = int(row["review_rating"])
            moment = datetime.fromisoformat(row["review_time"].strip())
            if (
                row["review_duration"] not in (None, "")
                and int(row["review_duration"]) < 0
            ):
                raise ValueError("review_duration must not be negative")
        except (TypeError, ValueError) as exc:
            raise ValueError(f"line {line}: {exc}") from None
        if rating not in (1, 2, 3, 4):
            raise ValueError(f"line {line}: review_rating must be 1-4, got {rating}")
        if moment.tzinfo is None:
            raise ValueError(f"line {line}: review_time needs a UTC offset")
        card = (row["card_id"] or "").strip()
        if not card:
            raise ValueError(f"line {line}: card_id is empty")
        log.append(LoggedReview(card, moment.astimezone(UTC), rating))
    if not log:
        raise ValueError("the review log has no rows")
    return log


@dataclass(frozen=True)
class Metrics:
    """How well predicted recall probabilities match what happened."""

    log_loss: float
    rmse_bins: float
    count: int


@dataclass(frozen=True)
class _Target:
    card_id: int | str
    index: int
    reviewed_at: datetime
    recalled: bool
    days: int


@dataclass(frozen=True)
class Histories:
    """A review log grouped by card, oldest first, with whole-day gaps."""

    reviews: Mapping[int | str, tuple[LoggedReview, ...]]
    # days[card][i]: whole days since the card's previous review (0 for the first)
    days: Mapping[int | str, tuple[int, ...]] = field(repr=False)

    @classmethod
    def from_log(cls, log: Iterable[LoggedReview]) -> Histories:
        """Group a review log by card and measure the gaps."""
        by_card: dict[int | str, list[LoggedReview]] = defaultdict(list)
        for review in log:
            if review.rating not in (1, 2, 3, 4):
                raise ValueError(f"rating must be 1..4, got {review.rating}")
            _as_utc(review.reviewed_at)
            by_card[review.card_id].append(review)
        reviews, days = {}, {}
        for card_id, rows in by_card.items():
            rows.sort(key=lambda r: r.reviewed_at)
            reviews[card_id] = tuple(rows)
            days[card_id] = (0,) + tuple(
                (b.reviewed_at - a.reviewed_at).days
                for a, b in itertools.pairwise(rows)
            )
        return cls(reviews, days)

    @property
    def count(self) -> int:
        """The number of reviews."""
        return sum(len(rows) for rows in self.reviews.values())

    def count_before(self, moment: datetime) -> int:
        """The number of reviews made before a moment."""
        return sum(
            1 for rows in self.reviews.values() for r in rows if r.reviewed_at < moment
        )

    def targets(self) -> list[_Target]:
        """The reviews a model must predict: a day or more after the previous one."""
        return [
            _Target(card_id, i, rows[i].reviewed_at, rows[i].rating > 1, gaps[i])
            for card_id, rows in self.reviews.items()
            for gaps in [self.days[card_id]]
            for i in range(1, len(rows))
            if gaps[i] >= 1
        ]

    def cutoff(self, test_fraction: float) -> datetime:
        """The time after which the latest `test_fraction` of targets fall."""
        if not 0.0 < test_fraction < 1.0:
            raise ValueError(f"test fraction must be in (0, 1), got {test_fraction}")
        times = sorted(t.reviewed_at for t in self.targets())
        if len(times) < 2:
            raise ValueError("the log has too few reviews a day or more apart to split")
        index = min(len(times) - 1, max(1, round(len(times) * (1.0 - test_fraction))))
        return times[index]


def _fsrs_items(histories: Histories, before: datetime | None) -> list:
    """FSRS training items: one per target reviewed before `before` (all if None)."""
    from fsrs_rs_python import FSRSItem, FSRSReview

    items = []
    for target in histories.targets():
        if before is not None and target.reviewed_at >= before:
            continue
        rows = histories.reviews[target.card_id][: target.index + 1]
        gaps = histories.days[target.card_id]
        items.append(
            (
                target.reviewed_at,
                FSRSItem([FSRSReview(r.rating, gaps[i]) for i, r in enumerate(rows)]),
            )
        )
    items.sort(key=lambda pair: pair[0])
    return [item for _, item in items]


def fit_parameters(
    histories: Histories, before: datetime | None = None
) -> tuple[float, ...]:
    """Fit FSRS-6 parameters (fsrs-rs, no torch) on targets reviewed before a time."""
    from fsrs_rs_python import FSRS

    items = _fsrs_items(histories, before)
    if not items:
        raise ValueError("no reviews a day or more apart to fit parameters on")
    fitted = FSRS(list(DEFAULT_PARAMETERS)).compute_parameters(items)
    return check_parameters(fitted)


def fsrs_predictions(
    histories: Histories, targets: Sequence[_Target], parameters: Sequence[float]
) -> np.ndarray:
    """Predict recall of each target from the memory state before it (FSRS-6)."""
    from fsrs_rs_python import FSRS, FSRSItem, FSRSReview

    model = FSRS(list(parameters))
    stabilities: dict[int | str, list[float]] = {}
    for card_id in {t.card_id for t in targets}:
        rows, gaps = histories.reviews[card_id], histories.days[card_id]
        item = FSRSItem([FSRSReview(r.rating, gaps[i]) for i, r in enumerate(rows)])
        stabilities[card_id] = [
            s.stability for s in model.historical_memory_states(item)
        ]
    stability = np.array([stabilities[t.card_id][t.index - 1] for t in targets])
    days = np.array([t.days for t in targets], dtype=float)
    return retrievability_many(stability, days, decay_of(parameters))


@dataclass
class _Sm2:
    phase: Literal["learning", "review", "relearning"] = "learning"
    step: int = 0
    ease: float = 2.5
    interval: int = 0  # whole days; 0 until the card first graduates


SM2_LEARNING_STEPS = 2  # Anki's default 1m 10m
SM2_RELEARNING_STEPS = 1  # Anki's default 10m
SM2_GRADUATING_INTERVAL = 1
SM2_EASY_INTERVAL = 4
SM2_MINIMUM_EASE = 1.3
SM2_HARD_FACTOR = 1.2
SM2_EASY_BONUS = 1.3


def _sm2_days(interval: float, shorter: int) -> int:
    return min(max(int(interval), shorter + 1, 1), MAXIMUM_INTERVAL_DAYS)


def _sm2_step(card: _Sm2, rating: int, days_since: int) -> _Sm2:
    """Apply Anki's SM-2 rules (default deck options) to one answer."""
    if card.phase == "review":
        ivl = card.interval
        late = max(0, days_since - ivl)
        if rating == 1:
            return _Sm2("relearning", 0, max(SM2_MINIMUM_EASE, card.ease - 0.2), 1)
        # Anki keeps whole days and makes each better answer at least a day longer.
        hard = _sm2_days(ivl * SM2_HARD_FACTOR, ivl)
        if rating == 2:
            ease = max(SM2_MINIMUM_EASE, card.ease - 0.15)
            return replace(card, ease=ease, interval=hard)
        good = _sm2_days((ivl + late // 2) * card.ease, hard)
        if rating == 3:
            return replace(card, interval=good)
        easy = _sm2_days((ivl + late) * card.ease * SM2_EASY_BONUS, good)
        return replace(card, ease=card.ease + 0.15, interval=easy)
    steps = SM2_LEARNING_STEPS if card.phase == "learning" else SM2_RELEARNING_STEPS
    # After a lapse the card keeps its reset interval (1 day, "new interval 0%").
    graduate = SM2_GRADUATING_INTERVAL if card.phase == "learning" else card.interval
    if rating == 1:
        return replace(card, step=0)
    if rating == 2:
        return card
    if rating == 4:
        easy = SM2_EASY_INTERVAL if card.phase == "learning" else graduate + 1
        return replace(card, phase="review", step=0, interval=easy)
    if card.step + 1 >= steps:
        return replace(card, phase="review", step=0, interval=graduate)
    return replace(card, step=card.step + 1)


def sm2_intervals(ratings: Sequence[int], days: Sequence[int]) -> list[int]:
    """Return the interval (days) Anki's SM-2 sets after each answer.

    Anki's default deck options: learning steps 1m 10m, graduating interval 1
    day, easy interval 4 days, starting ease 250%, Again −20% ease and a
    relearning step then 1 day, Hard ×1.2 and −15%, Good ×ease (plus half the
    days late), Easy ×ease ×1.3 and +15%, ease never below 130%. Answers
    inside a learning step leave the interval at 0 (due the same day).
    """
    card, intervals = _Sm2(), []
    for rating, gap in zip(ratings, days, strict=True):
        card = _sm2_step(card, rating, gap)
        intervals.append(card.interval if card.phase == "review" else 0)
    return intervals


def sm2_predictions(histories: Histories, targets: Sequence[_Target]) -> np.ndarray:
    """Predict recall from SM-2's intervals: R = 0.9^(t / I).

    The forgetting-curve assumption: SM-2 sets each interval I where it expects
    recall to have fallen to 90%, and memory decays exponentially, so after t
    days R = 0.9^(t/I). An interval shorter than a day (a learning step) counts
    as one day, the granularity of Anki's review queue.
    """
    intervals: dict[int | str, list[int]] = {}
    for card_id in {t.card_id for t in targets}:
        rows = histories.reviews[card_id]
        intervals[card_id] = sm2_intervals(
            [r.rating for r in rows], histories.days[card_id]
        )
    scheduled = np.array(
        [max(intervals[t.card_id][t.index - 1], 1.0) for t in targets], dtype=float
    )
    days = np.array([t.days for t in targets], dtype=float)
    return 0.9 ** (days / scheduled)


def _calibration_bin(p: np.ndarray, bins: int = 20) -> np.ndarray:
    # fsrs-rs's bins: finer near 1, where most predictions of a good model fall.
    binned = np.floor(np.exp(p * np.log(bins + 1))) - 1
    return np.clip(binned, 0, bins - 1).astype(int)


def score_predictions(predicted: np.ndarray, recalled: np.ndarray) -> Metrics:
    """Score predictions by log loss and RMSE(bins), as fsrs-rs evaluates them."""
    p = np.clip(np.asarray(predicted, dtype=float), 1e-6, 1 - 1e-6)
    y = np.asarray(recalled, dtype=float)
    if p.shape != y.shape or p.size == 0:
        raise ValueError("need as many predictions as outcomes, at least one")
    log_loss = float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))
    bins = _calibration_bin(p)
    counts = np.bincount(bins, minlength=20).astype(float)
    mean_p = np.bincount(bins, weights=p, minlength=20)
    mean_y = np.bincount(bins, weights=y, minlength=20)
    used = counts > 0
    squared = (mean_p[used] / counts[used] - mean_y[used] / counts[used]) ** 2
    rmse = float(np.sqrt(np.sum(squared * counts[used]) / np.sum(counts[used])))
    return Metrics(log_loss, rmse, int(p.size))


@dataclass(frozen=True)
class Evaluation:
    """Scores of several models on the latest part of a review log."""

    cutoff: datetime
    # Reviews before the cutoff: what a fit may learn from.
    train_count: int
    scores: dict[str, Metrics]
    fitted_parameters: tuple[float, ...] | None = None


def evaluate_models(
    histories: Histories,
    *,
    test_fraction: float = 0.2,
    parameters: Mapping[str, Sequence[float]] | None = None,
    fit: bool = True,
    sm2: bool = True,
) -> Evaluation:
    """Split a log by time and score models on the later part.

    `parameters` names FSRS parameter sets to score (default: {"default": the
    FSRS-6 defaults}); with `fit`, parameters fitted on the earlier part are
    scored as "fitted"; with `sm2`, Anki's SM-2 as "SM-2".
    """
    cutoff = histories.cutoff(test_fraction)
    targets = histories.targets()
    test = [t for t in targets if t.reviewed_at >= cutoff]
    recalled = np.array([t.recalled for t in test], dtype=float)
    named = (
        dict(parameters) if parameters is not None else {"default": DEFAULT_PARAMETERS}
    )
    fitted = fit_parameters(histories, before=cutoff) if fit else None
    if fitted is not None:
        named["fitted"] = fitted
    scores = {
        name: score_predictions(fsrs_predictions(histories, test, values), recalled)
        for name, values in named.items()
    }
    if sm2:
        scores["SM-2"] = score_predictions(sm2_predictions(histories, test), recalled)
    return Evaluation(cutoff, histories.count_before(cutoff), scores, fitted)
