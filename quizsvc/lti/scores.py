"""The one call from LTI into quizsvc's grade rules (the exports' rules).

The grade pushed to the LMS is the number the Canvas and gradebook exports
show for the same rule, out of SCORE_MAXIMUM:

- accuracy: the share of right answers to the lesson's items (all dates);
- retention: predicted recall at the start of a day in the class's time zone
  (default: a week from today).
"""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy.orm import Session

from quizsvc.models import Classroom
from quizsvc.services.grades import GradeRule, grade_lesson, grade_shares

RULES = ("accuracy", "retention")
SCORE_MAXIMUM = 100


def learner_scores(
    session: Session,
    classroom: Classroom,
    rule: str,
    *,
    retention_date: date | None = None,
    now: datetime | None = None,
) -> dict[int, float]:
    """Each learner's score out of SCORE_MAXIMUM by `rule`, by user id."""
    if rule not in RULES:
        raise ValueError(f"unknown rule {rule!r}")
    grade_rule = GradeRule(rule, retention_date if rule == "retention" else None)
    shares = grade_shares(
        session, classroom, grade_rule, grade_lesson(session, None), now=now
    )
    return {
        user_id: round(share * SCORE_MAXIMUM, 2) for user_id, share in shares.items()
    }
