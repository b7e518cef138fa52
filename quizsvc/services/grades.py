"""A class's grades by the teacher's rule: what an LMS's grade column holds.

`grade_shares` gives each learner of a class a share from 0 to 1 under one
rule; the Canvas and gradebook exports multiply it by the points, and the
dashboard can show the same figure before anything is exported. Grades are
for one lesson (by default the bank's first).

- accuracy (the default): the share of right answers to the lesson's items
  in the period (no answers: 0);
- retention: the predicted recall at the start of a day (by default 7 days
  after today, in the class's time zone): the mean, over the lesson's skills,
  of the learner's mean recall of that skill's cards, a skill not started
  counting 0; what the learner is expected to still know that day;
- recall_now: the same now. Right after a session it is close to 1 whatever
  the accuracy, so it is a rule to choose knowingly, never the default.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import numpy as np
from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from quizsvc.models import Classroom, Item, Lesson, Review
from quizsvc.services import resolve_now
from quizsvc.services.class_reports import (
    Period,
    class_recall,
    skill_heatmap,
)
from quizsvc.services.classes import class_learners
from quizsvc.services.errors import N_, InvalidInput
from quizsvc.services.sharing import review_shared

RULES = ("accuracy", "retention", "recall_now")
DEFAULT_RULE = "accuracy"
# The retention date when none is given: a week after the export.
RETENTION_DAYS = 7
# How far ahead a retention date may be: the forgetting curve says little
# about ten years from now.
MAX_RETENTION_DAYS = 3650
RULE_TITLES = {
    "accuracy": {"zh-CN": "正确率", "en": "accuracy"},
    "retention": {"zh-CN": "{day} 的记忆保持", "en": "retention on {day}"},
    "recall_now": {"zh-CN": "当前记忆", "en": "recall now"},
}


@dataclass(frozen=True)
class GradeRule:
    """How a learner's share of the points is worked out."""

    name: str = DEFAULT_RULE
    # retention: the day recall is predicted for (None: RETENTION_DAYS on).
    retention_date: date | None = None

    def __post_init__(self) -> None:
        if self.name == "mastery":
            raise InvalidInput(
                N_(
                    "the mastery rule is now called recall_now (predicted recall "
                    "now); accuracy is the default, retention predicts a later day"
                ),
                field="rule",
            )
        if self.name not in RULES:
            raise InvalidInput(
                N_("unknown score rule '%(rule)s': choose %(rules)s"),
                rule=self.name,
                rules=list(RULES),
                field="rule",
            )
        if self.retention_date is not None and self.name != "retention":
            raise InvalidInput(
                N_("retention_date goes with rule=retention only"),
                field="retention_date",
            )

    def day(self, timezone: str, now: datetime | None = None) -> date:
        """Return the retention day (the default counted from today in `timezone`)."""
        today = resolve_now(now).astimezone(ZoneInfo(timezone)).date()
        return self.retention_date or today + timedelta(days=RETENTION_DAYS)

    def check_day(self, timezone: str, now: datetime | None = None) -> None:
        """Refuse a retention day before today or too far ahead (class days)."""
        if self.name != "retention" or self.retention_date is None:
            return
        today = resolve_now(now).astimezone(ZoneInfo(timezone)).date()
        last = today + timedelta(days=MAX_RETENTION_DAYS)
        if not today <= self.retention_date <= last:
            raise InvalidInput(
                N_(
                    "retention_date must be from today (%(today)s) to %(last)s: "
                    "it predicts recall to come."
                ),
                today=today.isoformat(),
                last=last.isoformat(),
                field="retention_date",
            )

    def title(self, language: str, timezone: str, now: datetime | None = None) -> str:
        """Return the rule's name as a grade column's title says it."""
        text = RULE_TITLES[self.name].get(language) or RULE_TITLES[self.name]["en"]
        return text.format(day=self.day(timezone, now).isoformat())


