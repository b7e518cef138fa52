"""Register, log in, log out and reset a forgotten password with a teacher's
code (HTML forms with CSRF tokens; logins and wrong codes rate-limited).

A `next` address (a join link, say) is carried from the sign-in page to
registering and resetting, so a new learner lands where the link pointed.
"""

from __future__ import annotations

import unicodedata
from urllib.parse import urlsplit

from flask import (
    Blueprint,
    flash,
    g,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_login import current_user, login_required
from flask_wtf import FlaskForm
from wtforms import PasswordField, StringField
from wtforms.validators import DataRequired, EqualTo, Length, ValidationError

from quizsvc.db import get_session, transaction
from quizsvc.extensions import login_limit, register_limit, reset_limit
from quizsvc.http.errors import message_of
from quizsvc.http.login import sign_in, sign_out
from quizsvc.i18n import current_language
from quizsvc.services import ServiceError
from quizsvc.services.accounts import authenticate, register
from quizsvc.services.classes import class_by_code
from quizsvc.services.reset_codes import BadResetCode, reset_password
from quizsvc.services.users import MAX_USERNAME_LENGTH, check_username

bp = Blueprint("auth", __name__)


def _nfkc(value: str | None) -> str | None:
    # Full-width letters from a Chinese input method are the ASCII ones.
    return unicodedata.normalize("NFKC", value) if value else value


def _username_rule(form, field) -> None:
    try:
        check_username(field.data or "")
    except ServiceError as exc:
        raise ValidationError(message_of(exc)) from None


class RegisterForm(FlaskForm):
    username = StringField(
        _l("Username"),
        filters=[_nfkc],
        validators=[DataRequired(), Length(max=MAX_USERNAME_LENGTH), _username_rule],
        # Shown before submitting: a zh-CN learner's first try is a Chinese name.
        description=_l(
            "1-64 letters (Chinese characters too) or digits; '.', '_' and '-' "
            "may follow the first character. Upper and lower case count as the "
            "same name."
        ),
    )
    password = PasswordField(
        _l("Password"),
        validators=[DataRequired(), Length(min=8, max=256)],
        description=_l("At least 8 characters; a phrase of a few words is best."),
    )
    confirm = PasswordField(
        _l("Repeat the password"),
        validators=[
            DataRequired(),
            EqualTo("password", message=_l("The passwords differ.")),
        ],
    )


class ResetForm(FlaskForm):
    username = StringField(_l("Username"), validators=[DataRequired(), Length(max=64)])
    code = StringField(
        _l("Reset code from your teacher"),
        validators=[DataRequired(), Length(max=64)],
        description=_l("Like ABCD-EFGH-JKMN; case, spaces and dashes do not matter."),
    )
    password = PasswordField(
        _l("New password"),
        validators=[DataRequired(), Length(min=8, max=256)],
        description=_l("At least 8 characters; a phrase of a few words is best."),
    )
    confirm = PasswordField(
        _l("Repeat the new password"),
        validators=[
            DataRequired(),
            EqualTo("password", message=_l("The passwords differ.")),
        ],
    )


class LoginForm(FlaskForm):
    username = StringField(_l("Username"), validators=[DataRequired(), Length(max=64)])
    password = PasswordField(
        _l("Password"), validators=[DataRequired(), Length(max=256)]
    )


def _safe_next(target: str | None) -> str:
    """Only follow a `next` that stays on this site."""
    if target and target.startswith("/") and not target.startswith("//"):
        parts = urlsplit(target)
        if not parts.scheme and not parts.netloc:
            return target
    return url_for("today.today")


def _next_arg() -> dict[str, str]:
    """The `next` of this request, to carry on to the next auth page."""
    target = request.args.get("next")
    return {"next": target} if target and _safe_next(target) == target else {}


def _joining_class() -> str | None:
    """The name of the class whose join link sent the visitor here, if any."""
    target = request.args.get("next") or ""
    prefix = url_for("classes.join_link", code="_")[:-1]
    if not target.startswith(prefix) or _safe_next(target) != target:
        return None
    try:
        return class_by_code(get_session(), target[len(prefix) :]).name
    except ServiceError:
        return None


def _auth_page(template: str, form, status: int):
    return render_template(
        template, form=form, next_arg=_next_arg(), joining=_joining_class()
    ), status


@bp.route("/register", methods=["GET", "POST"])
@register_limit
def register_page():
    """Create an account and sign in."""
    form = RegisterForm()
    if form.validate_on_submit():
        try:
            with transaction() as session:
                user = register(
                    session,
                    form.username.data or "",
                    form.password.data or "",
                    locale=current_language(),
                )
                sign_in(session, user)
        except ServiceError as exc:
            field = form.password if exc.field == "password" else form.username
            field.errors.append(message_of(exc))
        else:
            flash(_("Welcome! Your first drill is ready."), "success")
            return redirect(_safe_next(request.args.get("next")))
    return _auth_page("auth/register.html", form, 400 if form.errors else 200)


@bp.route("/login", methods=["GET", "POST"])
@login_limit
def login():
    """Sign in with username and password."""
    form = LoginForm()
    if form.validate_on_submit():
        with transaction() as session:
            user = authenticate(
                session, form.username.data or "", form.password.data or ""
            )
            if user is not None:
                sign_in(session, user)
        if user is not None:
            return redirect(_safe_next(request.args.get("next")))
        form.password.errors.append(_("Wrong username or password."))
    return _auth_page("auth/login.html", form, 400 if form.errors else 200)


@bp.route("/reset", methods=["GET", "POST"])
@reset_limit
def reset():
    """Choose a new password with the one-time code a teacher issued; then
    signed in here, and signed out everywhere else."""
    form = ResetForm()
    if form.validate_on_submit():
        try:
            with transaction() as session:
                user = reset_password(
                    session,
                    form.username.data or "",
                    form.code.data or "",
                    form.password.data or "",
                )
                sign_in(session, user)
        except BadResetCode as exc:
            g.reset_code_refused = True
            form.code.errors.append(message_of(exc))
        except ServiceError as exc:
            form.password.errors.append(message_of(exc))
        else:
            flash(
                _("Your new password is set; you are signed in on this device only."),
                "success",
            )
            return redirect(_safe_next(request.args.get("next")))
    return _auth_page("auth/reset.html", form, 400 if form.errors else 200)


@bp.post("/logout")
@login_required
def logout():
    """Sign out (a POST with a CSRF token, so no other site can sign you out)."""
    with transaction() as session:
        sign_out(session)
    flash(_("You are signed out."), "info")
    return redirect(url_for("auth.login"))


@bp.app_context_processor
def inject_user():
    # A browser whose session could not be checked (the database is down)
    # still sees its own navigation on the error page.
    return {
        "signed_in": current_user.is_authenticated
        or bool(g.get("signed_in_unverified"))
    }
