"""The explanations tab: what learners wrote after wrong answers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from quizsvc.models import (
    Explanation,
    Review,
)
from quizsvc.services.class_reports.common import (
    Period,
    class_learner_ids,
)

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
    limit: int = EXPLANATIONS_SHOWN,
) -> list[ExplanationEntry]:
    """The class's explanations of wrong answers, newest first."""
    period = period or Period(timezone=classroom.timezone)
    query = (
        select(
            Review.user_id,
            Review.item_id,
            Explanation.body,
            Explanation.created_at,
            Review.answer_text,
            Review.misconception,
        )
        .join(Review, Review.id == Explanation.review_id)
        .where(
            Explanation.user_id.in_(class_learner_ids(classroom.id)),
            *period.where(Review.reviewed_at),
        )
        .order_by(Explanation.created_at.desc(), Explanation.id.desc())
        .limit(limit)
    )
    if item_id is not None:
        query = query.where(Review.item_id == item_id)
    if user_id is not None:
        query = query.where(Explanation.user_id == user_id)
    return [ExplanationEntry(*row) for row in session.execute(query)]


def group_by_item(
    entries: list[ExplanationEntry],
) -> list[tuple[str, list[ExplanationEntry]]]:
    """Group explanations per item; the item with the newest one comes first."""
    groups: dict[str, list[ExplanationEntry]] = {}
    for entry in entries:
        groups.setdefault(entry.item_id, []).append(entry)
    return list(groups.items())
