"""Classes: who teaches and who learns in them, join codes, rosters.

Access rule, used by every teacher page and class API route: a user sees a
class when they teach it (a membership with role "teacher") or are an admin;
`class_for_teacher` returns None otherwise, and callers answer 404 (never 403)
so that the ids of other people's classes reveal nothing. A learner's data is
visible to a class's teachers only while the learner's membership exists:
leaving (or being removed) deletes the row and ends that access at once.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session, contains_eager

from quizsvc.models import Classroom, Membership, RosterEntry, User
from quizsvc.services import resolve_now
from quizsvc.services.errors import N_, Conflict, InvalidInput, Message, NotFound
from quizsvc.services.rosters import (
    FORMULA_STARTS,
    MAX_DISPLAY_NAME,
    MAX_ROSTER_ERRORS,
    MAX_ROSTER_ROWS,
    MAX_STUDENT_NUMBER,
    ROSTER_HEADERS,
    RosterError,
    RosterImport,
    import_roster,
    parse_roster,
    roster_entries,
)
from quizsvc.services.users import check_timezone, find_user

# Join codes: no 0/O, 1/I/L or U, so a code read aloud or copied from a
# projector is not misread. Migration 0004 gives older classes codes from this
# same alphabet. 30 letters ** 8 ≈ 6.6e11 codes: unguessable at any rate the
# login limiter allows.
JOIN_CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTVWXYZ"
JOIN_CODE_LENGTH = 8
TEACHING_ROLES = ("teacher", "admin")
MAX_CLASS_NAME = 200
MAX_TERM = 100


# --- access -----------------------------------------------------------------------


def can_teach(user: User) -> bool:
    """True when the user's account role allows creating and teaching classes."""
    return user.role in TEACHING_ROLES


def class_for_teacher(session: Session, user: User, class_id: int) -> Classroom | None:
    """Return the class if `user` teaches it or is an admin, else None."""
    if user.role == "admin":
        return session.get(Classroom, class_id)
    return session.scalar(
        select(Classroom)
        .join(Membership, Membership.class_id == Classroom.id)
        .where(
            Classroom.id == class_id,
            Membership.user_id == user.id,
            Membership.role == "teacher",
        )
    )


def require_class_for_teacher(session: Session, user: User, class_id: int) -> Classroom:
    """Return the class the user teaches, or raise NotFound."""
    classroom = class_for_teacher(session, user, class_id)
    if classroom is None:
        raise NotFound(N_("There is no class %(id)s."), id=class_id)
    return classroom


def class_learners(session: Session, classroom: Classroom) -> list[Membership]:
    """Return the class's learner memberships, by student number then name."""
    name = func.coalesce(Membership.display_name, User.display_name, User.username)
    return list(
        session.scalars(
            select(Membership)
            .join(User, User.id == Membership.user_id)
            .options(contains_eager(Membership.user))
            .where(Membership.class_id == classroom.id, Membership.role == "learner")
            .order_by(
                Membership.student_number.is_(None),
                Membership.student_number,
                name,
                Membership.user_id,
            )
        )
    )


def class_teachers(session: Session, classroom: Classroom) -> list[Membership]:
    """Return the class's teacher memberships, earliest first."""
    return list(
        session.scalars(
            select(Membership)
            .join(User, User.id == Membership.user_id)
            .options(contains_eager(Membership.user))
            .where(Membership.class_id == classroom.id, Membership.role == "teacher")
            .order_by(Membership.joined_at, Membership.id)
        )
    )


def learner_membership(
    session: Session, classroom: Classroom | int, user_id: int
) -> Membership | None:
    """Return the learner membership of `user_id` in the class (or class id)."""
    class_id = classroom if isinstance(classroom, int) else classroom.id
    return session.scalar(
        select(Membership).where(
            Membership.class_id == class_id,
            Membership.user_id == user_id,
            Membership.role == "learner",
        )
    )


def learner_name(membership: Membership) -> str:
    """The name a teacher sees: the one given to the class, else the account's."""
    user = membership.user
    return membership.display_name or user.display_name or user.username


@dataclass(frozen=True)
class ClassListing:
    """A class the user belongs to, with the user's role and its learner count."""

    classroom: Classroom
    role: str
    learners: int


