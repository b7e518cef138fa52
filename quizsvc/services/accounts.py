"""Accounts: passwords, server-side sessions and personal API tokens.

Passwords are hashed with werkzeug (scrypt) and never logged; new passwords
that zxcvbn rates easy to guess are refused. An API token is shown to its
owner once; only its SHA-256 is stored, so a leaked database does not leak
working tokens.

Sessions live on the server: signing in stores a `UserSession` row whose
random secret goes in the cookie (see quizsvc.http.login), so signing out,
changing the password or "sign out everywhere" ends the session for every copy
of the cookie. Like every service, these functions take a session, flush and
never commit.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.orm import Session, joinedload
from sqlalchemy.sql import bindparam
from werkzeug.security import check_password_hash, generate_password_hash
from zxcvbn import zxcvbn

from quizsvc.models import ApiToken, User, UserSession
from quizsvc.services import resolve_now
from quizsvc.services.errors import N_, InvalidInput, NotFound
from quizsvc.services.users import create_user, find_user

MIN_PASSWORD_LENGTH = 8
MAX_PASSWORD_LENGTH = 256
# zxcvbn's scores run 0-4; 0 and 1 are guessed within about 10^6 attempts
# (common passwords, keyboard runs, a word with a digit added).
MIN_PASSWORD_SCORE = 2
# zxcvbn refuses longer input; the first 72 characters decide the score.
_ZXCVBN_MAX_LENGTH = 72
TOKEN_PREFIX = "qz_"
# A fixed hash to compare against when the username is unknown, so a login for
# a missing user costs as much time as one for a real user.
_DUMMY_HASH = generate_password_hash("not-a-real-password")


def hash_password(password: str) -> str:
    """Hash a password for storage."""
    return generate_password_hash(password)


def check_password_rules(password: str, username: str = "") -> None:
    """Raise InvalidInput when a new password is too short, too long or guessable."""
    if len(password) < MIN_PASSWORD_LENGTH:
        raise InvalidInput(
            N_("The password needs at least %(n)d characters."),
            field="password",
            n=MIN_PASSWORD_LENGTH,
        )
    if len(password) > MAX_PASSWORD_LENGTH:
        raise InvalidInput(
            N_("The password may have at most %(n)d characters."),
            field="password",
            n=MAX_PASSWORD_LENGTH,
        )
    estimate = zxcvbn(
        password[:_ZXCVBN_MAX_LENGTH],
        user_inputs=[username, "quizsvc", "attention"],
        max_length=_ZXCVBN_MAX_LENGTH,
    )
    if estimate["score"] < MIN_PASSWORD_SCORE:
        raise WeakPassword()


class WeakPassword(InvalidInput):
    """A new password that a guesser would find quickly."""

    code = "weak_password"
    field = "password"
    default_message = N_(
        "This password is too easy to guess (a common password, a keyboard run, "
        "repeated characters or close to the username). Choose a longer phrase "
        "of several unrelated words."
    )


def register(
    session: Session,
    username: str,
    password: str,
    *,
    locale: str = "zh-CN",
    now: datetime | None = None,
) -> User:
    """Create a learner account with a hashed password."""
    check_password_rules(password, username)
    return create_user(
        session,
        username.strip(),
        password_hash=hash_password(password),
        locale=locale,
        now=now,
    )


def authenticate(session: Session, username: str, password: str) -> User | None:
    """Return the user when the password matches, else None."""
    user = find_user(session, username.strip())
    if user is None or not user.password_hash:
        check_password_hash(_DUMMY_HASH, password)
        return None
    return user if check_password_hash(user.password_hash, password) else None


def token_digest(token: str) -> str:
    """Return the SHA-256 of a session or token secret, as stored."""
    return hashlib.sha256(token.encode()).hexdigest()


def start_session(session: Session, user: User, *, now: datetime | None = None) -> str:
    """Store a new server-side session for `user`; return its secret, for the cookie."""
    secret = secrets.token_urlsafe(32)
    session.add(
        UserSession(
            user_id=user.id,
            token_hash=token_digest(secret),
            created_at=resolve_now(now),
        )
    )
    session.flush()
    return secret


def end_sessions(
    session: Session,
    user: User,
    *,
    only: str | None = None,
    keep: str | None = None,
    now: datetime | None = None,
) -> int:
    """End the user's live sessions (just `only`, or all but `keep`); count them."""
    statement = update(UserSession).where(
        UserSession.user_id == user.id, UserSession.ended_at.is_(None)
    )
    if only is not None:
        statement = statement.where(UserSession.token_hash == token_digest(only))
    if keep is not None:
        statement = statement.where(UserSession.token_hash != token_digest(keep))
    result = session.execute(statement.values(ended_at=resolve_now(now)))
    return result.rowcount


