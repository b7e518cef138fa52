"""A learner's classes: join with a code or a link, see what teachers see, leave."""

from __future__ import annotations

from flask import (
    Blueprint,
    flash,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_babel import gettext as _
from flask_login import login_required

from quizsvc.db import get_session, transaction
from quizsvc.extensions import join_limit
from quizsvc.http.errors import message_of, status_of
from quizsvc.http.login import current_db_user
from quizsvc.services import NotFound, ServiceError
from quizsvc.services.classes import (
    MAX_DISPLAY_NAME,
    MAX_STUDENT_NUMBER,
    class_by_code,
    join_class,
    learner_classes,
    leave_class,
    set_share_history,
)

bp = Blueprint("classes", __name__)


def _page(status: int = 200, *, form: dict | None = None, **extra):
    return render_template(
        "classes/index.html",
        memberships=learner_classes(get_session(), current_db_user()),
        form=form or {},
        max_number=MAX_STUDENT_NUMBER,
        max_name=MAX_DISPLAY_NAME,
        **extra,
    ), status


@bp.get("/classes")
@login_required
def index():
    """The learner's classes and a form to join one with a code."""
    return _page()


@bp.get("/join/<code>")
@login_required
def join_link(code: str):
    """The join link a teacher shares: the class's name and the join form."""
    try:
        classroom = class_by_code(get_session(), code)
    except ServiceError as exc:
        return _page(status_of(exc), form={"code": code}, error=message_of(exc))
    return _page(form={"code": classroom.join_code}, joining=classroom)


@bp.post("/join")
@login_required
@join_limit
def join():
    """Join a class as a learner."""
    form = {
        name: request.form.get(name, "")
        for name in ("code", "student_number", "display_name", "share_history")
    }
    try:
        with transaction() as session:
            membership = join_class(
                session,
                current_db_user(),
                form["code"],
                student_number=form["student_number"],
                display_name=form["display_name"],
                share_history=form["share_history"],
            )
            name = membership.classroom.name
    except ServiceError as exc:
        return _page(status_of(exc), form=form, error=message_of(exc))
    flash(_("You joined %(name)s.", name=name), "success")
    return redirect(url_for("classes.index"))


@bp.post("/classes/<int:class_id>/sharing")
@login_required
def sharing(class_id: int):
    """Share (or stop sharing) the answers from before joining with the class."""
    share = request.form.get("share_history", "")
    try:
        with transaction() as session:
            set_share_history(session, current_db_user(), class_id, share)
    except NotFound:
        return _page(404, error=_("You are not in that class."))
    except ServiceError as exc:
        return _page(status_of(exc), error=message_of(exc))
    if share == "1":
        flash(_("The class's teachers now also see your earlier answers."), "success")
    else:
        flash(
            _("The class's teachers now see only your answers since you joined."),
            "success",
        )
    return redirect(url_for("classes.index"))


@bp.post("/classes/<int:class_id>/leave")
@login_required
def leave(class_id: int):
    """Leave a class; its teachers stop seeing your record at once."""
    try:
        with transaction() as session:
            leave_class(session, current_db_user(), class_id)
    except NotFound:
        return _page(404, error=_("You are not in that class."))
    flash(_("You left the class; its teachers no longer see your record."), "success")
    return redirect(url_for("classes.index"))
