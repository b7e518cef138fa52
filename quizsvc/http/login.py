"""Flask-Login glue: who is signed in, by session cookie or bearer token.

The cookie carries the secret of a server-side session (Flask-Login's
alternative id, see quizsvc.services.accounts), so it names the session, not
the user; API requests may instead send `Authorization: Bearer <token>`.
"""

from __future__ import annotations

from flask import Flask, g, session
from flask_login import UserMixin, current_user, login_user, logout_user
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from quizsvc.db import begin_reading
from quizsvc.extensions import login_manager
from quizsvc.models import User
from quizsvc.services.accounts import (
    end_sessions,
    start_session,
    user_for_session,
    user_for_token,
)


class LoginUser(UserMixin):
    """The Flask-Login view of a user row and the server-side session it signed in.

    `get_id` is the session's secret (Flask-Login's alternative id), so the
    cookie names the session, not the user; a bearer-token request has none.
    """

    def __init__(self, user: User, session_secret: str | None = None):
        self.user = user
        self.id = user.id
        self.session_secret = session_secret

    def get_id(self) -> str | None:
        return self.session_secret


def sign_in(session: Session, user: User) -> None:
    """Start a session for `user` and give this client its cookie (caller commits)."""
    login_user(LoginUser(user, start_session(session, user)))


def sign_out(session: Session) -> None:
    """End this client's server-side session and clear its cookie (caller commits)."""
    secret = getattr(current_user, "session_secret", None)
    if secret is not None:
        end_sessions(session, current_user.user, only=secret)
    logout_user()


def current_session_secret() -> str | None:
    """Return this request's server-side session secret (None for a bearer token)."""
    return getattr(current_user, "session_secret", None)


def current_db_user() -> User:
    """Return the signed-in user's row (call only behind login_required)."""
    return current_user.user


def _load_user(session_secret: str) -> LoginUser | None:
    _raise_if_loading_failed()
    try:
        # Signing in opens the request's read phase: no write lock for it.
        user = user_for_session(begin_reading(), session_secret)
    except SQLAlchemyError as exc:
        g.user_load_failed = exc
        raise
    return LoginUser(user, session_secret) if user is not None else None


def _load_user_from_request(req) -> LoginUser | None:
    header = req.headers.get("Authorization", "")
    scheme, _, secret = header.partition(" ")
    if scheme.lower() != "bearer" or not secret.strip():
        return None
    _raise_if_loading_failed()
    try:
        user = user_for_token(begin_reading(), secret.strip())
    except SQLAlchemyError as exc:
        g.user_load_failed = exc
        raise
    if user is None:
        g.bad_token = True
        return None
    return LoginUser(user)


def _raise_if_loading_failed() -> None:
    # Flask-Login tries again at each use of current_user until a load
    # succeeds; once the database failed this request, each try would wait
    # out its timeout again. Fail at once, the same way.
    failed = g.get("user_load_failed")
    if failed is not None:
        raise failed


def settle_user_for_error_page(*, outage: bool) -> None:
    """Make sure an error page can be drawn without the database.

    The signed-in user is loaded as usual, unless the database is what failed
    (`outage`, or loading the user failed earlier in the request): then the
    page goes on with nobody loaded, and `signed_in_unverified` tells the
    template that the browser still holds a session.
    """
    if "_login_user" in g:
        return
    if not outage and g.get("user_load_failed") is None:
        try:
            current_user._get_current_object()
            return
        except Exception:  # the error page must render whatever failed
            pass
    g._login_user = login_manager.anonymous_user()
    g.signed_in_unverified = bool(session.get("_user_id"))


def init_app(app: Flask) -> None:
    """Bind Flask-Login: session users, bearer tokens, the login page."""
    login_manager.init_app(app)
    login_manager.user_loader(_load_user)
    login_manager.request_loader(_load_user_from_request)
    login_manager.login_view = "auth.login"
    login_manager.login_message = None
    login_manager.session_protection = "basic"
