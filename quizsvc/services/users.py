"""Users: create and look up accounts (passwords and sessions: services.accounts)."""

from __future__ import annotations

import unicodedata
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import case, or_, select
from sqlalchemy.orm import Session

from quizsvc.models import LANGUAGES, ROLES, User, username_key
from quizsvc.services import resolve_now
from quizsvc.services.errors import N_, Conflict, InvalidInput

MAX_USERNAME_LENGTH = 64
USERNAME_PUNCTUATION = "._-"


def _username_char_ok(char: str, first: bool) -> bool:
    # Letters of any script (汉字, kana, Cyrillic, …) and decimal digits; the
    # combining marks some scripts write words with may follow a letter.
    category = unicodedata.category(char)
    if category.startswith("L") or category == "Nd":
        return True
    if first:
        return False
    return category in ("Mn", "Mc") or char in USERNAME_PUNCTUATION


def check_username(username: str) -> str:
    """Return the username in NFKC form, or raise InvalidInput naming the rule.

    Full-width letters and digits typed with a Chinese input method become their
    ASCII forms; uniqueness ignores case (models.username_key).
    """
    username = unicodedata.normalize("NFKC", username)
    valid = 1 <= len(username) <= MAX_USERNAME_LENGTH and all(
        _username_char_ok(char, index == 0) for index, char in enumerate(username)
    )
    if not valid:
        raise InvalidInput(
            N_(
                "The username '%(username)s' must be 1-64 letters (of any "
                "script, Chinese too) or digits; '.', '_' and '-' may follow the "
                "first character."
            ),
            field="username",
            username=username,
        )
    return username


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
    """Add a user; usernames are unique ignoring case and Unicode form (letters
    of any script, digits, `.`, `_`, `-`; see check_username). The case is kept
    for display.
    """
    username = check_username(username)
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
