"""Accounts: create and look up users (password hashing belongs to the web layer)."""

from __future__ import annotations

import re
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import select
from sqlalchemy.orm import Session

from quizsvc.models import LANGUAGES, ROLES, User
from quizsvc.services import Conflict, InvalidInput, resolve_now

USERNAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def check_timezone(name: str) -> str:
    """Return an IANA time zone name, or raise InvalidInput when unknown."""
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidInput(f"unknown time zone {name!r} (e.g. Asia/Shanghai)") from None
    return name


def create_user(
    session: Session,
    username: str,
    *,
    role: str = "learner",
    display_name: str | None = None,
    password_hash: str | None = None,
    locale: str = "zh-CN",
    timezone: str = "Asia/Shanghai",
    now: datetime | None = None,
) -> User:
    """Add a user; usernames are unique (letters, digits, `.`, `_`, `-`)."""
    if not USERNAME_PATTERN.match(username):
        raise InvalidInput(
            f"username {username!r} must be 1-64 letters, digits, '.', '_' or '-'"
        )
    if role not in ROLES:
        raise InvalidInput(f"role must be one of {', '.join(ROLES)}, not {role!r}")
    if locale not in LANGUAGES:
        raise InvalidInput(f"locale must be one of {', '.join(LANGUAGES)}")
    if find_user(session, username) is not None:
        raise Conflict(f"username {username!r} is taken")
    user = User(
        username=username,
        role=role,
        display_name=display_name,
        password_hash=password_hash,
        locale=locale,
        timezone=check_timezone(timezone),
        created_at=resolve_now(now),
    )
    session.add(user)
    session.flush()
    return user


def find_user(session: Session, username: str) -> User | None:
    """Return the user with this username, or None."""
    return session.scalar(select(User).where(User.username == username))
