"""The explanations tab: what learners wrote after wrong answers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from quizsvc.models import (
    Explanation,
    Review,
)
from quizsvc.services.class_reports.common import (
    Period,
    class_learner_ids,
)
from quizsvc.services.sharing import answer_for_teachers, review_shared

EXPLANATIONS_SHOWN = 300


@dataclass(frozen=True)
class ExplanationEntry:
    """What one learner wrote after a wrong answer."""

    user_id: int
    item_id: str
    body: str
    written_at: datetime
    answer_text: str | None
    misconception: str | None


def class_explanations(
    session: Session,
    classroom: Any,
    *,
    period: Period | None = None,
    item_id: str | None = None,
    user_id: int | None = None,
    written_after: datetime | None = None,
    limit: int = EXPLANATIONS_SHOWN,
    offset: int = 0,
) -> list[ExplanationEntry]:
    """The class's explanations of wrong answers, newest first.

    `written_after` keeps those written later (a teacher's unread ones);
    `limit` and `offset` page through them.
    """
    query = _explanations(
        select(
            Review.user_id,
            Review.item_id,
            Explanation.body,
            Explanation.created_at,
            answer_for_teachers(),
            Review.misconception,
        ),
        classroom,
        period,
        item_id,
        user_id,
        written_after,
    )
    query = (
        query.order_by(Explanation.created_at.desc(), Explanation.id.desc())
        .limit(limit)
        .offset(offset)
    )
    return [ExplanationEntry(*row) for row in session.execute(query)]


def count_explanations(
    session: Session,
    classroom: Any,
    *,
    period: Period | None = None,
    user_id: int | None = None,
    written_after: datetime | None = None,
) -> int:
    """How many explanations `class_explanations` would page through."""
    query = _explanations(
        select(func.count()), classroom, period, None, user_id, written_after
    )
    return int(session.scalar(query) or 0)


def _explanations(query, classroom, period, item_id, user_id, written_after):
    period = period or Period(timezone=classroom.timezone)
    query = (
        query.select_from(Explanation)
        .join(Review, Review.id == Explanation.review_id)
        .where(
            Explanation.user_id.in_(class_learner_ids(classroom.id)),
            review_shared(classroom.id),
            *period.where(Review.reviewed_at),
        )
    )
    if item_id is not None:
        query = query.where(Review.item_id == item_id)
    if user_id is not None:
        query = query.where(Explanation.user_id == user_id)
    if written_after is not None:
        query = query.where(Explanation.created_at > written_after)
    return query


def group_by_item(
    entries: list[ExplanationEntry],
) -> list[tuple[str, list[ExplanationEntry]]]:
    """Group explanations per item; the item with the newest one comes first."""
    groups: dict[str, list[ExplanationEntry]] = {}
    for entry in entries:
        groups.setdefault(entry.item_id, []).append(entry)
    return list(groups.items())
