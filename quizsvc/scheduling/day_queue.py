"""The learner's day and the daily queue.

`learner_day` finds the learner's day from their time zone and rollover hour;
`build_queue` picks due reviews (lowest retrievability first), then new items
(unlocked lessons, skill order, skills staggered), within the day's limits, and
never puts two items of one skill back to back when it can avoid it, counting
the latest answers too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

from quizsvc.scheduling.cards import (
    LEARNING_STEPS,
    RELEARNING_STEPS,
    STATE_LEARNING,
    STATE_RELEARNING,
    STATE_REVIEW,
    _as_utc,
)

# A card in a learning step that comes due within this much of now joins the
# queue now, as Anki's "learn ahead limit" does, rather than leaving a gap —
# but only once STEP_SPACING of its step has passed since its last answer.
LEARN_AHEAD = timedelta(minutes=20)
# The least share of a learning step that must pass before the card is asked
# again (1-minute step: 30 s; 10-minute step: 5 min). Otherwise a step is
# pulled forward whenever the queue runs dry, and the "spaced" repeat comes
# seconds after the answer it was meant to space out.
STEP_SPACING = 0.5


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
