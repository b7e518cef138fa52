"""The misconceptions tab: named mistakes in the class's answers."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import and_, func, select
from sqlalchemy.orm import Session

from quizsvc.models import (
    ItemSkill,
    Review,
)
from quizsvc.services.class_reports.common import (
    Period,
    class_learner_ids,
)

MISCONCEPTION_EXAMPLES = 3


@dataclass(frozen=True)
class MisconceptionExample:
    """A wrong answer that shows a misconception, with its practice problem."""

    user_id: int
    item_id: str
    reviewed_at: datetime
    answer_text: str | None
    problem_kind: str | None
    problem_level: int | None
    problem_seed: int | None


@dataclass
class MisconceptionReport:
    """One misconception in this class: how often, on which skills, by whom."""

    misconception: str
    count: int = 0
    by_skill: dict[str, int] = field(default_factory=dict)
    by_learner: dict[int, int] = field(default_factory=dict)
    examples: list[MisconceptionExample] = field(default_factory=list)


def class_misconceptions(
    session: Session, classroom: Any, *, period: Period | None = None
) -> list[MisconceptionReport]:
    """The misconceptions named in the class's answers, most frequent first."""
    period = period or Period(timezone=classroom.timezone)
    named = [
        Review.user_id.in_(class_learner_ids(classroom.id)),
        Review.misconception.is_not(None),
        *period.where(Review.reviewed_at),
    ]
    # One pass: counts per misconception, learner and primary skill.
    reports: dict[str, MisconceptionReport] = {}
    for name, user_id, skill_id, count in session.execute(
        select(Review.misconception, Review.user_id, ItemSkill.skill_id, func.count())
        .outerjoin(
            ItemSkill,
            and_(ItemSkill.item_id == Review.item_id, ItemSkill.position == 0),
        )
        .where(*named)
        .group_by(Review.misconception, Review.user_id, ItemSkill.skill_id)
    ):
        report = reports.setdefault(name, MisconceptionReport(name))
        report.count += count
        report.by_learner[user_id] = report.by_learner.get(user_id, 0) + count
        if skill_id is not None:
            report.by_skill[skill_id] = report.by_skill.get(skill_id, 0) + count
    rank = (
        func.row_number()
        .over(
            partition_by=Review.misconception,
            order_by=(Review.reviewed_at.desc(), Review.id.desc()),
        )
        .label("rank")
    )
    ranked = select(Review.id, rank).where(*named).subquery()
    for review in session.execute(
        select(
            Review.misconception,
            Review.user_id,
            Review.item_id,
            Review.reviewed_at,
            Review.answer_text,
            Review.problem_kind,
            Review.problem_level,
            Review.problem_seed,
        )
        .join(ranked, ranked.c.id == Review.id)
        .where(ranked.c.rank <= MISCONCEPTION_EXAMPLES)
        .order_by(Review.reviewed_at.desc(), Review.id.desc())
    ):
        reports[review.misconception].examples.append(
            MisconceptionExample(
                review.user_id,
                review.item_id,
                review.reviewed_at,
                review.answer_text,
                review.problem_kind,
                review.problem_level,
                review.problem_seed,
            )
        )
    return sorted(reports.values(), key=lambda r: (-r.count, r.misconception))
