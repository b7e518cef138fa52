"""The overview tab: one row of figures per learner, and the heatmap."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
from sqlalchemy import and_, case, func, select, true
from sqlalchemy.orm import Session

from quizsvc.models import (
    STATE_NEW,
    Card,
    Item,
    LearnerSettings,
    Review,
    User,
)
from quizsvc.services import resolve_now
from quizsvc.services.class_reports.common import (
    Period,
    class_learner_ids,
    epoch_seconds,
)
from quizsvc.services.class_reports.recall import (
    SkillHeatmap,
    class_recall,
    skill_heatmap,
)
from quizsvc.services.classes import class_learners, learner_name

DEFAULT_ROLLOVER_HOUR = 4
# Streaks are first counted over this many days; longer ones are counted again.
STREAK_WINDOW_DAYS = 35


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
    mean_recall: float | None

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
        }


def _streaks(
    session: Session, class_id: int, user_ids: list[int], now: datetime
) -> dict[int, int]:
    """Each learner's streak of learner days with answers, as the Today page counts.

    Days are counted in SQL from each learner's shift (their zone's offset now,
    less their rollover hour), first over a short window; only learners whose
    streak fills the window are counted again over STREAK_HORIZON_DAYS.
    """
    # Imported here: the drill's imports (grading, the bank) would slow every
    # command that loads this module, `quizsvc export` among them.
    from quizsvc.services.drill import STREAK_HORIZON_DAYS

    if not user_ids:
        return {}
    shifts: dict[int, int] = {}
    for user_id, profile, chosen, hour in session.execute(
        select(
            User.id,
            User.timezone,
            LearnerSettings.timezone,
            LearnerSettings.rollover_hour,
        )
        .outerjoin(LearnerSettings, LearnerSettings.user_id == User.id)
        .where(User.id.in_(class_learner_ids(class_id)))
    ):
        zone = ZoneInfo(chosen or profile)
        offset = int(zone.utcoffset(now.replace(tzinfo=None)).total_seconds())
        rollover = DEFAULT_ROLLOVER_HOUR if hour is None else hour
        # Shifting every moment by the zone's offset less the rollover hour
        # makes learner days whole multiples of 86400 seconds.
        shifts[user_id] = offset - 3600 * rollover
    now_seconds = int(now.timestamp())
    streaks = {user_id: 0 for user_id in user_ids}
    pending = list(shifts)
    for window in (STREAK_WINDOW_DAYS, STREAK_HORIZON_DAYS + 1):
        if not pending:
            break
        by_shift: dict[int, list[int]] = defaultdict(list)
        for user_id in pending:
            by_shift[shifts[user_id]].append(user_id)
        shift = case(
            *((Review.user_id.in_(ids), value) for value, ids in by_shift.items()),
            else_=0,
        )
        day = ((epoch_seconds(Review.reviewed_at) + shift) // 86400).label("day")
        days: dict[int, set[int]] = defaultdict(set)
        for user_id, number in session.execute(
            select(Review.user_id, day)
            .where(
                Review.user_id.in_(pending),
                Review.reviewed_at >= now - timedelta(days=window + 1),
            )
            .group_by(Review.user_id, day)
        ):
            days[user_id].add(int(number))
        full = []
        for user_id in pending:
            today = (now_seconds + shifts[user_id]) // 86400
            active = days.get(user_id, set())
            # A streak still counts while today has no answer yet.
            streak = 1 if today in active else 0
            day = today - 1
            while day in active:
                streak += 1
                day -= 1
            streaks[user_id] = streak
            if streak >= window - 1:
                full.append(user_id)
        pending = full
    return streaks


@dataclass(frozen=True)
class Overview:
    """The class overview: learner rows and the learners × skills heatmap."""

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
            .where(Review.user_id.in_(ids))
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
    index = {user_id: i for i, user_id in enumerate(user_ids)}
    positions = np.array([index[u] for u in cards.user_id.tolist()], dtype=np.int64)
    card_counts = np.bincount(positions, minlength=len(user_ids))
    recall_sums = np.bincount(positions, weights=cards.recall, minlength=len(user_ids))
    streaks = _streaks(session, classroom.id, user_ids, now)
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
                mean_recall=float(recall_sums[i] / card_counts[i])
                if card_counts[i]
                else None,
            )
        )
    return Overview(tuple(rows), skill_heatmap(session, user_ids, cards), period)


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
    "recall": lambda r: (r.mean_recall is None, r.mean_recall or 0.0),
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
        "recall": row.mean_recall,
    }.get(key, 0)
    return value is None
