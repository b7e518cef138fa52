"""The learner's daily queue: `build_daily_queue(session, user, now)`, and
`daily_plan` (the queue with what is done of the day, for its progress).

The database part: read the learner's cards (which are due, which items are
started, how far they are into each lesson) and what they answered today, each
with one indexed query bounded by the learner's own rows; the bank's lessons
and items come from the worker's copy (quizsvc.services.bank_cache). The
policy (order, limits, prerequisites, spreading skills) is
`quizsvc.scheduling.build_queue`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from sqlalchemy import and_, bindparam, select
from sqlalchemy.orm import Session

from quizsvc import scheduling
from quizsvc.models import STATE_NEW, Card, ItemSkill, Review, User
from quizsvc.services import resolve_now
from quizsvc.services.bank_cache import BankSnapshot, bank_snapshot
from quizsvc.services.parameters import current_parameters
from quizsvc.services.settings import load_settings

# Items whose primary skill is unknown come after every ordered skill.
_UNORDERED = 1_000_000


@dataclass(frozen=True)
class DailyPlan:
    """The queue now, and what the learner has already done of their day."""

    queue: list[scheduling.QueueEntry]
    # Items answered at least once today: the done part of the day's plan.
    answered_items: frozenset[str]
    # Answers today, learning-step repeats included.
    answers: int
    # Learning steps due later today that the queue does not hold yet (the
    # spacing rule keeps them back), and when the first of them may be asked.
    held_back: int = 0
    next_ready: datetime | None = None
    # The answers still planned today if every one is right: one per review,
    # every learning step left per learning card (a new item: all of them).
    planned: int = 0

    @property
    def position(self) -> int:
        """The place of the next answer in the day: answers given + 1."""
        return self.answers + 1

    @property
    def total(self) -> int:
        """The answers planned for today so far: those given and those still
        planned, learning steps included (a new item needs one answer per
        learning step). A wrong answer adds a step, so it may grow by one; it
        is never less than `position` while work is queued."""
        return self.answers + self.planned

    def is_repeat(self, item_id: str) -> bool:
        """Whether the item was answered earlier today (a learning-step repeat)."""
        return item_id in self.answered_items


def build_daily_queue(
    session: Session, user: User, now: datetime | None = None
) -> list[scheduling.QueueEntry]:
    """Return what the learner should do now, in order (see scheduling.build_queue)."""
    return daily_plan(session, user, now).queue


def daily_plan(session: Session, user: User, now: datetime | None = None) -> DailyPlan:
    """Build the queue and count what the learner has done today."""
    now = resolve_now(now)
    settings = load_settings(session, user)
    day_start, day_end = scheduling.learner_day(
        now, settings.timezone, settings.rollover_hour
    )
    today = session.execute(
        _ANSWERED_TODAY,
        {"user_id": user.id, "day_start": day_start, "day_end": day_end},
    ).all()
    introduced = sum(row.state_before == STATE_NEW for row in today)
    latest = today[-1] if today else None
    decay = scheduling.decay_of(current_parameters(session, user))
    snapshot = bank_snapshot(session)
    cards = session.execute(_CARDS, {"user_id": user.id}).all()
    new_items, lessons = _unstarted_items(cards, snapshot)
    due_cards = _due_cards(cards, snapshot, now, day_end, decay)
    queue = scheduling.build_queue(
        due_cards,
        new_items,
        lessons,
        now=now,
        day_end=day_end,
        reviews_remaining=settings.reviews_per_day - len(today),
        new_remaining=settings.new_per_day - introduced,
        previous_skill=latest.skill_id if latest else None,
        just_answered=latest.item_id if latest else None,
    )
    queued = {entry.item_id for entry in queue}
    held = [
        card
        for card in due_cards
        if card.state != scheduling.STATE_REVIEW and card.item_id not in queued
    ]
    cards = {card.item_id: card for card in due_cards}
    new_item_answers = len(scheduling.LEARNING_STEPS) or 1
    planned = sum(
        new_item_answers if entry.kind == "new" else cards[entry.item_id].answers_left()
        for entry in queue
    ) + sum(card.answers_left() for card in held)
    return DailyPlan(
        queue=queue,
        planned=planned,
        answered_items=frozenset(row.item_id for row in today),
        answers=len(today),
        held_back=len(held),
        next_ready=scheduling.next_ready(
            held,
            now=now,
            day_end=day_end,
            just_answered=latest.item_id if latest else None,
        ),
    )


# The queue's statements are built once, with bound parameters: every drill
# step runs them, and building a statement (and its cache key) each time costs
# several times what the database takes to answer it.
_ANSWERED_TODAY = (
    select(Review.item_id, Review.state_before, ItemSkill.skill_id)
    .outerjoin(
        ItemSkill,
        and_(ItemSkill.item_id == Review.item_id, ItemSkill.position == 0),
    )
    .where(
        Review.user_id == bindparam("user_id"),
        Review.reviewed_at >= bindparam("day_start"),
        Review.reviewed_at < bindparam("day_end"),
    )
    .order_by(Review.reviewed_at, Review.id)
)
# The learner's cards, all of them (at most one per bank item): the due ones
# and which items are started both come from this one read, with the bank's
# side from the worker's copy (quizsvc.services.bank_cache).
_CARDS = select(
    Card.item_id, Card.state, Card.due, Card.stability, Card.last_review, Card.step
).where(Card.user_id == bindparam("user_id"))


def _due_cards(
    cards: list[Any],
    snapshot: BankSnapshot,
    now: datetime,
    day_end: datetime,
    decay: float,
) -> list[scheduling.DueCard]:
    rows = [
        card
        for card in cards
        if card.state != STATE_NEW
        and card.due < day_end
        and card.item_id in snapshot.items
    ]
    if not rows:
        return []
    stability = np.array(
        [r.stability if r.stability is not None else np.nan for r in rows]
    )
    last = scheduling.to_datetime64(r.last_review for r in rows)
    recall = scheduling.retrievability_at(stability, last, now, decay)
    return [
        scheduling.DueCard(
            r.item_id,
            snapshot.items[r.item_id].skill_id,
            r.state,
            r.due,
            float(p),
            r.last_review,
            r.step,
        )
        for r, p in zip(rows, recall, strict=True)
    ]


def _unstarted_items(
    cards: list[Any], snapshot: BankSnapshot
) -> tuple[list[scheduling.NewItem], dict[str, scheduling.LessonProgress]]:
    lesson_position = {
        lesson_id: position for lesson_id, position, _ in snapshot.lessons
    }
    state_of = {card.item_id: card.state for card in cards}
    totals = dict.fromkeys(lesson_position, 0)
    started = dict.fromkeys(lesson_position, 0)
    new_items = []
    # Each item's place in its skill counts the items already started, so the
    # skills stay staggered from one day to the next.
    in_skill: dict[tuple[str, str | None], int] = {}
    for item in snapshot.ordered:  # in bank order, lessons retired left out
        totals[item.lesson_id] += 1
        skill_index = in_skill.get((item.lesson_id, item.skill_id), 0)
        in_skill[(item.lesson_id, item.skill_id)] = skill_index + 1
        state = state_of.get(item.id)
        if state is not None and state != STATE_NEW:
            started[item.lesson_id] += 1
            continue
        order = (
            lesson_position[item.lesson_id],
            item.skill_position if item.skill_position is not None else _UNORDERED,
            item.position,
        )
        new_items.append(
            scheduling.NewItem(
                item.id, item.skill_id, item.lesson_id, order, skill_index
            )
        )
    lessons = {
        lesson_id: scheduling.LessonProgress(
            prerequisites, started[lesson_id], totals[lesson_id]
        )
        for lesson_id, _position, prerequisites in snapshot.lessons
    }
    return new_items, lessons
