"""Users: create and look up accounts (passwords and sessions: services.accounts)."""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import case, or_, select
from sqlalchemy.orm import Session

from quizsvc.models import LANGUAGES, ROLES, User, username_key
from quizsvc.services import resolve_now
from quizsvc.services.errors import N_, Conflict, InvalidInput

USERNAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def check_timezone(name: str) -> str:
    """Return an IANA time zone name, or raise InvalidInput when unknown."""
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidInput(
            N_("Unknown time zone '%(zone)s' (e.g. Asia/Shanghai)."),
            field="timezone",
            zone=name,
        ) from None
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
    """Add a user; usernames are unique ignoring case (letters, digits, `.`, `_`, `-`).

    Full-width letters and digits typed with a Chinese input method are read as
    their ASCII forms (NFKC); the case is kept for display.
    """
    username = unicodedata.normalize("NFKC", username)
    if not USERNAME_PATTERN.match(username):
        raise InvalidInput(
            N_(
                "The username '%(username)s' must be 1-64 letters, digits, '.', "
                "'_' or '-' (starting with a letter or digit)."
            ),
            field="username",
            username=username,
        )
    if role not in ROLES:
        raise InvalidInput(
            N_("The role must be one of %(roles)s, not '%(role)s'."),
            field="role",
            roles=list(ROLES),
            role=role,
        )
    if locale not in LANGUAGES:
        raise InvalidInput(
            N_("The language must be one of %(languages)s."),
            field="locale",
            languages=list(LANGUAGES),
        )
    if find_user(session, username) is not None:
        raise Conflict(
            N_("The username '%(username)s' is taken; choose another."),
            field="username",
            username=username,
        )
    user = User(
        username=username,
        username_key=username_key(username),
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
    """Return the user with this username (ignoring case and Unicode form), or None."""
    # The exact spelling first: an account whose key collided with an older
    # one's when keys were introduced (revision 0005) is found only that way.
    exact = User.username == username
    return session.scalar(
        select(User)
        .where(or_(exact, User.username_key == username_key(username)))
        .order_by(case((exact, 0), else_=1))
        .limit(1)
    )
