"""The course roster from the platform (LTI Names and Role Provisioning Services).

A sync replaces the course's stored roster with the platform's list. A
member who launched quizsvc before (an LTI account exists) and is a learner
of the course but not yet in the class is put in it; everyone else who never
launched shows as "not joined" until their first launch.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pylti1p3.exception import LtiException
from pylti1p3.names_roles import NamesRolesProvisioningService
from requests import RequestException
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from quizsvc.lti import accounts
from quizsvc.lti.launch import ROLES_CLAIM, class_role
from quizsvc.lti.services import connector_for
from quizsvc.models.lti import LtiContext, LtiRosterMember
from quizsvc.services import resolve_now
from quizsvc.services.errors import N_, Conflict, Message

MAX_MEMBERS = 5000


class PlatformUnavailable(Conflict):
    """The platform did not answer a service call as it should."""

    code = "platform_unavailable"


@dataclass(frozen=True)
class RosterRow:
    """A roster member as a teacher sees them."""

    name: str
    email: str | None
    student_number: str | None
    role: str
    active: bool
    joined: bool


@dataclass(frozen=True)
class RosterSync:
    """What a sync found and did."""

    members: int
    learners: int
    joined: int
    added: int


def _text(value: object, limit: int) -> str | None:
    return " ".join(value.split())[:limit] or None if isinstance(value, str) else None


def sync_roster(
    session: Session,
    context: LtiContext,
    instance_path: str,
    *,
    now: datetime | None = None,
) -> RosterSync:
    """Read the course's members from the platform and store them."""
    now = resolve_now(now)
    if not context.memberships_url:
        raise Conflict(
            N_(
                "The course's LMS offers no roster service (NRPS); turn on the "
                "Names and Roles service in the LMS's tool settings, then open "
                "quizsvc from the course once."
            )
        )
    service = NamesRolesProvisioningService(
        connector_for(session, context, instance_path),
        {"context_memberships_url": context.memberships_url},
    )
    try:
        members = service.get_members()
    except (LtiException, RequestException, ValueError) as exc:
        status = getattr(getattr(exc, "response", None), "status_code", None)
        raise PlatformUnavailable(
            N_("The LMS did not return the roster (%(status)s); try again later."),
            status=status or Message(N_("no answer")),
        ) from None
    rows: dict[str, LtiRosterMember] = {}
    for member in members[:MAX_MEMBERS]:
        sub = _text(member.get("user_id"), 255)
        role = class_role({ROLES_CLAIM: member.get("roles") or []})
        if sub is None or role is None or member.get("status") == "Deleted":
            continue
        name = _text(member.get("name"), 255) or _text(
            " ".join(
                str(member.get(part) or "") for part in ("given_name", "family_name")
            ),
            255,
        )
        rows[sub] = LtiRosterMember(
            context_id=context.id,
            sub=sub,
            name=name,
            email=_text(member.get("email"), 320),
            student_number=_text(member.get("lis_person_sourcedid"), 64),
            role=role,
            active=member.get("status", "Active") == "Active",
            synced_at=now,
        )
    session.execute(
        delete(LtiRosterMember).where(LtiRosterMember.context_id == context.id)
    )
    session.add_all(rows.values())
    known = accounts.users_by_sub(session, context.issuer, list(rows))
    members_now = accounts.class_member_ids(session, context.class_id)
    added = 0
    for sub, row in rows.items():
        user = known.get(sub)
        if row.role == "learner" and row.active and user and user.id not in members_now:
            accounts.add_learner(
                session,
                context.class_id,
                user,
                student_number=row.student_number,
                now=now,
            )
            members_now.add(user.id)
            added += 1
    context.roster_synced_at = now
    session.flush()
    learners = [row for row in rows.values() if row.role == "learner"]
    joined = sum(
        1 for row in learners if known.get(row.sub) and known[row.sub].id in members_now
    )
    return RosterSync(len(rows), len(learners), joined, added)


def roster(session: Session, context: LtiContext) -> list[RosterRow]:
    """The stored roster with who has joined the class, learners first."""
    members = list(
        session.scalars(
            select(LtiRosterMember).where(LtiRosterMember.context_id == context.id)
        )
    )
    known = accounts.users_by_sub(session, context.issuer, [m.sub for m in members])
    in_class = accounts.class_member_ids(session, context.class_id)
    rows = [
        RosterRow(
            name=member.name or member.email or member.sub,
            email=member.email,
            student_number=member.student_number,
            role=member.role,
            active=member.active,
            joined=member.sub in known and known[member.sub].id in in_class,
        )
        for member in members
    ]
    return sorted(
        rows,
        key=lambda r: (
            r.role != "learner",
            r.student_number is None,
            r.student_number or "",
            r.name,
        ),
    )
