"""The calibration tab: self-ratings against the measured record."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from quizsvc.models import (
    ItemSkill,
    Review,
    SelfAssessment,
    Skill,
)
from quizsvc.services import resolve_now
from quizsvc.services.class_reports.common import (
    class_learner_ids,
)
from quizsvc.services.class_reports.recall import (
    class_recall,
    skill_heatmap,
)
from quizsvc.services.classes import class_learners
from quizsvc.services.insights import (
    RECENT_ANSWERS_PER_SKILL,
    RECENT_DAYS,
    Calibration,
    calibrate,
)
from quizsvc.services.progress import RECALL_HORIZON
from quizsvc.services.sharing import review_shared, self_rating_shared


@dataclass(frozen=True)
class CalibrationCell:
    """A learner's latest self-rating of a skill against the measured record."""

    level: int | None
    recall: float | None
    recent_answers: int
    recent_correct: int
    verdict: Calibration

    @property
    def accuracy(self) -> float | None:
        """Recent accuracy on the skill."""
        if not self.recent_answers:
            return None
        return self.recent_correct / self.recent_answers


@dataclass(frozen=True)
class CalibrationReport:
    """Cells per learner (rows, in roster order) and skill (columns)."""

    user_ids: tuple[int, ...]
    skills: tuple[Skill, ...]
    cells: tuple[tuple[CalibrationCell, ...], ...]

    def counts(self) -> dict[str, int]:
        """How many cells have each verdict."""
        totals: dict[str, int] = defaultdict(int)
        for row in self.cells:
            for cell in row:
                totals[cell.verdict] += 1
        return dict(totals)


def class_calibration(
    session: Session, classroom: Any, now: datetime | None = None
) -> CalibrationReport:
    """Each learner's latest self-rating per skill against recall and accuracy.

    The rule is the learner's own self-assessment page's
    (quizsvc.services.insights.calibrate): recent accuracy over the last
    RECENT_DAYS, at most RECENT_ANSWERS_PER_SKILL answers per skill.
    """
    now = resolve_now(now)
    user_ids = [m.user_id for m in class_learners(session, classroom)]
    # The recall the learner's own page shows and judges: RECALL_HORIZON ahead.
    ahead = class_recall(session, classroom.id, now + RECALL_HORIZON)
    heatmap = skill_heatmap(session, user_ids, ahead)
    ids = class_learner_ids(classroom.id)
    latest_rank = (
        func.row_number()
        .over(
            partition_by=(SelfAssessment.user_id, SelfAssessment.skill_id),
            order_by=(SelfAssessment.assessed_at.desc(), SelfAssessment.id.desc()),
        )
        .label("rank")
    )
    rated = (
        select(
            SelfAssessment.user_id,
            SelfAssessment.skill_id,
            SelfAssessment.level,
            latest_rank,
        )
        .where(SelfAssessment.user_id.in_(ids), self_rating_shared(classroom.id))
        .subquery()
    )
    levels = {
        (user_id, skill_id): level
        for user_id, skill_id, level in session.execute(
            select(rated.c.user_id, rated.c.skill_id, rated.c.level).where(
                rated.c.rank == 1
            )
        )
    }
    recent_rank = (
        func.row_number()
        .over(
            partition_by=(Review.user_id, ItemSkill.skill_id),
            order_by=(Review.reviewed_at.desc(), Review.id.desc()),
        )
        .label("rank")
    )
    recent = (
        select(Review.user_id, ItemSkill.skill_id, Review.correct, recent_rank)
        .join(ItemSkill, ItemSkill.item_id == Review.item_id)
        .where(
            Review.user_id.in_(ids),
            review_shared(classroom.id),
            Review.reviewed_at >= now - timedelta(days=RECENT_DAYS),
        )
        .subquery()
    )
    accuracy = {
        (user_id, skill_id): (int(answers), int(right or 0))
        for user_id, skill_id, answers, right in session.execute(
            select(
                recent.c.user_id,
                recent.c.skill_id,
                func.count(),
                func.sum(case((recent.c.correct, 1), else_=0)),
            )
            .where(recent.c.rank <= RECENT_ANSWERS_PER_SKILL)
            .group_by(recent.c.user_id, recent.c.skill_id)
        )
    }
    cells = []
    for i, user_id in enumerate(user_ids):
        row = []
        for j, skill in enumerate(heatmap.skills):
            level = levels.get((user_id, skill.id))
            value = heatmap.recall[i, j]
            recall = None if np.isnan(value) else float(value)
            answers, right = accuracy.get((user_id, skill.id), (0, 0))
            row.append(
                CalibrationCell(
                    level,
                    recall,
                    answers,
                    right,
                    calibrate(
                        level, recall, right / answers if answers else None, answers
                    ),
                )
            )
        cells.append(tuple(row))
    return CalibrationReport(tuple(user_ids), heatmap.skills, tuple(cells))
