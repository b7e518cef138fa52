"""Accounts and learner settings (each backend)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from quizsvc.models import LearnerSettings
from quizsvc.services import Conflict, InvalidInput, resolve_now
from quizsvc.services.settings import (
    get_or_create_settings,
    load_settings,
    update_settings,
)
from quizsvc.services.users import create_user, find_user

T0 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)


def test_users_are_created_checked_and_found(db_session):
    """Are usernames, roles, locales and time zones checked, and users findable?"""
    teacher = create_user(
        db_session,
        "wang.laoshi",
        role="teacher",
        locale="en",
        timezone="Europe/Berlin",
        now=T0,
    )
    assert find_user(db_session, "wang.laoshi") is teacher
    assert find_user(db_session, "nobody") is None
    with pytest.raises(Conflict):
        create_user(db_session, "wang.laoshi", now=T0)
    for bad in (
        {"username": "has space"},
        {"username": ""},
        {"username": "x", "role": "root"},
        {"username": "x", "locale": "fr"},
        {"username": "x", "timezone": "Mars/Olympus"},
    ):
        with pytest.raises(InvalidInput):
            create_user(db_session, **{"now": T0, **bad})


def test_settings_default_from_the_profile_until_stored(db_session):
    """Are a learner's settings defaults (from their profile) until first saved?"""
    user = create_user(
        db_session, "zhao", timezone="America/Toronto", locale="en", now=T0
    )
    defaults = load_settings(db_session, user)
    assert (defaults.timezone, defaults.language, defaults.desired_retention) == (
        "America/Toronto",
        "en",
        0.9,
    )
    assert db_session.get(LearnerSettings, user.id) is None  # nothing stored yet
    stored = get_or_create_settings(db_session, user, now=T0)
    assert db_session.get(LearnerSettings, user.id) is stored
    assert get_or_create_settings(db_session, user, now=T0) is stored


def test_settings_updates_are_checked_all_or_nothing(db_session):
    """Are settings validated before any is applied, with form-style values accepted?"""
    user = create_user(db_session, "sun", now=T0)
    settings = update_settings(
        db_session,
        user,
        new_per_day="15",
        desired_retention=0.85,
        two_button_mode=True,
        timezone="UTC",
        now=T0,
    )
    assert (settings.new_per_day, settings.desired_retention) == (15, 0.85)
    assert settings.two_button_mode is True and settings.timezone == "UTC"
    for bad in (
        {"desired_retention": 0.5},
        {"desired_retention": "nan"},
        {"new_per_day": 2.5},
        {"new_per_day": True},
        {"rollover_hour": 24},
        {"two_button_mode": "yes"},
        {"language": "de"},
        {"timezone": "Nowhere/Land"},
        {"colour": "blue"},
    ):
        with pytest.raises(InvalidInput):
            update_settings(db_session, user, reviews_per_day=7, now=T0, **bad)
        assert settings.reviews_per_day == 100  # the valid change was not applied


def test_times_must_be_timezone_aware():
    """Is a naive `now` refused and an aware one converted to UTC?"""
    with pytest.raises(InvalidInput, match="naive"):
        resolve_now(datetime(2026, 1, 1))
    assert resolve_now(T0).tzinfo is UTC
