"""The LTI package's one meeting point with quizsvc's accounts, sessions and classes.

Every other module of quizsvc.lti goes through here to create or find a user,
sign a browser in, make or join a class: when those services move, only this
module changes.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from quizsvc.http import login
from quizsvc.lti.launch import LaunchFacts, LaunchRefused, interface_language
from quizsvc.models import Classroom, Membership, User
from quizsvc.models.lti import LtiAccount, LtiContext
from quizsvc.services import resolve_now
from quizsvc.services.classes import (
    class_for_teacher,
    class_learners,
    create_class,
    learner_name,
)
from quizsvc.services.users import create_user, find_user

USERNAME_PREFIX = "lti-"
COURSE_NAME_FALLBACK = "LMS"


@dataclass(frozen=True)
class LaunchOutcome:
    """Who a launch signed in, in which class and with which role."""

    user: User
    account: LtiAccount
    classroom: Classroom | None
    context: LtiContext | None
    role: str
    new_account: bool


def _username(session: Session, issuer: str, sub: str) -> str:
    digest = hashlib.sha256(f"{issuer}\n{sub}".encode()).digest()
    stem = USERNAME_PREFIX + base64.b32encode(digest).decode().lower()[:12]
    candidate, n = stem, 1
    while find_user(session, candidate) is not None:
        n += 1
        candidate = f"{stem}-{n}"
    return candidate


def _account(
    session: Session, facts: LaunchFacts, now: datetime
) -> tuple[LtiAccount, User, bool]:
    account = session.scalar(
        select(LtiAccount).where(
            LtiAccount.issuer == facts.issuer, LtiAccount.sub == facts.sub
        )
    )
    if account is not None:
        user = session.get(User, account.user_id)
        assert user is not None
        account.last_launch_at = now
        if facts.email:
            account.email = facts.email
        if facts.name:
            user.display_name = facts.name
        return account, user, False
    user = create_user(
        session,
        _username(session, facts.issuer, facts.sub),
        role="teacher" if facts.role == "teacher" else "learner",
        display_name=facts.name,
        locale=interface_language(facts.locale) or "zh-CN",
        now=now,
    )
    account = LtiAccount(
        issuer=facts.issuer,
        sub=facts.sub,
        user_id=user.id,
        email=facts.email,
        created_at=now,
        last_launch_at=now,
    )
    session.add(account)
    session.flush()
    return account, user, True


def find_context(session: Session, facts: LaunchFacts) -> LtiContext | None:
    """The link of the launch's LMS course to a class, if there is one."""
    if facts.context_id is None:
        return None
    return session.scalar(
        select(LtiContext).where(
            LtiContext.issuer == facts.issuer,
            LtiContext.deployment_id == facts.deployment_id,
            LtiContext.context_id == facts.context_id,
        )
    )


def _membership(session: Session, class_id: int, user_id: int) -> Membership | None:
    return session.scalar(
        select(Membership).where(
            Membership.class_id == class_id, Membership.user_id == user_id
        )
    )


def add_learner(
    session: Session,
    classroom_id: int,
    user: User,
    *,
    student_number: str | None = None,
    now: datetime | None = None,
) -> Membership:
    """Put a user in the class as a learner (as they are, if already there)."""
    membership = _membership(session, classroom_id, user.id)
    if membership is not None:
        return membership
    if student_number is not None:
        taken = session.scalar(
            select(Membership.id).where(
                Membership.class_id == classroom_id,
                Membership.student_number == student_number,
            )
        )
        student_number = None if taken is not None else student_number
    membership = Membership(
        class_id=classroom_id,
        user_id=user.id,
        role="learner",
        student_number=student_number,
        joined_at=resolve_now(now),
    )
    session.add(membership)
    session.flush()
    return membership


def _teach(session: Session, classroom_id: int, user: User, now: datetime) -> None:
    membership = _membership(session, classroom_id, user.id)
    if membership is None:
        session.add(
            Membership(
                class_id=classroom_id, user_id=user.id, role="teacher", joined_at=now
            )
        )
    else:
        # The LMS says this person teaches the course now.
        membership.role = "teacher"
    session.flush()


