"""The overview tab: one row of figures per learner, and the heatmap."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from sqlalchemy import and_, case, func, select, true
from sqlalchemy.orm import Session

from quizsvc.models import (
    STATE_NEW,
    Card,
    Item,
    Review,
)
from quizsvc.services import resolve_now
from quizsvc.services.class_reports.common import (
    Period,
    class_learner_ids,
)
from quizsvc.services.class_reports.recall import (
    SkillHeatmap,
    class_recall,
    skill_heatmap,
)
from quizsvc.services.classes import class_learners, learner_name
from quizsvc.services.progress import RECALL_HORIZON
from quizsvc.services.sharing import review_shared
from quizsvc.services.streaks import learning_streaks


@dataclass(frozen=True)
class LearnerRow:
    """One learner's figures on the class overview."""

    user_id: int
    username: str
    name: str
    student_number: str | None
    joined_at: datetime
    last_active: datetime | None
    streak: int
    reviews_7d: int
    reviews_30d: int
    reviews_in_period: int
    correct_in_period: int
    overdue: int
    cards: int
    # Raw FSRS retrievability now: near 1 minutes after any review.
    mean_recall: float | None
    # Predicted recall RECALL_HORIZON_DAYS ahead: what the pages show.
    recall_at_horizon: float | None = None

    @property
    def accuracy(self) -> float | None:
        """The share of the period's answers that were right."""
        if not self.reviews_in_period:
            return None
        return self.correct_in_period / self.reviews_in_period

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable view."""
        return {
            "user_id": self.user_id,
            "username": self.username,
            "name": self.name,
            "student_number": self.student_number,
            "joined_at": self.joined_at.isoformat(),
            "last_active": self.last_active.isoformat() if self.last_active else None,
            "streak": self.streak,
            "reviews_7d": self.reviews_7d,
            "reviews_30d": self.reviews_30d,
            "reviews_in_period": self.reviews_in_period,
            "accuracy": self.accuracy,
            "overdue": self.overdue,
            "cards": self.cards,
            "mean_recall": self.mean_recall,
            "recall_now": self.mean_recall,
            "recall_in_7_days": self.recall_at_horizon,
        }


@dataclass(frozen=True)
class Overview:
    """The class overview: learner rows and the learners × skills heatmap.

    The heatmap is predicted recall RECALL_HORIZON_DAYS ahead, as on the rows.
    """

    rows: tuple[LearnerRow, ...]
    heatmap: SkillHeatmap
    period: Period


def class_overview(
    session: Session,
    classroom: Any,
    *,
    period: Period | None = None,
    now: datetime | None = None,
) -> Overview:
    """Gather every learner's figures and recall per skill, in a few queries."""
    now = resolve_now(now)
    period = period or Period(timezone=classroom.timezone)
    memberships = class_learners(session, classroom)
    user_ids = [m.user_id for m in memberships]
    ids = class_learner_ids(classroom.id)
    conditions = period.where(Review.reviewed_at)
    in_period = and_(*conditions) if conditions else true()

    def count_if(condition) -> Any:
        return func.coalesce(func.sum(case((condition, 1), else_=0)), 0)

    activity = {
        row.user_id: row
        for row in session.execute(
            select(
                Review.user_id,
                func.max(Review.reviewed_at).label("last_active"),
                count_if(Review.reviewed_at >= now - timedelta(days=7)).label("d7"),
                count_if(Review.reviewed_at >= now - timedelta(days=30)).label("d30"),
                count_if(in_period).label("in_period"),
                count_if(and_(in_period, Review.correct)).label("correct"),
            )
            .where(Review.user_id.in_(ids), review_shared(classroom.id))
            .group_by(Review.user_id)
        )
    }
    overdue = dict(
        session.execute(
            select(Card.user_id, func.count())
            .join(Item, Item.id == Card.item_id)
            .where(
                Card.user_id.in_(ids),
                Card.state != STATE_NEW,
                Card.due < now,
                Item.retired_at.is_(None),
            )
            .group_by(Card.user_id)
        ).all()
    )
    cards = class_recall(session, classroom.id, now)
    ahead = cards.at(now + RECALL_HORIZON)
    index = {user_id: i for i, user_id in enumerate(user_ids)}
    positions = np.array([index[u] for u in cards.user_id.tolist()], dtype=np.int64)
    card_counts = np.bincount(positions, minlength=len(user_ids))

    def means(recall: np.ndarray) -> list[float | None]:
        sums = np.bincount(positions, weights=recall, minlength=len(user_ids))
        return [
            float(total / count) if count else None
            for total, count in zip(sums, card_counts, strict=True)
        ]

    recall_now, recall_ahead = means(cards.recall), means(ahead.recall)
    streaks = learning_streaks(session, user_ids, now, shared_with_class=classroom.id)
    rows = []
    for i, membership in enumerate(memberships):
        found = activity.get(membership.user_id)
        rows.append(
            LearnerRow(
                user_id=membership.user_id,
                username=membership.user.username,
                name=learner_name(membership),
                student_number=membership.student_number,
                joined_at=membership.joined_at,
                last_active=found.last_active if found else None,
                streak=streaks.get(membership.user_id, 0),
                reviews_7d=int(found.d7) if found else 0,
                reviews_30d=int(found.d30) if found else 0,
                reviews_in_period=int(found.in_period) if found else 0,
                correct_in_period=int(found.correct) if found else 0,
                overdue=int(overdue.get(membership.user_id, 0)),
                cards=int(card_counts[i]),
                mean_recall=recall_now[i],
                recall_at_horizon=recall_ahead[i],
            )
        )
    return Overview(tuple(rows), skill_heatmap(session, user_ids, ahead), period)


# Sort keys of the overview table: the query string names one of these.
SORT_KEYS = {
    "number": lambda r: (r.student_number is None, r.student_number or "", r.name),
    "name": lambda r: (r.name.casefold(), r.user_id),
    "last_active": lambda r: (r.last_active is None, r.last_active or datetime.min),
    "streak": lambda r: r.streak,
    "reviews_7d": lambda r: r.reviews_7d,
    "reviews_30d": lambda r: r.reviews_30d,
    "overdue": lambda r: r.overdue,
    "accuracy": lambda r: (r.accuracy is None, r.accuracy or 0.0),
    "recall": lambda r: (r.recall_at_horizon is None, r.recall_at_horizon or 0.0),
}


def sort_rows(
    rows: tuple[LearnerRow, ...], key: str, descending: bool
) -> list[LearnerRow]:
    """Sort overview rows by a SORT_KEYS name; learners without a value stay last."""
    sorter = SORT_KEYS.get(key, SORT_KEYS["number"])
    if not descending:
        return sorted(rows, key=sorter)
    with_value = [r for r in rows if not _missing(r, key)]
    return sorted(with_value, key=sorter, reverse=True) + [
        r for r in rows if _missing(r, key)
    ]


def _missing(row: LearnerRow, key: str) -> bool:
    value = {
        "number": row.student_number,
        "last_active": row.last_active,
        "accuracy": row.accuracy,
        "recall": row.recall_at_horizon,
    }.get(key, 0)
    return value is None
