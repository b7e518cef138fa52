"""The learner's daily queue: `build_daily_queue(session, user, now)`.

The database part: read the learner's due cards, the items they have not
started, how far they are into each lesson and what they answered today, each
with one indexed query bounded by the learner's own rows. The policy (order,
limits, prerequisites, spreading skills) is `quizsvc.scheduling.build_queue`.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np
from sqlalchemy import and_, case, func, select
from sqlalchemy.orm import Session

from quizsvc import scheduling
from quizsvc.models import STATE_NEW, Card, Item, ItemSkill, Lesson, Review, Skill, User
from quizsvc.services import resolve_now
from quizsvc.services.parameters import current_parameters
from quizsvc.services.settings import load_settings

# Items whose primary skill is unknown come after every ordered skill.
_UNORDERED = 1_000_000


def build_daily_queue(
    session: Session, user: User, now: datetime | None = None
) -> list[scheduling.QueueEntry]:
    """Return what the learner should do now, in order (see scheduling.build_queue)."""
    now = resolve_now(now)
    settings = load_settings(session, user)
    day_start, day_end = scheduling.learner_day(
        now, settings.timezone, settings.rollover_hour
    )
    answered, introduced = session.execute(
        select(
            func.count(Review.id),
            func.coalesce(
                func.sum(case((Review.state_before == STATE_NEW, 1), else_=0)), 0
            ),
        ).where(
            Review.user_id == user.id,
            Review.reviewed_at >= day_start,
            Review.reviewed_at < day_end,
        )
    ).one()
    decay = scheduling.decay_of(current_parameters(session, user))
    new_items, lessons = _unstarted_items(session, user)
    return scheduling.build_queue(
        _due_cards(session, user, now, day_end, decay),
        new_items,
        lessons,
        now=now,
        day_end=day_end,
        reviews_remaining=settings.reviews_per_day - answered,
        new_remaining=settings.new_per_day - introduced,
    )


def _primary_skill():
    return and_(ItemSkill.item_id == Item.id, ItemSkill.position == 0)


def _due_cards(
    session: Session, user: User, now: datetime, day_end: datetime, decay: float
) -> list[scheduling.DueCard]:
    rows = session.execute(
        select(
            Card.item_id,
            ItemSkill.skill_id,
            Card.state,
            Card.due,
            Card.stability,
            Card.last_review,
        )
        .join(Item, Item.id == Card.item_id)
        .outerjoin(ItemSkill, _primary_skill())
        .where(
            Card.user_id == user.id,
            Card.due < day_end,
            Card.state != STATE_NEW,
            Item.retired_at.is_(None),
        )
    ).all()
    if not rows:
        return []
    stability = np.array(
        [r.stability if r.stability is not None else np.nan for r in rows]
    )
    last = scheduling.to_datetime64(r.last_review for r in rows)
    recall = scheduling.retrievability_at(stability, last, now, decay)
    return [
        scheduling.DueCard(r.item_id, r.skill_id, r.state, r.due, float(p))
        for r, p in zip(rows, recall, strict=True)
    ]


def _unstarted_items(
    session: Session, user: User
) -> tuple[list[scheduling.NewItem], dict[str, scheduling.LessonProgress]]:
    lesson_rows = session.execute(
        select(Lesson.id, Lesson.position, Lesson.prerequisites).where(
            Lesson.retired_at.is_(None)
        )
    ).all()
    lesson_position = {row.id: row.position for row in lesson_rows}
    rows = session.execute(
        select(
            Item.id,
            Item.lesson_id,
            Item.position,
            ItemSkill.skill_id,
            Skill.position.label("skill_position"),
            Card.state,
        )
        .outerjoin(ItemSkill, _primary_skill())
        .outerjoin(Skill, Skill.id == ItemSkill.skill_id)
        .outerjoin(Card, and_(Card.item_id == Item.id, Card.user_id == user.id))
        .where(Item.retired_at.is_(None))
    ).all()
    totals = dict.fromkeys(lesson_position, 0)
    started = dict.fromkeys(lesson_position, 0)
    new_items = []
    for row in rows:
        if row.lesson_id not in lesson_position:
            continue
        totals[row.lesson_id] += 1
        if row.state is not None and row.state != STATE_NEW:
            started[row.lesson_id] += 1
            continue
        order = (
            lesson_position[row.lesson_id],
            row.skill_position if row.skill_position is not None else _UNORDERED,
            row.position,
        )
        new_items.append(scheduling.NewItem(row.id, row.skill_id, row.lesson_id, order))
    lessons = {
        row.id: scheduling.LessonProgress(
            tuple(row.prerequisites or ()), started[row.id], totals[row.id]
        )
        for row in lesson_rows
    }
    return new_items, lessons