def parse_grade_rule(name: str | None, retention_date: str | None) -> GradeRule:
    """Read the `rule` and `retention_date` (YYYY-MM-DD) of a request or command."""
    name = (name or "").strip() or DEFAULT_RULE
    day = None
    if retention_date is not None and retention_date.strip():
        text = retention_date.strip()
        try:
            day = date.fromisoformat(text)
        except ValueError:
            raise InvalidInput(
                N_("retention_date '%(text)s' is not a date; write it as 2026-09-01."),
                text=text[:40],
                field="retention_date",
            ) from None
    return GradeRule(name, day)


def grade_lesson(session: Session, lesson_id: str | None) -> Lesson | None:
    """Return the lesson graded: the one asked for, else the bank's first.

    An unknown lesson is an InvalidInput; None only before a bank is synced.
    """
    query = select(Lesson).where(Lesson.retired_at.is_(None))
    if lesson_id is None:
        return session.scalar(query.order_by(Lesson.position).limit(1))
    found = session.scalar(query.where(Lesson.id == lesson_id))
    if found is None:
        known = list(session.scalars(select(Lesson.id).order_by(Lesson.position)))
        raise InvalidInput(
            N_("unknown lesson '%(lesson)s'; known: %(known)s"),
            lesson=lesson_id,
            known=known,
            field="lesson",
        )
    return found


def grade_shares(
    session: Session,
    classroom: Classroom,
    rule: GradeRule,
    lesson: Lesson | None,
    *,
    period: Period | None = None,
    now: datetime | None = None,
) -> dict[int, float]:
    """Return each learner's share (0 to 1) of the points under `rule`.

    Every learner of the class has a share (0 with nothing to count).
    `period` bounds the answers `accuracy` counts (None: all of them).
    """
    now = resolve_now(now)
    user_ids = [m.user_id for m in class_learners(session, classroom)]
    shares = dict.fromkeys(user_ids, 0.0)
    if lesson is None or not user_ids:
        return shares
    if rule.name == "accuracy":
        period = period or Period(timezone=classroom.timezone)
        shares.update(_accuracy(session, classroom.id, user_ids, lesson.id, period))
        return shares
    moment = now
    if rule.name == "retention":
        rule.check_day(classroom.timezone, now)
        day = rule.day(classroom.timezone, now)
        zone = ZoneInfo(classroom.timezone)
        moment = datetime.combine(day, time(0), tzinfo=zone).astimezone(UTC)
    shares.update(_recall(session, classroom, user_ids, lesson.id, moment))
    return shares


def _accuracy(
    session: Session,
    class_id: int,
    user_ids: list[int],
    lesson_id: str,
    period: Period,
) -> dict[int, float]:
    """Return the share of right answers to a lesson's items, per learner.

    Only the answers the learner shares with the class count.
    """
    query = (
        select(
            Review.user_id,
            func.count(),
            func.sum(case((Review.correct, 1), else_=0)),
        )
        .join(Item, (Item.id == Review.item_id) & (Item.lesson_id == lesson_id))
        .where(
            Review.user_id.in_(user_ids),
            review_shared(class_id),
            *period.where(Review.reviewed_at),
        )
        .group_by(Review.user_id)
    )
    return {user_id: right / total for user_id, total, right in session.execute(query)}


def _recall(
    session: Session,
    classroom: Classroom,
    user_ids: list[int],
    lesson_id: str,
    moment: datetime,
) -> dict[int, float]:
    """Return the mean over a lesson's skills of each learner's recall at `moment`.

    A skill the learner has no card of counts 0.
    """
    heatmap = skill_heatmap(
        session, user_ids, class_recall(session, classroom.id, moment)
    )
    columns = [
        j for j, skill in enumerate(heatmap.skills) if skill.lesson_id == lesson_id
    ]
    if not columns:
        return {}
    recall = np.where(heatmap.cards > 0, heatmap.recall, 0.0)[:, columns]
    means = recall.sum(axis=1) / len(columns)
    return {
        int(user_id): float(mean)
        for user_id, mean in zip(heatmap.user_ids, means, strict=True)
    }
