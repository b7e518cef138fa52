"""Settings: the daily queue, the interface language, personal API tokens.

The learner's language setting also drives the interface (see
quizsvc.i18n.current_language), unless this browser session chose a language
explicitly (?lang=...).
"""

from __future__ import annotations

from typing import Any

from flask import (
    Blueprint,
    abort,
    flash,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_login import login_required

from quizsvc.config import COMMON_TIMEZONES
from quizsvc.db import get_session, transaction
from quizsvc.http.errors import message_of, status_of
from quizsvc.http.login import current_db_user, current_session_secret, sign_out
from quizsvc.scheduling import MIN_REVIEWS_TO_OPTIMIZE
from quizsvc.services import InvalidInput, NotFound, ServiceError
from quizsvc.services.accounts import (
    change_password,
    end_sessions,
    issue_token,
    list_tokens,
    revoke_token,
)
from quizsvc.services.parameters import scheduled_by
from quizsvc.services.settings import (
    SETTING_NAMES,
    apply_settings,
    load_settings,
    settings_dict,
)

bp = Blueprint("settings", __name__)

# Shown next to a field whose value the settings service refused.
FIELD_ERRORS = {
    "desired_retention": _l("Enter a retention between 0.70 and 0.99, such as 0.9."),
    "new_per_day": _l("Enter a whole number from 0 to 1000."),
    "reviews_per_day": _l("Enter a whole number from 0 to 10000."),
    "timezone": _l("Enter a time zone by its IANA name, such as Asia/Shanghai."),
    "rollover_hour": _l("Choose an hour from 0 to 23."),
    "two_button_mode": _l("Tick the box or leave it empty."),
    "language": _l("Choose 中文 or English."),
}


class _Refused(Exception):
    """Some fields were refused; the whole form is rolled back."""

    def __init__(self, errors: dict[str, str]):
        super().__init__(errors)
        self.errors = errors


def _form_changes() -> dict[str, Any]:
    form = request.form
    changes: dict[str, Any] = {
        name: form.get(name, "").strip()
        for name in SETTING_NAMES
        if name != "two_button_mode"
    }
    # An unticked checkbox sends nothing.
    changes["two_button_mode"] = form.get("two_button_mode") in {"1", "on", "true"}
    return changes


def _render(
    *,
    values: dict[str, Any] | None = None,
    errors: dict[str, str] | None = None,
    token_error: str | None = None,
    token_name: str = "",
    new_token: Any = None,
    password_error: str | None = None,
    status: int = 200,
):
    db_session, user = get_session(), current_db_user()
    stored = settings_dict(load_settings(db_session, user))
    response = render_template(
        "settings.html",
        values={**stored, **(values or {})},
        errors=errors or {},
        tokens=list_tokens(db_session, user),
        token_error=token_error,
        token_name=token_name,
        new_token=new_token,
        password_error=password_error,
        timezones=COMMON_TIMEZONES,
        hours=range(24),
        scheduled_by=scheduled_by(db_session, user),
        min_reviews_to_fit=MIN_REVIEWS_TO_OPTIMIZE,
    )
    return response, status


@bp.get("/settings")
@login_required
def settings():
    """Show the learner's settings and API tokens."""
    return _render()


@bp.post("/settings")
@login_required
def save():
    """Save the settings form; refused fields are marked and nothing is saved."""
    changes = _form_changes()
    user = current_db_user()
    before = load_settings(get_session(), user).language
    try:
        with transaction() as db_session:
            errors = {}
            for name, value in changes.items():
                try:
                    apply_settings(db_session, user, {name: value})
                except InvalidInput:
                    errors[name] = str(FIELD_ERRORS[name])
            if errors:
                raise _Refused(errors)
    except _Refused as refused:
        return _render(values=changes, errors=refused.errors, status=400)
    if changes["language"] != before:
        # The learner just chose a language: an earlier ?lang= switch in this
        # browser session must not hide it.
        session.pop("lang", None)
    flash(_("Your settings are saved."), "success")
    return redirect(url_for("settings.settings"))


@bp.post("/settings/tokens")
@login_required
def create_token():
    """Create a personal API token and show its secret, this once only."""
    name = request.form.get("name", "").strip()
    try:
        with transaction() as db_session:
            issued = issue_token(db_session, current_db_user(), name)
    except InvalidInput:
        return _render(
            token_error=_("Give the token a name of 1 to 100 characters."),
            token_name=name,
            status=400,
        )
    response, status = _render(new_token=issued)
    # The secret is on this page only: no cache may keep a copy.
    return response, status, {"Cache-Control": "no-store"}


@bp.post("/settings/tokens/<int:token_id>/revoke")
@login_required
def revoke(token_id: int):
    """Revoke one of your tokens (anyone else's is 404)."""
    try:
        with transaction() as db_session:
            token = revoke_token(db_session, current_db_user(), token_id)
    except NotFound:
        abort(404, description=_("You have no such token."))
    flash(
        _(
            "The token “%(name)s” is revoked; scripts using it are refused "
            "from now on.",
            name=token.name,
        ),
        "success",
    )
    return redirect(url_for("settings.settings", _anchor="tokens"))


@bp.post("/settings/password")
@login_required
def password():
    """Change the password; other sessions end, and the tokens if ticked."""
    form = request.form
    new = form.get("new_password", "")
    if new != form.get("confirm", ""):
        return _render(password_error=_("The passwords differ."), status=400)
    revoke_tokens = form.get("revoke_tokens") in {"1", "on", "true"}
    try:
        with transaction() as db_session:
            ended = change_password(
                db_session,
                current_db_user(),
                form.get("current_password", ""),
                new,
                keep_session=current_session_secret(),
                revoke_tokens=revoke_tokens,
            )
    except ServiceError as exc:
        return _render(password_error=message_of(exc), status=status_of(exc))
    flash(
        _(
            "Your password is changed; %(count)d other session(s) ended.",
            count=ended,
        )
        + (" " + _("All your API tokens are revoked.") if revoke_tokens else ""),
        "success",
    )
    return redirect(url_for("settings.settings", _anchor="account"))


@bp.post("/settings/sign-out-everywhere")
@login_required
def sign_out_everywhere():
    """End every session of this learner, this one included."""
    with transaction() as db_session:
        end_sessions(db_session, current_db_user())
        sign_out(db_session)
    flash(_("You are signed out on every browser and device."), "info")
    return redirect(url_for("auth.login"))
