"""The LTI admin page (platform registrations) and each linked class's LMS page:
roster sync, grade pushes and their log. Ordinary forms, with CSRF checks."""

from __future__ import annotations

import logging
import threading
from datetime import date
from typing import Any

from flask import (
    Flask,
    abort,
    current_app,
    flash,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_babel import gettext as _
from flask_login import login_required

from quizsvc.db import get_session, transaction
from quizsvc.http.errors import message_of, status_of
from quizsvc.lti import accounts, grades, keys, platforms, roster
from quizsvc.lti.views import RULE_LABELS, RULE_NAMES, bp, instance_folder, tool_urls
from quizsvc.models import User
from quizsvc.models.lti import LtiContext, LtiGradePush, LtiScoreSend
from quizsvc.services import ServiceError

log = logging.getLogger("quizsvc.lti")


# --- the admin page ---------------------------------------------------------------


def _admin() -> User:
    user = accounts.current_user()
    if not accounts.is_admin(user):
        abort(403)
    return user


def _admin_page(status: int = 200, **extra):
    return render_template(
        "lti/admin.html",
        urls=tool_urls(),
        key_ids=[key.kid for key in keys.tool_keys(instance_folder())],
        registered=platforms.list_platforms(get_session()),
        form=extra.pop("form", {}),
        **extra,
    ), status


@bp.get("/admin")
@login_required
def admin():
    """The tool's URLs to paste into an LMS, and the registered platforms."""
    _admin()
    return _admin_page()


def _split(text: str) -> tuple[str, ...]:
    return tuple(part for part in text.replace(",", " ").split() if part)


@bp.post("/admin/platforms")
@login_required
def add_platform():
    """Register a platform from the admin page's form."""
    _admin()
    form = {
        name: request.form.get(name, "")
        for name in (
            "name",
            "issuer",
            "client_id",
            "deployment_ids",
            "auth_login_url",
            "auth_token_url",
            "key_set_url",
            "frame_origins",
        )
    }
    try:
        with transaction() as db:
            platform = platforms.add_platform(
                db,
                platforms.PlatformFields(
                    issuer=form["issuer"],
                    client_id=form["client_id"],
                    deployment_ids=_split(form["deployment_ids"]),
                    auth_login_url=form["auth_login_url"],
                    auth_token_url=form["auth_token_url"],
                    key_set_url=form["key_set_url"],
                    name=form["name"] or None,
                    frame_origins=_split(form["frame_origins"]),
                ),
                allow_http=current_app.config["LTI_ALLOW_HTTP"],
            )
            name = platform.name
    except ServiceError as exc:
        return _admin_page(status_of(exc), form=form, error=message_of(exc))
    flash(_("Registered %(name)s.", name=name), "success")
    return redirect(url_for("lti.admin"))


@bp.post("/admin/platforms/<int:platform_id>/remove")
@login_required
def remove_platform(platform_id: int):
    """Unregister a platform; its launches are refused from now on."""
    _admin()
    try:
        with transaction() as db:
            name = platforms.remove_platform(db, platform_id).name
    except ServiceError as exc:
        return _admin_page(status_of(exc), error=message_of(exc))
    flash(_("Removed %(name)s.", name=name), "success")
    return redirect(url_for("lti.admin"))


# --- a linked class's LMS page ------------------------------------------------------


def _linked_class(class_id: int):
    user = accounts.current_user()
    db = get_session()
    classroom = accounts.teacher_class(db, user, class_id)
    context = accounts.context_of_class(db, class_id) if classroom else None
    if context is None:
        abort(404)
    return user, classroom, context


def _class_page(classroom, context: LtiContext, status: int = 200, **extra):
    db = get_session()
    grades.running_push(db, context)
    return render_template(
        "lti/class.html",
        classroom=classroom,
        context=context,
        platform=platforms.find_platform(db, context.issuer, context.client_id),
        members=roster.roster(db, context),
        pushes=grades.pushes(db, context),
        rules=[(rule, str(label)) for rule, label in RULE_LABELS.items()],
        rule_names={rule: str(name) for rule, name in RULE_NAMES.items()},
        can_sync=bool(context.memberships_url),
        can_push=bool(context.lineitems_url)
        and grades.SCORE_SCOPE in (context.ags_scopes or []),
        **extra,
    ), status


@bp.get("/classes/<int:class_id>")
@login_required
def class_page(class_id: int):
    """The class's LMS course: its roster and its grade pushes."""
    _user, classroom, context = _linked_class(class_id)
    return _class_page(classroom, context)


@bp.post("/classes/<int:class_id>/roster")
@login_required
def sync_roster(class_id: int):
    """Read the roster from the LMS (NRPS)."""
    _user, classroom, context = _linked_class(class_id)
    try:
        with transaction() as db:
            result = roster.sync_roster(db, context, instance_folder())
    except ServiceError as exc:
        return _class_page(classroom, context, status_of(exc), error=message_of(exc))
    flash(
        _(
            "Roster read: %(members)d members, %(joined)d of %(learners)d learners "
            "joined.",
            members=result.members,
            joined=result.joined,
            learners=result.learners,
        ),
        "success",
    )
    return redirect(url_for("lti.class_page", class_id=class_id) + "#roster")


def _retention_date(value: str) -> date | None:
    if not value.strip():
        return None
    try:
        return date.fromisoformat(value.strip())
    except ValueError:
        abort(400, description=_("Give the retention date as YYYY-MM-DD."))


@bp.post("/classes/<int:class_id>/push")
@login_required
def push(class_id: int):
    """Send the class's scores to the LMS's gradebook (in the background)."""
    user, classroom, context = _linked_class(class_id)
    rule = request.form.get("rule", "accuracy")
    on = _retention_date(request.form.get("retention_date", ""))
    try:
        with transaction() as db:
            started = grades.start_push(db, context, rule, started_by=user.id)
            push_id = started.id
    except ServiceError as exc:
        return _class_page(classroom, context, status_of(exc), error=message_of(exc))
    app = current_app._get_current_object()
    if app.config["LTI_PUSH_IN_BACKGROUND"]:
        threading.Thread(
            target=_run_push, args=(app, push_id, on), name=f"lti-push-{push_id}"
        ).start()
    else:
        _run_push(app, push_id, on)
    return redirect(url_for("lti.push_page", class_id=class_id, push_id=push_id))


def _run_push(app: Flask, push_id: int, on: date | None) -> None:
    with app.app_context():
        db = get_session()
        started = db.get(LtiGradePush, push_id)
        try:
            grades.run_push(
                db,
                started,
                app.instance_path,
                commit=db.commit,
                retention_date=on,
                delays=app.config["LTI_RETRY_DELAYS"] or grades.DEFAULT_RETRY_DELAYS,
            )
        except Exception:  # run_push marked the push failed; the log says why
            log.exception("lti grade push %s failed", push_id)
            return
        log.info("lti grade push %s finished", push_id)


@bp.get("/classes/<int:class_id>/pushes/<int:push_id>")
@login_required
def push_page(class_id: int, push_id: int):
    """One push: its progress while it runs, then what was sent and what failed."""
    _user, classroom, context = _linked_class(class_id)
    db = get_session()
    grades.running_push(db, context)
    found = db.get(LtiGradePush, push_id)
    if found is None or found.context_id != context.id:
        abort(404)
    names = {
        membership.user_id: accounts.learner_display_name(membership)
        for membership in accounts.class_learners(db, classroom)
    }
    lines: list[LtiScoreSend] = list(found.sends)
    return render_template(
        "lti/push.html",
        classroom=classroom,
        push=found,
        lines=lines,
        names=names,
        rule_label=str(RULE_LABELS.get(found.rule, found.rule)),
    )


def class_panel(classroom) -> dict[str, Any] | None:
    """For the class dashboard: the LMS page's link when the class is linked."""
    context = accounts.context_of_class(get_session(), classroom.id)
    if context is None:
        return None
    return {
        "url": url_for("lti.class_page", class_id=classroom.id),
        "title": context.title,
    }
