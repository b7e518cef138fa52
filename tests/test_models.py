"""The schema's own guarantees, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError, StatementError

from quizsvc.models import Card, Item, LearnerSettings, Lesson, Review, User
from quizsvc.scheduling import GradedAnswer
from quizsvc.services.bank_sync import sync_bank
from quizsvc.services.users import create_user
from tests.factories import record_answer

T0 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)


def test_timestamps_come_back_in_utc_and_aware(db_session):
    """Is a time stored from any offset returned as the same instant, aware, in UTC?"""
    beijing = timezone(timedelta(hours=8))
    user = create_user(
        db_session, "ada", now=datetime(2026, 5, 1, 9, 30, tzinfo=beijing)
    )
    db_session.commit()
    db_session.expire_all()
    stored = db_session.get(User, user.id).created_at
    assert stored == datetime(2026, 5, 1, 1, 30, tzinfo=UTC)
    assert stored.utcoffset() == timedelta(0)


def test_naive_timestamps_are_refused(db_session):
    """Is a naive datetime refused rather than guessed to be UTC?"""
    db_session.add(User(username="bob", created_at=datetime(2026, 1, 1)))
    with pytest.raises(StatementError, match="naive datetime"):
        db_session.flush()


def test_comparisons_on_timestamps_use_the_instant(db_session):
    """Do queries compare instants, whatever offset the bound value carries?"""
    create_user(db_session, "cy", now=T0)
    db_session.commit()
    tokyo = timezone(timedelta(hours=9))
    just_after = (T0 + timedelta(seconds=1)).astimezone(tokyo)
    assert db_session.scalar(select(User).where(User.created_at < just_after))
    assert not db_session.scalar(select(User).where(User.created_at > just_after))


def test_usernames_are_unique(db_session):
    """Can two accounts share a username? (The database says no.)"""
    db_session.add_all(
        [User(username="dup", created_at=T0), User(username="dup", created_at=T0)]
    )
    with pytest.raises(IntegrityError):
        db_session.flush()


def test_check_constraints_hold_in_the_database(db_session):
    """Does the database itself refuse a role or setting outside the rules?"""
    db_session.add(User(username="eve", role="superuser", created_at=T0))
    with pytest.raises(IntegrityError):
        db_session.flush()
    db_session.rollback()
    user = create_user(db_session, "eve", now=T0)
    db_session.add(
        LearnerSettings(
            user_id=user.id, timezone="UTC", rollover_hour=24, updated_at=T0
        )
    )
    with pytest.raises(IntegrityError):
        db_session.flush()


def test_reviews_are_append_only_and_deleting_a_user_removes_their_record(
    db_session, small_bank
):
    """Can a stored review be edited? And does a deleted account take its rows along?"""
    sync_bank(db_session, small_bank, now=T0)
    user = create_user(db_session, "fay", now=T0)
    result = record_answer(
        db_session, user, "shapes-1", graded=GradedAnswer(correct=True), now=T0
    )
    db_session.commit()
    review = db_session.get(Review, result.id)
    review.rating = 4
    with pytest.raises(ValueError, match="append-only"):
        db_session.flush()
    db_session.rollback()
    db_session.delete(db_session.get(User, user.id))
    db_session.commit()
    assert db_session.scalars(select(Review)).all() == []
    assert db_session.scalars(select(Card)).all() == []
    # Content stays: items and lessons outlive learners.
    assert db_session.get(Item, "shapes-1") and db_session.get(Lesson, "lesson-15")


def test_items_in_use_cannot_be_deleted(db_session, small_bank):
    """Is deleting an item that has reviews refused (items are retired instead)?"""
    sync_bank(db_session, small_bank, now=T0)
    user = create_user(db_session, "gus", now=T0)
    record_answer(
        db_session, user, "output-1", graded=GradedAnswer(correct=False), now=T0
    )
    db_session.commit()
    db_session.delete(db_session.get(Item, "output-1"))
    with pytest.raises(IntegrityError):
        db_session.flush()
