"""Learner settings: daily limits, desired retention, day rollover, buttons."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from quizsvc.db.transactions import phase_cache
from quizsvc.models import LANGUAGES, LearnerSettings, User
from quizsvc.services import resolve_now
from quizsvc.services.errors import N_, InvalidInput
from quizsvc.services.users import check_timezone

# What a learner may change (the settings page and the API show these).
SETTING_NAMES = (
    "desired_retention",
    "new_per_day",
    "reviews_per_day",
    "timezone",
    "rollover_hour",
    "two_button_mode",
    "language",
)

# The rule each value must meet.
_RULES: dict[str, tuple[type, Any, str]] = {
    "desired_retention": (
        float,
        lambda v: 0.7 <= v <= 0.99,
        N_("%(name)s must be between 0.70 and 0.99."),
    ),
    "new_per_day": (
        int,
        lambda v: 0 <= v <= 1000,
        N_("%(name)s must be a whole number from 0 to 1000."),
    ),
    "reviews_per_day": (
        int,
        lambda v: 0 <= v <= 10000,
        N_("%(name)s must be a whole number from 0 to 10000."),
    ),
    "rollover_hour": (
        int,
        lambda v: 0 <= v <= 23,
        N_("%(name)s must be an hour from 0 to 23."),
    ),
    "two_button_mode": (bool, lambda v: True, N_("%(name)s must be true or false.")),
    "language": (
        str,
        lambda v: v in LANGUAGES,
        N_("%(name)s must be zh-CN or en."),
    ),
    "timezone": (
        str,
        lambda v: bool(check_timezone(v)),
        N_("%(name)s must be an IANA time zone, such as Asia/Shanghai."),
    ),
}


def _defaults(user: User) -> LearnerSettings:
    return LearnerSettings(
        user_id=user.id,
        desired_retention=0.9,
        new_per_day=10,
        reviews_per_day=100,
        rollover_hour=4,
        timezone=user.timezone,
        two_button_mode=False,
        language=user.locale,
    )


def load_settings(session: Session, user: User) -> LearnerSettings:
    """Return the learner's settings, or unsaved defaults when none are stored."""
    known = _known_settings(session)
    if user.id not in known:
        known[user.id] = session.get(LearnerSettings, user.id) or _defaults(user)
    return known[user.id]


def _known_settings(session: Session) -> dict[int, LearnerSettings]:
    """Settings already read in this transaction, by user id.

    A request reads them in several places (language, queue, day, rating); the
    session's identity map forgets an object nobody holds, and never remembers
    that a learner has none stored, so each read would be a query again.
    """
    return phase_cache(session, "learner_settings")


def get_or_create_settings(
    session: Session, user: User, *, now: datetime | None = None
) -> LearnerSettings:
    """Return the learner's stored settings, storing the defaults first if needed."""
    settings = session.get(LearnerSettings, user.id)
    if settings is None:
        settings = _defaults(user)
        settings.updated_at = resolve_now(now)
        session.add(settings)
        session.flush()
    _known_settings(session)[user.id] = settings
    return settings


def update_settings(
    session: Session, user: User, *, now: datetime | None = None, **changes: Any
) -> LearnerSettings:
    """Change some settings; every value is checked before any is applied."""
    checked = {}
    for name, value in changes.items():
        if name not in _RULES:
            raise InvalidInput(
                N_("There is no setting %(name)s; the settings are %(known)s."),
                field=name,
                name=name,
                known=list(SETTING_NAMES),
            )
        kind, rule, refusal = _RULES[name]
        converted = _coerce(kind, value)
        try:
            valid = converted is not None and rule(converted)
        except InvalidInput:
            valid = False
        if not valid:
            raise InvalidInput(refusal, field=name, name=name)
        checked[name] = converted
    settings = get_or_create_settings(session, user, now=now)
    for name, value in checked.items():
        setattr(settings, name, value)
    settings.updated_at = resolve_now(now)
    session.flush()
    return settings


def apply_settings(
    session: Session, user: User, changes: dict[str, Any]
) -> LearnerSettings:
    """Change some settings and keep the profile's time zone and language in step."""
    settings = update_settings(session, user, **changes)
    # Dates on every page are shown in the profile's time zone, and new
    # defaults come from its locale: both follow what the learner chose here.
    if "timezone" in changes:
        user.timezone = settings.timezone
    if "language" in changes:
        user.locale = settings.language
    session.flush()
    return settings


def settings_dict(settings: LearnerSettings) -> dict[str, Any]:
    """Return the learner's settings as a plain dict (the API's JSON)."""
    return {name: getattr(settings, name) for name in SETTING_NAMES}


def _coerce(kind: type, value: Any) -> Any:
    """Convert form or JSON input to `kind`; None when it does not fit exactly."""
    if kind is bool:
        return value if isinstance(value, bool) else None
    if isinstance(value, bool):
        return None
    try:
        if kind is int:
            number = float(value)
            return int(number) if number.is_integer() else None
        if kind is float:
            number = float(value)
            return number if number == number else None
    except (TypeError, ValueError, OverflowError):
        return None
    return value if isinstance(value, str) else None