def _update_endpoints(context: LtiContext, facts: LaunchFacts) -> None:
    context.client_id = facts.client_id
    if facts.context_title:
        context.title = facts.context_title
    if facts.memberships_url:
        context.memberships_url = facts.memberships_url
    if facts.lineitems_url:
        context.lineitems_url = facts.lineitems_url
        context.ags_scopes = list(facts.ags_scopes)


def bind_launch(
    session: Session, facts: LaunchFacts, *, now: datetime | None = None
) -> LaunchOutcome:
    """Find or create the launch's account and put it in the course's class.

    The class is created by the course's first instructor launch; a learner
    who launches before that is signed in without a class (the roster sync
    or their next launch puts them in it).
    """
    now = resolve_now(now)
    if facts.role is None:
        raise LaunchRefused(
            "role", "no instructor or learner role in the course", issuer=facts.issuer
        )
    account, user, new = _account(session, facts, now)
    context = find_context(session, facts)
    if facts.role == "teacher" and user.role == "learner":
        user.role = "teacher"
    classroom = None
    if context is None and facts.role == "teacher" and facts.context_id:
        classroom = create_class(
            session,
            user,
            facts.context_title or COURSE_NAME_FALLBACK,
            now=now,
        )
        context = LtiContext(
            issuer=facts.issuer,
            client_id=facts.client_id,
            deployment_id=facts.deployment_id,
            context_id=facts.context_id,
            class_id=classroom.id,
            created_at=now,
            ags_scopes=[],
        )
        session.add(context)
    if context is not None:
        _update_endpoints(context, facts)
        classroom = session.get(Classroom, context.class_id)
        if facts.role == "teacher":
            _teach(session, context.class_id, user, now)
        else:
            add_learner(
                session,
                context.class_id,
                user,
                student_number=facts.student_number,
                now=now,
            )
    session.flush()
    return LaunchOutcome(user, account, classroom, context, facts.role, new)


def sign_in(session: Session, user: User) -> None:
    """Sign this browser in as `user` (the caller commits)."""
    login.sign_in(session, user)


def current_user() -> User:
    """The signed-in user's row."""
    return login.current_db_user()


def teacher_class(session: Session, user: User, class_id: int) -> Classroom | None:
    """The class if `user` teaches it (or is an admin), else None."""
    return class_for_teacher(session, user, class_id)


def context_of_class(session: Session, class_id: int) -> LtiContext | None:
    """The LMS course a class is linked to, if any."""
    return session.scalar(select(LtiContext).where(LtiContext.class_id == class_id))


def class_learner_subs(
    session: Session, context: LtiContext
) -> tuple[dict[int, str], int]:
    """The class's learners with an LMS account of the course's platform.

    Returns {user id: LTI sub} and how many learners have none (they joined
    with a code and cannot be scored in the LMS).
    """
    rows = session.execute(
        select(Membership.user_id, LtiAccount.sub)
        .outerjoin(
            LtiAccount,
            (LtiAccount.user_id == Membership.user_id)
            & (LtiAccount.issuer == context.issuer),
        )
        .where(Membership.class_id == context.class_id, Membership.role == "learner")
        .order_by(Membership.user_id)
    ).all()
    subs = {user_id: sub for user_id, sub in rows if sub is not None}
    return subs, sum(1 for _user, sub in rows if sub is None)


def users_by_sub(session: Session, issuer: str, subs: list[str]) -> dict[str, User]:
    """The quizsvc users bound to these subs of an issuer."""
    if not subs:
        return {}
    rows = session.execute(
        select(LtiAccount.sub, User)
        .join(User, User.id == LtiAccount.user_id)
        .where(LtiAccount.issuer == issuer, LtiAccount.sub.in_(subs))
    ).all()
    return {sub: user for sub, user in rows}


def class_member_ids(session: Session, class_id: int) -> set[int]:
    """The ids of everyone in the class (learners and teachers)."""
    return set(
        session.scalars(
            select(Membership.user_id).where(Membership.class_id == class_id)
        )
    )


def is_admin(user: User) -> bool:
    """True for an administrator account."""
    return user.role == "admin"


def learner_display_name(membership: Membership) -> str:
    """The name a teacher sees for a learner of the class."""
    return learner_name(membership)


__all__ = ["class_learners"]