def change_password(
    session: Session,
    user: User,
    current: str,
    new: str,
    *,
    keep_session: str | None = None,
    revoke_tokens: bool = False,
    now: datetime | None = None,
) -> int:
    """Change the password, end every other session; return sessions ended.

    With `revoke_tokens`, the user's API tokens are revoked as well.
    """
    if not user.password_hash or not check_password_hash(user.password_hash, current):
        raise InvalidInput(
            N_("The current password is wrong."), field="current_password"
        )
    check_password_rules(new, user.username)
    user.password_hash = hash_password(new)
    ended = end_sessions(session, user, keep=keep_session, now=now)
    if revoke_tokens:
        session.execute(
            update(ApiToken)
            .where(ApiToken.user_id == user.id, ApiToken.revoked_at.is_(None))
            .values(revoked_at=resolve_now(now))
        )
    session.flush()
    return ended


@dataclass(frozen=True)
class PasswordSet:
    """What setting a password ended: sessions and API tokens."""

    sessions_ended: int
    tokens_revoked: int


def set_password(
    session: Session, user: User, new: str, *, now: datetime | None = None
) -> PasswordSet:
    """Set a new password without the old one (an admin, or a reset code).

    Whoever held the account before may still be signed in somewhere or hold a
    token, so every session and every API token of the user ends.
    """
    check_password_rules(new, user.username)
    user.password_hash = hash_password(new)
    now = resolve_now(now)
    ended = end_sessions(session, user, now=now)
    revoked = session.execute(
        update(ApiToken)
        .where(ApiToken.user_id == user.id, ApiToken.revoked_at.is_(None))
        .values(revoked_at=now)
    ).rowcount
    session.flush()
    return PasswordSet(sessions_ended=ended, tokens_revoked=revoked)


@dataclass(frozen=True)
class IssuedToken:
    """A new token: the secret is only available here, at creation time."""

    token: ApiToken
    secret: str


def issue_token(
    session: Session, user: User, name: str, *, now: datetime | None = None
) -> IssuedToken:
    """Create a personal API token for `user` and return its secret once."""
    name = name.strip()
    if not name or len(name) > 100:
        raise InvalidInput(
            N_("A token needs a name of 1-100 characters."), field="name"
        )
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken(
        user_id=user.id,
        name=name,
        token_hash=token_digest(secret),
        created_at=resolve_now(now),
    )
    session.add(token)
    session.flush()
    return IssuedToken(token=token, secret=secret)


def list_tokens(session: Session, user: User) -> list[ApiToken]:
    """Return the user's tokens that are not revoked, newest first."""
    return list(
        session.scalars(
            select(ApiToken)
            .where(ApiToken.user_id == user.id, ApiToken.revoked_at.is_(None))
            .order_by(ApiToken.created_at.desc(), ApiToken.id.desc())
        )
    )


def revoke_token(
    session: Session, user: User, token_id: int, *, now: datetime | None = None
) -> ApiToken:
    """Revoke one of the user's tokens (someone else's is NotFound)."""
    token = session.get(ApiToken, token_id)
    if token is None or token.user_id != user.id or token.revoked_at is not None:
        raise NotFound(N_("You have no such token."), field="token_id")
    token.revoked_at = resolve_now(now)
    session.flush()
    return token


# One query, built once: this runs before every API request.
_TOKEN_OWNER = (
    select(User)
    # The learner's settings come with the user row: nearly every API request
    # reads them (language, day, queue), and load_settings finds them in the
    # session instead of asking again.
    .options(joinedload(User.settings))
    .join(ApiToken, ApiToken.user_id == User.id)
    .where(
        ApiToken.token_hash == bindparam("token_hash"), ApiToken.revoked_at.is_(None)
    )
)


def user_for_token(session: Session, secret: str) -> User | None:
    """Return the owner of a live token, or None."""
    return session.scalar(_TOKEN_OWNER, {"token_hash": token_digest(secret)})


def user_for_session(session: Session, secret: str) -> User | None:
    """Return the user of a live server-side session, or None."""
    return session.scalar(
        select(User)
        .options(joinedload(User.settings))  # as _TOKEN_OWNER: read with the user
        .join(UserSession, UserSession.user_id == User.id)
        .where(
            UserSession.token_hash == token_digest(secret),
            UserSession.ended_at.is_(None),
        )
    )