def classes_of(session: Session, user: User) -> list[ClassListing]:
    """Return the classes the user teaches or learns in, newest first.

    An admin also sees every class, listed with role "admin" where they hold
    no membership.
    """
    learners = (
        select(Membership.class_id, func.count().label("n"))
        .where(Membership.role == "learner")
        .group_by(Membership.class_id)
        .subquery()
    )
    mine = (
        select(Membership.class_id, Membership.role)
        .where(Membership.user_id == user.id)
        .subquery()
    )
    query = (
        select(Classroom, mine.c.role, func.coalesce(learners.c.n, 0))
        .outerjoin(mine, mine.c.class_id == Classroom.id)
        .outerjoin(learners, learners.c.class_id == Classroom.id)
        .order_by(Classroom.created_at.desc(), Classroom.id.desc())
    )
    if user.role != "admin":
        query = query.where(mine.c.role.is_not(None))
    return [
        ClassListing(classroom, role or "admin", int(count))
        for classroom, role, count in session.execute(query)
    ]


# --- creating and managing a class ----------------------------------------------


def _text(value: object, limit: int, field: str, what: str) -> str | None:
    """Strip a short optional text; refuse non-text and over-long values.

    `field` names the form field, `what` (a msgid) the thing, in a sentence.
    """
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInput(
            N_("%(what)s must be text."), field=field, what=Message(what)
        )
    value = " ".join(value.split())
    if len(value) > limit:
        raise InvalidInput(
            N_("%(what)s may have at most %(limit)d characters."),
            field=field,
            what=Message(what),
            limit=limit,
        )
    return value or None


def new_join_code(session: Session) -> str:
    """Return a join code no class uses yet."""
    while True:
        code = "".join(
            secrets.choice(JOIN_CODE_ALPHABET) for _ in range(JOIN_CODE_LENGTH)
        )
        taken = session.scalar(select(Classroom.id).where(Classroom.join_code == code))
        if taken is None:
            return code


def normalize_join_code(code: str) -> str:
    """Upper-case a typed code and drop spaces and dashes people add."""
    return "".join(ch for ch in code.upper() if ch not in " -\t")


def create_class(
    session: Session,
    teacher: User,
    name: object,
    *,
    term: object = None,
    timezone: object = None,
    now: datetime | None = None,
) -> Classroom:
    """Create a class taught by `teacher` (a teacher or admin account)."""
    if not can_teach(teacher):
        raise InvalidInput(N_("Only teacher accounts can create classes."))
    name = _text(name, MAX_CLASS_NAME, "name", N_("The class name"))
    if not name:
        raise InvalidInput(N_("The class needs a name."), field="name")
    term = _text(term, MAX_TERM, "term", N_("The term"))
    zone = _text(timezone, 64, "timezone", N_("The time zone")) or "Asia/Shanghai"
    check_timezone(zone)
    now = resolve_now(now)
    classroom = Classroom(
        name=name,
        term=term,
        timezone=zone,
        join_code=new_join_code(session),
        joining_open=True,
        created_by=teacher.id,
        created_at=now,
    )
    session.add(classroom)
    session.flush()
    session.add(
        Membership(
            class_id=classroom.id, user_id=teacher.id, role="teacher", joined_at=now
        )
    )
    session.flush()
    return classroom


def rotate_join_code(session: Session, classroom: Classroom) -> str:
    """Give the class a new join code; the old one stops working at once."""
    classroom.join_code = new_join_code(session)
    session.flush()
    return classroom.join_code


def set_joining_open(session: Session, classroom: Classroom, is_open: bool) -> None:
    """Open or close the class to new learners (members stay)."""
    classroom.joining_open = bool(is_open)
    session.flush()


def add_co_teacher(session: Session, classroom: Classroom, username: str) -> Membership:
    """Invite a teacher account, by username, to teach the class too."""
    other = find_user(session, username.strip()) if isinstance(username, str) else None
    if other is None:
        raise InvalidInput(
            N_("There is no account '%(username)s'."),
            field="username",
            username=username,
        )
    if not can_teach(other):
        raise InvalidInput(
            N_(
                "'%(username)s' is not a teacher account; an admin can give it "
                "the teacher role first."
            ),
            field="username",
            username=other.username,
        )
    existing = session.scalar(
        select(Membership).where(
            Membership.class_id == classroom.id, Membership.user_id == other.id
        )
    )
    if existing is not None:
        if existing.role == "teacher":
            raise Conflict(
                N_("'%(username)s' already teaches this class."),
                username=other.username,
            )
        raise Conflict(
            N_("'%(username)s' is a learner in this class and cannot also teach it."),
            username=other.username,
        )
    membership = Membership(
        class_id=classroom.id,
        user_id=other.id,
        role="teacher",
        joined_at=resolve_now(None),
    )
    session.add(membership)
    session.flush()
    return membership


