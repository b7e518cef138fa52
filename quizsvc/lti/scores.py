"""The one call from LTI into quizsvc's score rules (the Canvas export's).

`learner_scores` is the single place to point at another rules function: the
grade pushed to the LMS is the number the Canvas gradebook export shows for
the same rule, out of 100.

- accuracy: the share of right answers to the lesson's items (the export's
  `accuracy` rule, all dates);
- retention: predicted recall on a date (default: a week from now), i.e. the
  export's recall rule evaluated at that date.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy.orm import Session

from quizsvc.models import Classroom
from quizsvc.services import resolve_now
from quizsvc.services.class_reports import class_overview
from quizsvc.services.exports import ExportOptions, canvas_table

RULES = ("accuracy", "retention")
SCORE_MAXIMUM = 100
RETENTION_DAYS = 7
# The export's rule names for ours.
_EXPORT_RULES = {"accuracy": "accuracy", "retention": "mastery"}


def retention_moment(
    classroom: Classroom, on: date | None, now: datetime | None
) -> datetime:
    """The moment retention is predicted for: noon of `on` in the class's zone."""
    now = resolve_now(now)
    zone = ZoneInfo(classroom.timezone)
    day = on or (now.astimezone(zone).date() + timedelta(days=RETENTION_DAYS))
    return datetime.combine(day, time(12), zone)


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
    at = resolve_now(now)
    if rule == "retention":
        at = retention_moment(classroom, retention_date, now)
    options = ExportOptions(rule=_EXPORT_RULES[rule], points=SCORE_MAXIMUM, now=at)
    table = canvas_table(session, classroom, options)
    # The export names learners, not ids: its rows follow the overview's rows.
    period = options.dates.period(classroom.timezone)
    learners = class_overview(session, classroom, period=period, now=at).rows
    scores = {}
    for learner, row in zip(learners, table.rows, strict=True):
        assert (row[0], row[2]) == (learner.name, learner.student_number)
        scores[learner.user_id] = float(row[-1])
    return scores
