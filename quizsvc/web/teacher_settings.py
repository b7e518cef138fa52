"""A class's settings page: its join code and joining, its co-teachers, its
learners, and the parameters its scheduler prior was fitted with.

Routes live on the teacher blueprint (quizsvc.web.teacher), under the same
access rule: a class the caller does not teach is a 404.
"""

from __future__ import annotations

from typing import Any

from flask import (
    flash,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_babel import gettext as _

from quizsvc.db import get_session, transaction
from quizsvc.http.errors import message_of, messages_of, status_of
from quizsvc.http.login import current_db_user
from quizsvc.models import Classroom
from quizsvc.services import ServiceError
from quizsvc.services.class_priors import (
    MIN_CLASS_LEARNERS,
    MIN_CLASS_REVIEWS,
    latest_class_prior,
)
from quizsvc.services.classes import (
    MAX_ROSTER_ROWS,
    RosterError,
    add_co_teacher,
    class_learners,
    class_teachers,
    remove_learner,
    remove_teacher,
    roster_entries,
    rotate_join_code,
    set_joining_open,
)
from quizsvc.web.teacher import _classroom, bp


def _settings_page(classroom: Classroom, status: int = 200, **extra: Any):
    session = get_session()
    return render_template(
        "teacher/settings.html",
        classroom=classroom,
        join_url=url_for("classes.join_link", code=classroom.join_code, _external=True),
        teachers=class_teachers(session, classroom),
        learners=class_learners(session, classroom),
        roster=roster_entries(session, classroom),
        max_roster_rows=MAX_ROSTER_ROWS,
        me=current_db_user().id,
        class_prior=latest_class_prior(session, classroom.id),
        min_class_reviews=MIN_CLASS_REVIEWS,
        min_class_learners=MIN_CLASS_LEARNERS,
        **extra,
    ), status


@bp.get("/classes/<int:class_id>/settings")
def settings(class_id: int):
    """The join code and link, joining on/off, co-teachers, learners, roster."""
    return _settings_page(_classroom(class_id))


def _settings_action(class_id: int, action, success):
    """Run a settings change in one transaction; show the page again on failure.

    `success` is the message to flash, or a function of the action's result
    that returns it.
    """
    classroom = _classroom(class_id)
    try:
        with transaction() as session:
            result = action(session, classroom)
    except RosterError as exc:
        return _settings_page(
            classroom, status_of(exc), roster_problems=messages_of(exc.problems)
        )
    except ServiceError as exc:
        return _settings_page(classroom, status_of(exc), error=message_of(exc))
    flash(success(result) if callable(success) else success, "success")
    return redirect(url_for("teacher.settings", class_id=class_id))


@bp.post("/classes/<int:class_id>/join-code")
def rotate_code(class_id: int):
    """Replace the join code (the old one stops working)."""
    return _settings_action(
        class_id,
        lambda session, classroom: rotate_join_code(session, classroom),
        _("A new join code is in place; the old one no longer works."),
    )


@bp.post("/classes/<int:class_id>/joining")
def joining(class_id: int):
    """Open or close the class to new learners."""
    is_open = request.form.get("open") == "1"
    return _settings_action(
        class_id,
        lambda session, classroom: set_joining_open(session, classroom, is_open),
        _("Learners can join again.") if is_open else _("Joining is closed."),
    )


@bp.post("/classes/<int:class_id>/teachers")
def invite_teacher(class_id: int):
    """Add a co-teacher by username."""
    username = request.form.get("username", "")
    return _settings_action(
        class_id,
        lambda session, classroom: add_co_teacher(session, classroom, username),
        _("%(name)s now teaches this class too.", name=username.strip()),
    )


@bp.post("/classes/<int:class_id>/teachers/<int:user_id>/remove")
def drop_teacher(class_id: int, user_id: int):
    """Take a co-teacher off the class."""
    return _settings_action(
        class_id,
        lambda session, classroom: remove_teacher(session, classroom, user_id),
        _("The teacher was removed from this class."),
    )


@bp.post("/classes/<int:class_id>/learners/<int:user_id>/remove")
def drop_learner(class_id: int, user_id: int):
    """Remove a learner; the class's teachers lose access to their record at once."""
    return _settings_action(
        class_id,
        lambda session, classroom: remove_learner(session, classroom, user_id),
        _("The learner was removed from this class."),
    )
