"""One streak rule for a learner and for a class, across daylight-saving changes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from quizsvc.scheduling import GradedAnswer
from quizsvc.services.bank_sync import sync_bank
from quizsvc.services.drill import learning_streak
from quizsvc.services.streaks import learner_date, learning_streaks
from quizsvc.services.users import create_user
from tests.factories import record_answer

T0 = datetime(2026, 10, 1, tzinfo=UTC)
RIGHT = GradedAnswer(correct=True)


def local(zone: str, *fields: int) -> datetime:
    return datetime(*fields, tzinfo=ZoneInfo(zone)).astimezone(UTC)


def answer_at(session, user, moments) -> None:
    for moment in moments:
        record_answer(session, user, "scores-1", graded=RIGHT, now=moment)
    session.flush()


@pytest.fixture
def bank(db_session, small_bank):
    sync_bank(db_session, small_bank, now=T0)
    db_session.commit()


def test_a_streak_runs_through_the_autumn_clock_change(db_session, bank):
    """New York leaves summer time on 1 November 2026: an answer at 04:10 each
    morning is one answer per learner day before and after, so six mornings
    are a streak of six (counting days with today's offset split them)."""
    zone = "America/New_York"
    user = create_user(db_session, "lin", timezone=zone, now=T0)
    mornings = [local(zone, 2026, 10, day, 4, 10) for day in (29, 30, 31)]
    mornings += [local(zone, 2026, 11, day, 4, 10) for day in (1, 2, 3)]
    answer_at(db_session, user, mornings)
    now = local(zone, 2026, 11, 3, 12, 0)
    assert learning_streak(db_session, user, now) == 6
    assert learning_streaks(db_session, [user.id], now) == {user.id: 6}


def test_the_rollover_hour_splits_days_in_spring_too(db_session, bank):
    """Berlin enters summer time on 29 March 2026. An answer at 03:50 belongs to
    the learner day before (the day turns at 04:00 local, whatever the offset);
    a gap of one learner day ends the streak."""
    zone = "Europe/Berlin"
    user = create_user(db_session, "mia", timezone=zone, now=T0)
    answer_at(
        db_session,
        user,
        [
            local(zone, 2026, 3, 27, 3, 50),  # learner day 26 March
            local(zone, 2026, 3, 28, 3, 50),  # 27 March
            local(zone, 2026, 3, 29, 3, 50),  # 28 March (summer time began)
            local(zone, 2026, 3, 29, 4, 10),  # 29 March
            local(zone, 2026, 3, 30, 4, 10),  # 30 March
        ],
    )
    now = local(zone, 2026, 3, 31, 3, 59)  # still learner day 30 March
    assert learning_streak(db_session, user, now) == 5
    later = local(zone, 2026, 4, 1, 4, 0)  # 1 April: 31 March had no answer
    assert learning_streak(db_session, user, later) == 0


def test_a_class_counts_each_learner_as_their_own_page_does(db_session, bank):
    """Does the set-based count for many learners give each the one-learner figure?"""
    people = {
        "ana": ("Asia/Shanghai", 3),
        "bo": ("America/New_York", 5),
        "cy": ("Asia/Kolkata", 0),
    }
    now = datetime(2026, 11, 3, 17, 0, tzinfo=UTC)
    users = []
    for name, (zone, days) in people.items():
        user = create_user(db_session, name, timezone=zone, now=T0)
        answer_at(
            db_session, user, [now - timedelta(days=d, hours=1) for d in range(days)]
        )
        users.append(user)
    together = learning_streaks(db_session, [u.id for u in users], now)
    assert together == {u.id: learning_streak(db_session, u, now) for u in users}
    assert [together[u.id] for u in users] == [3, 5, 0]


def test_a_learner_day_turns_at_the_rollover_hour_in_local_time():
    zone = ZoneInfo("America/New_York")
    before = local("America/New_York", 2026, 11, 1, 3, 59)
    after = local("America/New_York", 2026, 11, 1, 4, 0)
    assert str(learner_date(before, zone, 4)) == "2026-10-31"
    assert str(learner_date(after, zone, 4)) == "2026-11-01"
