"""Counts over the learner's day: answers today (the streak is services.streaks)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from quizsvc import scheduling
from quizsvc.models import Review, User
from quizsvc.services import resolve_now
from quizsvc.services.settings import load_settings
from quizsvc.services.streaks import STREAK_HORIZON_DAYS, learning_streak

__all__ = ["STREAK_HORIZON_DAYS", "learning_streak", "reviewed_today"]


def _day_bounds(
    session: Session, user: User, now: datetime
) -> tuple[datetime, datetime]:
    settings = load_settings(session, user)
    return scheduling.learner_day(now, settings.timezone, settings.rollover_hour)


def reviewed_today(session: Session, user: User, now: datetime | None = None) -> int:
    """How many answers the learner recorded since their day began."""
    now = resolve_now(now)
    start, _end = _day_bounds(session, user, now)
    return (
        session.scalar(
            select(func.count())
            .select_from(Review)
            .where(Review.user_id == user.id, Review.reviewed_at >= start)
        )
        or 0
    )
