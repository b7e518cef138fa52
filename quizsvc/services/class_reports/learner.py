"""The per-learner page: one learner's recent answers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from quizsvc.models import (
    Explanation,
    Review,
)

RECENT_REVIEWS_SHOWN = 50


@dataclass(frozen=True)
class ReviewLine:
    """One of a learner's recent answers, as typed."""

    reviewed_at: datetime
    item_id: str
    correct: bool
    rating: int
    answer_text: str | None
    misconception: str | None
    duration_ms: int | None
    problem_kind: str | None
    problem_level: int | None
    problem_seed: int | None
    explanation: str | None


def recent_reviews(
    session: Session, user_id: int, limit: int = RECENT_REVIEWS_SHOWN
) -> list[ReviewLine]:
    """A learner's latest answers with what they typed and wrote, newest first."""
    rows = session.execute(
        select(
            Review.reviewed_at,
            Review.item_id,
            Review.correct,
            Review.rating,
            Review.answer_text,
            Review.misconception,
            Review.duration_ms,
            Review.problem_kind,
            Review.problem_level,
            Review.problem_seed,
            Explanation.body,
        )
        .outerjoin(Explanation, Explanation.review_id == Review.id)
        .where(Review.user_id == user_id)
        .order_by(Review.reviewed_at.desc(), Review.id.desc())
        .limit(limit)
    )
    return [ReviewLine(*row) for row in rows]
