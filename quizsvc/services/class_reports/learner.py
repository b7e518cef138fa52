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
from quizsvc.services.sharing import answer_for_teachers, is_self_rated, review_shared

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
    # A recall item the learner rated: its note stays theirs (answer_text None).
    self_rated: bool = False


def recent_reviews(
    session: Session,
    user_id: int,
    limit: int = RECENT_REVIEWS_SHOWN,
    *,
    class_id: int | None = None,
) -> list[ReviewLine]:
    """A learner's latest answers with what they typed and wrote, newest first.

    For a teacher: a recall item's self-note is left out, and with `class_id`
    only the answers the learner shares with that class are read.
    """
    conditions = [Review.user_id == user_id]
    if class_id is not None:
        conditions.append(review_shared(class_id))
    rows = session.execute(
        select(
            Review.reviewed_at,
            Review.item_id,
            Review.correct,
            Review.rating,
            answer_for_teachers(),
            Review.misconception,
            Review.duration_ms,
            Review.problem_kind,
            Review.problem_level,
            Review.problem_seed,
            Explanation.body,
            is_self_rated(),
        )
        .outerjoin(Explanation, Explanation.review_id == Review.id)
        .where(*conditions)
        .order_by(Review.reviewed_at.desc(), Review.id.desc())
        .limit(limit)
    )
    return [ReviewLine(*row) for row in rows]