def remove_teacher(session: Session, classroom: Classroom, user_id: int) -> None:
    """Take a teacher off the class; its last teacher stays."""
    teachers = class_teachers(session, classroom)
    target = next((m for m in teachers if m.user_id == user_id), None)
    if target is None:
        raise NotFound(N_("That teacher does not teach this class."))
    if len(teachers) == 1:
        raise Conflict(N_("A class needs at least one teacher."))
    session.delete(target)
    session.flush()


def remove_learner(session: Session, classroom: Classroom, user_id: int) -> None:
    """Remove a learner from the class; the teachers' access ends at once."""
    membership = learner_membership(session, classroom, user_id)
    if membership is None:
        raise NotFound(N_("That learner is not in this class."))
    session.delete(membership)
    session.flush()


# --- learners joining and leaving -------------------------------------------------


def class_by_code(session: Session, code: object) -> Classroom:
    """Return the class with this join code; refuse unknown or closed ones."""
    if not isinstance(code, str) or not normalize_join_code(code):
        raise InvalidInput(N_("Enter the class join code."), field="code")
    classroom = session.scalar(
        select(Classroom).where(Classroom.join_code == normalize_join_code(code))
    )
    if classroom is None:
        raise NotFound(
            N_("No class has this join code; check it with your teacher."),
            field="code",
        )
    if not classroom.joining_open:
        raise Conflict(
            N_("This class is not taking new learners now; ask your teacher.")
        )
    return classroom


def join_class(
    session: Session,
    user: User,
    code: object,
    *,
    student_number: object = None,
    display_name: object = None,
    now: datetime | None = None,
) -> Membership:
    """Join the class with this code as a learner.

    Without a display name, a roster entry for the student number fills it in.
    """
    student_number = _text(
        student_number, MAX_STUDENT_NUMBER, "student_number", N_("The student number")
    )
    display_name = _text(display_name, MAX_DISPLAY_NAME, "display_name", N_("The name"))
    classroom = class_by_code(session, code)
    existing = session.scalar(
        select(Membership).where(
            Membership.class_id == classroom.id, Membership.user_id == user.id
        )
    )
    if existing is not None:
        if existing.role == "teacher":
            raise Conflict(N_("You teach this class and cannot join it as a learner."))
        raise Conflict(N_("You are already in this class."))
    if student_number is not None:
        clash = session.scalar(
            select(Membership.id).where(
                Membership.class_id == classroom.id,
                Membership.student_number == student_number,
            )
        )
        if clash is not None:
            raise Conflict(
                N_(
                    "Student number %(number)s is already used in this class; "
                    "check it or ask your teacher."
                ),
                field="student_number",
                number=student_number,
            )
        if display_name is None:
            display_name = session.scalar(
                select(RosterEntry.name).where(
                    RosterEntry.class_id == classroom.id,
                    RosterEntry.student_number == student_number,
                )
            )
    membership = Membership(
        class_id=classroom.id,
        user_id=user.id,
        role="learner",
        student_number=student_number,
        display_name=display_name,
        joined_at=resolve_now(now),
    )
    session.add(membership)
    session.flush()
    return membership


def leave_class(session: Session, user: User, class_id: int) -> None:
    """Leave a class the user learns in; its teachers lose access at once."""
    membership = learner_membership(session, class_id, user.id)
    if membership is None:
        raise NotFound(N_("You are not in that class."))
    session.delete(membership)
    session.flush()


def learner_classes(session: Session, user: User) -> list[Membership]:
    """Return the user's learner memberships with their classes, by name."""
    return list(
        session.scalars(
            select(Membership)
            .join(Classroom, Classroom.id == Membership.class_id)
            .options(contains_eager(Membership.classroom))
            .where(Membership.user_id == user.id, Membership.role == "learner")
            .order_by(Classroom.name, Classroom.id)
        )
    )


# Roster names stay importable from here, where they lived first.
__all__ = [
    "FORMULA_STARTS",
    "MAX_DISPLAY_NAME",
    "MAX_ROSTER_ERRORS",
    "MAX_ROSTER_ROWS",
    "MAX_STUDENT_NUMBER",
    "ROSTER_HEADERS",
    "RosterError",
    "RosterImport",
    "import_roster",
    "parse_roster",
    "roster_entries",
]
