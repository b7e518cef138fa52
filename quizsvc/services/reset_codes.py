"""One-time password reset codes: a teacher issues one for a learner of their
class; the learner uses it once, within 24 hours, to choose a new password.

A wrong, used or expired code and an unknown username all get the same refusal,
so the reset form cannot be used to find out which usernames exist. Only the
SHA-256 of a code is stored.
"""

from __future__ import annotations

import hashlib
import secrets
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from quizsvc.models import ResetCode, User
from quizsvc.services import resolve_now
from quizsvc.services.accounts import set_password
from quizsvc.services.classes import learner_membership, require_class_for_teacher
from quizsvc.services.errors import N_, InvalidInput, NotFound
from quizsvc.services.users import find_user

RESET_CODE_LIFETIME = timedelta(hours=24)
# No 0/O, 1/I/L or U: a code is read aloud or copied from a teacher's screen.
RESET_CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTVWXYZ"
RESET_CODE_GROUPS = 3
RESET_CODE_GROUP_LENGTH = 4


class BadResetCode(InvalidInput):
    """A reset that names no live code for that username (or no such username)."""

    code = "invalid_reset_code"
    field = "code"
    default_message = N_(
        "This reset code is wrong, already used or expired. Check it with your "
        "teacher, or ask them for a new one (a code is valid for 24 hours)."
    )


@dataclass(frozen=True)
class IssuedResetCode:
    """A new code: the only moment its text is known."""

    code: str
    expires_at: datetime
    user: User


def normalize_reset_code(code: str) -> str:
    """Read a typed code: full-width forms, any case, spaces and dashes dropped."""
    code = unicodedata.normalize("NFKC", code).upper()
    return "".join(ch for ch in code if ch not in " -\t")


def _digest(code: str) -> str:
    return hashlib.sha256(normalize_reset_code(code).encode()).hexdigest()


def _new_code() -> str:
    groups = (
        "".join(
            secrets.choice(RESET_CODE_ALPHABET) for _ in range(RESET_CODE_GROUP_LENGTH)
        )
        for _ in range(RESET_CODE_GROUPS)
    )
    return "-".join(groups)


def issue_reset_code(
    session: Session,
    teacher: User,
    class_id: int,
    user_id: int,
    *,
    now: datetime | None = None,
) -> IssuedResetCode:
    """Issue a code for a learner of a class `teacher` teaches (else NotFound).

    An earlier unused code of the same learner stops working: only the newest
    code handed out is live.
    """
    classroom = require_class_for_teacher(session, teacher, class_id)
    membership = learner_membership(session, classroom, user_id)
    if membership is None:
        raise NotFound(
            N_("There is no learner %(id)s in this class."), field="user_id", id=user_id
        )
    if membership.user.role != "learner":
        # A teacher must not be able to take over a colleague's or an admin's
        # account by way of a class they happen to be in.
        raise InvalidInput(
            N_(
                "Only learner accounts get reset codes from a teacher; an admin "
                "sets other passwords with quizsvc users set-password."
            ),
            field="user_id",
        )
    now = resolve_now(now)
    session.execute(
        update(ResetCode)
        .where(ResetCode.user_id == user_id, ResetCode.used_at.is_(None))
        .values(used_at=now)
    )
    code = _new_code()
    expires_at = now + RESET_CODE_LIFETIME
    session.add(
        ResetCode(
            user_id=user_id,
            code_hash=_digest(code),
            issued_by=teacher.id,
            class_id=classroom.id,
            created_at=now,
            expires_at=expires_at,
        )
    )
    session.flush()
    return IssuedResetCode(code=code, expires_at=expires_at, user=membership.user)


def reset_password(
    session: Session,
    username: str,
    code: str,
    new_password: str,
    *,
    now: datetime | None = None,
) -> User:
    """Set a new password with a live code; the code is used up, every session
    and API token of the account ends. A bad code raises BadResetCode."""
    now = resolve_now(now)
    user = find_user(session, username.strip()) if username.strip() else None
    digest = _digest(code)
    live = None
    if user is not None:
        live = session.scalar(
            select(ResetCode).where(
                ResetCode.user_id == user.id,
                ResetCode.code_hash == digest,
                ResetCode.used_at.is_(None),
                ResetCode.expires_at > now,
            )
        )
    if user is None or live is None:
        raise BadResetCode()
    # A weak password is refused before the code is used, so it can be retried.
    set_password(session, user, new_password, now=now)
    live.used_at = now
    session.flush()
    return user
