"""Counts over the learner's days: answers today and the learning streak."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from quizsvc import scheduling
from quizsvc.models import Review, User
from quizsvc.services import resolve_now
from quizsvc.services.settings import load_settings

# Streaks are counted over at most this many past days (one query, bounded).
STREAK_HORIZON_DAYS = 400


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


def learning_streak(session: Session, user: User, now: datetime | None = None) -> int:
    """Consecutive learner days with at least one answer, up to today.

    A streak still counts while today has no answer yet: it ends only when a
    whole day passes without one.
    """
    now = resolve_now(now)
    settings = load_settings(session, user)
    start, _end = scheduling.learner_day(now, settings.timezone, settings.rollover_hour)
    horizon = start - timedelta(days=STREAK_HORIZON_DAYS)
    times = session.scalars(
        select(Review.reviewed_at).where(
            Review.user_id == user.id, Review.reviewed_at >= horizon
        )
    )
    days = {(start - moment).days if moment < start else -1 for moment in times}
    # `days` holds how many whole days before today's start each answer was:
    # -1 is today, 0 yesterday, 1 the day before, ...
    streak = 1 if -1 in days else 0
    offset = 0
    while offset in days:
        streak += 1
        offset += 1
    return streak
