"""Register, log in and log out (HTML forms with CSRF tokens; logins rate-limited)."""

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
from wtforms.validators import DataRequired, EqualTo, Length, Regexp

from quizsvc.db import transaction
from quizsvc.extensions import login_limit, register_limit
from quizsvc.http.errors import message_of
from quizsvc.http.login import sign_in, sign_out
from quizsvc.i18n import current_language
from quizsvc.services import ServiceError
from quizsvc.services.accounts import authenticate, register
from quizsvc.services.users import USERNAME_PATTERN

bp = Blueprint("auth", __name__)


def _nfkc(value: str | None) -> str | None:
    # Full-width letters from a Chinese input method are the ASCII ones.
    return unicodedata.normalize("NFKC", value) if value else value


class RegisterForm(FlaskForm):
    username = StringField(
        _l("Username"),
        filters=[_nfkc],
        validators=[
            DataRequired(),
            Length(max=64),
            Regexp(
                USERNAME_PATTERN,
                message=_l(
                    "Use letters, digits, '.', '_' or '-' "
                    "(starting with a letter or digit)."
                ),
            ),
        ],
    )
    password = PasswordField(
        _l("Password"), validators=[DataRequired(), Length(min=8, max=256)]
    )
    confirm = PasswordField(
        _l("Repeat the password"),
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
            return redirect(url_for("today.today"))
    status = 400 if form.errors else 200
    return render_template("auth/register.html", form=form), status


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
    status = 400 if form.errors else 200
    return render_template("auth/login.html", form=form), status


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
