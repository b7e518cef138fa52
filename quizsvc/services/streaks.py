"""The learning streak: consecutive learner days with at least one answer.

One rule, counted for a list of learners at once (the class overview) and for
one learner as a list of one (Today, the progress page). A learner day runs
from the rollover hour to the next in the learner's own time zone, so it is 23
or 25 hours long across a daylight-saving change: the database groups answers
by quarter hour (every zone's offset is a whole number of quarter hours), and
each quarter hour is placed on its learner day with the zone's rules for that
moment, not the offset of today.

A streak still counts while today has no answer yet: it ends only when a whole
learner day passes without one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.orm import Session

from quizsvc.db.sql import epoch_seconds
from quizsvc.models import LearnerSettings, Review, User
from quizsvc.services import resolve_now
from quizsvc.services.sharing import review_shared

# Streaks are counted over at most this many past days (bounded queries).
STREAK_HORIZON_DAYS = 400
# Streaks are first counted over this many days; only learners whose streak
# fills it are counted again over the horizon.
STREAK_WINDOW_DAYS = 35
DEFAULT_ROLLOVER_HOUR = 4
_QUARTER_HOUR = 900


def learner_date(moment: datetime, zone: ZoneInfo, rollover_hour: int) -> date:
    """The learner day a moment falls on (as scheduling.learner_day counts)."""
    local = moment.astimezone(zone).replace(tzinfo=None)
    return (local - timedelta(hours=rollover_hour)).date()


def _day_rules(
    session: Session, user_ids: list[int]
) -> dict[int, tuple[ZoneInfo, int]]:
    """Each learner's time zone and rollover hour (their settings, else defaults)."""
    rules: dict[int, tuple[ZoneInfo, int]] = {}
    for user_id, profile, chosen, hour in session.execute(
        select(
            User.id,
            User.timezone,
            LearnerSettings.timezone,
            LearnerSettings.rollover_hour,
        )
        .outerjoin(LearnerSettings, LearnerSettings.user_id == User.id)
        .where(User.id.in_(user_ids))
    ):
        rollover = DEFAULT_ROLLOVER_HOUR if hour is None else hour
        rules[user_id] = (ZoneInfo(chosen or profile), rollover)
    return rules


def _run_back(active: set[date], today: date) -> int:
    streak = 1 if today in active else 0
    day = today - timedelta(days=1)
    while day in active:
        streak += 1
        day -= timedelta(days=1)
    return streak


def learning_streaks(
    session: Session,
    user_ids: Iterable[int],
    now: datetime | None = None,
    shared_with_class: int | None = None,
) -> dict[int, int]:
    """Each learner's streak of learner days with answers, up to today.

    With `shared_with_class`, only the answers that class's teachers may see
    count (services.sharing), so a streak never reveals unshared history.
    """
    now = resolve_now(now)
    ids = list(dict.fromkeys(user_ids))
    streaks = dict.fromkeys(ids, 0)
    if not ids:
        return streaks
    rules = _day_rules(session, ids)
    shared = () if shared_with_class is None else (review_shared(shared_with_class),)
    quarter = (epoch_seconds(Review.reviewed_at) // _QUARTER_HOUR).label("quarter")
    pending = [user_id for user_id in ids if user_id in rules]
    for window in (STREAK_WINDOW_DAYS, STREAK_HORIZON_DAYS + 1):
        if not pending:
            break
        days: dict[int, set[date]] = defaultdict(set)
        for user_id, number in session.execute(
            select(Review.user_id, quarter)
            .where(
                Review.user_id.in_(pending),
                Review.reviewed_at >= now - timedelta(days=window + 1),
                *shared,
            )
            .group_by(Review.user_id, quarter)
        ):
            zone, rollover = rules[user_id]
            moment = datetime.fromtimestamp(int(number) * _QUARTER_HOUR, UTC)
            days[user_id].add(learner_date(moment, zone, rollover))
        full = []
        for user_id in pending:
            zone, rollover = rules[user_id]
            streak = _run_back(days[user_id], learner_date(now, zone, rollover))
            streaks[user_id] = streak
            if streak >= window - 1:
                full.append(user_id)
        pending = full
    return streaks


def learning_streak(session: Session, user: User, now: datetime | None = None) -> int:
    """One learner's streak: the same rule, for a list of one."""
    return learning_streaks(session, [user.id], now)[user.id]
