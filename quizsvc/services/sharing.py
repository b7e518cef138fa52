"""What a learner shares with a class's teachers, as SQL conditions.

The promises a learner reads on the join page, kept in one place:
- answers from the moment they joined on (`Membership.joined_at`), and their
  earlier ones only if they chose to share them (`Membership.share_history`);
- a recall item's self-note ("only for yourself") never: teachers see that the
  item was rated and the rating, not the text;
- nothing once they leave: the membership row is gone, so every condition here
  is false.
Every teacher page, class export, xAPI statement and grade reads reviews and
self-ratings through these.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import case, exists, null, or_
from sqlalchemy.sql.expression import ColumnElement

from quizsvc.models import Membership, Review, SelfAssessment

# Reviews whose rating the learner chose (recall items): their answer text is
# a note to themselves.
SELF_RATED = "learner"


def _shared_since(class_id: int, user_id: Any, moment: Any) -> ColumnElement[bool]:
    return exists().where(
        Membership.class_id == class_id,
        Membership.role == "learner",
        Membership.user_id == user_id,
        or_(Membership.share_history, moment >= Membership.joined_at),
    )


def review_shared(class_id: int) -> ColumnElement[bool]:
    """True for a review the class's teachers may see."""
    return _shared_since(class_id, Review.user_id, Review.reviewed_at)


def self_rating_shared(class_id: int) -> ColumnElement[bool]:
    """True for a self-assessment the class's teachers may see."""
    return _shared_since(class_id, SelfAssessment.user_id, SelfAssessment.assessed_at)


def shared_since(learners: Any, moment: Any) -> ColumnElement[bool]:
    """The same rule over a learners subquery with joined_at and share_history."""
    return or_(learners.c.share_history, moment >= learners.c.joined_at)


def answer_for_teachers() -> ColumnElement[Any]:
    """A review's answer text as teachers may see it: none for a self-note."""
    return case((Review.rating_source == SELF_RATED, null()), else_=Review.answer_text)


def is_self_rated() -> ColumnElement[bool]:
    """True for a recall review, rated by the learner."""
    return Review.rating_source == SELF_RATED
