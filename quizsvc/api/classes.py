"""Classes over JSON: teachers create classes and read rosters; learners join.

A class the caller does not teach answers 404 (never 403), so ids of other
classes reveal nothing; creating a class needs a teacher or admin account.
"""

from __future__ import annotations

from typing import Any

from flask import url_for

from quizsvc.api import bp, json_body, login_required
from quizsvc.db import get_session, transaction
from quizsvc.errors import N_, BadRequest, Forbidden
from quizsvc.extensions import join_limit
from quizsvc.http.login import current_db_user
from quizsvc.models import Classroom
from quizsvc.services import class_reports
from quizsvc.services.classes import (
    can_teach,
    classes_of,
    create_class,
    join_class,
    leave_class,
    require_class_for_teacher,
    rotate_join_code,
    set_share_history,
)
from quizsvc.services.reset_codes import issue_reset_code

CLASS_FIELDS = ("name", "term", "timezone")
JOIN_FIELDS = ("code", "student_number", "display_name", "share_history")
MEMBERSHIP_FIELDS = ("share_history",)


def _unknown_fields(body: dict[str, Any], known: tuple[str, ...]) -> None:
    unknown = sorted(set(body) - set(known))
    if unknown:
        raise BadRequest(
            N_("unknown field(s): %(unknown)s; known: %(known)s"),
            field=unknown[0],
            unknown=unknown,
            known=list(known),
        )


def _boolean(body: dict[str, Any], field: str) -> None:
    if field in body and not isinstance(body[field], bool):
        raise BadRequest(N_("%(name)s must be true or false."), field=field, name=field)


def _join_url(classroom: Classroom) -> str:
    return url_for("classes.join_link", code=classroom.join_code, _external=True)


def _taught_class(class_id: int) -> Classroom:
    return require_class_for_teacher(get_session(), current_db_user(), class_id)


def class_dict(classroom: Classroom, role: str, learners: int) -> dict[str, Any]:
    """A class as the API shows it; teachers also get the join code and link."""
    shown: dict[str, Any] = {
        "id": classroom.id,
        "name": classroom.name,
        "term": classroom.term,
        "timezone": classroom.timezone,
        "role": role,
    }
    if role in ("teacher", "admin"):
        shown.update(
            join_code=classroom.join_code,
            join_url=_join_url(classroom),
            joining_open=classroom.joining_open,
            learners=learners,
        )
    return shown


@bp.post("/classes")
@login_required
def api_create_class():
    """Create a class (teachers and admins); the caller teaches it."""
    user = current_db_user()
    if not can_teach(user):
        raise Forbidden(N_("Only teacher accounts can create classes."))
    body = json_body(("name",))
    _unknown_fields(body, CLASS_FIELDS)
    with transaction() as session:
        classroom = create_class(
            session,
            user,
            body["name"],
            term=body.get("term"),
            timezone=body.get("timezone"),
        )
    return {
        "id": classroom.id,
        "name": classroom.name,
        "term": classroom.term,
        "timezone": classroom.timezone,
        "join_code": classroom.join_code,
        "join_url": _join_url(classroom),
    }, 201


@bp.get("/classes")
@login_required
def api_classes():
    """The classes the caller teaches or learns in (an admin: every class)."""
    listings = classes_of(get_session(), current_db_user())
    return {
        "classes": [
            class_dict(listing.classroom, listing.role, listing.learners)
            for listing in listings
        ]
    }


@bp.post("/classes/<int:class_id>/join-code")
@login_required
def api_rotate_join_code(class_id: int):
    """Give the class a new join code; the old one stops working."""
    classroom = _taught_class(class_id)
    with transaction() as session:
        code = rotate_join_code(session, classroom)
    return {"id": classroom.id, "join_code": code, "join_url": _join_url(classroom)}


@bp.post("/classes/join")
@login_required
@join_limit
def api_join_class():
    """Join a class with its code, as a learner."""
    body = json_body(("code",))
    _unknown_fields(body, JOIN_FIELDS)
    _boolean(body, "share_history")
    with transaction() as session:
        membership = join_class(
            session,
            current_db_user(),
            body["code"],
            student_number=body.get("student_number"),
            display_name=body.get("display_name"),
            share_history=body.get("share_history", False),
        )
        result = _membership_dict(membership)
    return result, 201


def _membership_dict(membership) -> dict[str, Any]:
    return {
        "class_id": membership.class_id,
        "name": membership.classroom.name,
        "student_number": membership.student_number,
        "display_name": membership.display_name,
        "joined_at": membership.joined_at.isoformat(),
        # False: teachers see answers from joined_at on; True: earlier ones too.
        "share_history": membership.share_history,
    }


@bp.patch("/classes/<int:class_id>/membership")
@login_required
def api_update_membership(class_id: int):
    """Choose whether the class's teachers see your answers from before joining."""
    body = json_body(MEMBERSHIP_FIELDS)
    _unknown_fields(body, MEMBERSHIP_FIELDS)
    _boolean(body, "share_history")
    with transaction() as session:
        membership = set_share_history(
            session, current_db_user(), class_id, body["share_history"]
        )
        result = _membership_dict(membership)
    return result


@bp.delete("/classes/<int:class_id>/membership")
@login_required
def api_leave_class(class_id: int):
    """Leave a class you learn in; its teachers lose access at once."""
    with transaction() as session:
        leave_class(session, current_db_user(), class_id)
    return {"class_id": class_id, "left": True}


@bp.get("/classes/<int:class_id>/learners")
@login_required
def api_class_learners(class_id: int):
    """The roster with each learner's figures (the dashboard's overview)."""
    classroom = _taught_class(class_id)
    overview = class_reports.class_overview(get_session(), classroom)
    return {
        "class_id": classroom.id,
        "learners": [row.to_dict() for row in overview.rows],
    }


@bp.post("/classes/<int:class_id>/learners/<int:user_id>/reset-code")
@login_required
def api_issue_reset_code(class_id: int, user_id: int):
    """A one-time password reset code for a learner of a class you teach
    (valid 24 hours, one use; a newer code replaces an unused older one)."""
    with transaction() as session:
        issued = issue_reset_code(session, current_db_user(), class_id, user_id)
        username = issued.user.username
    return {
        "user_id": user_id,
        "username": username,
        "code": issued.code,
        "expires_at": issued.expires_at.isoformat(),
    }, 201
