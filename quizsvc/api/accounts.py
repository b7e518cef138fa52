"""Accounts over JSON: register, log in and out, personal API tokens."""

from __future__ import annotations

from flask import g

from quizsvc.api import bp, json_body, login_required
from quizsvc.db import get_session, transaction
from quizsvc.errors import N_, BadRequest, Unauthorized
from quizsvc.extensions import login_limit, register_limit, reset_limit
from quizsvc.http.login import (
    current_db_user,
    current_session_secret,
    sign_in,
    sign_out,
)
from quizsvc.i18n import SUPPORTED
from quizsvc.services.accounts import (
    authenticate,
    change_password,
    end_sessions,
    issue_token,
    list_tokens,
    register,
    revoke_token,
)
from quizsvc.services.reset_codes import BadResetCode, reset_password


def _user_dict(user) -> dict:
    return {
        "id": user.id,
        "username": user.username,
        "role": user.role,
        "locale": user.locale,
        "timezone": user.timezone,
    }


def _credentials(body: dict) -> tuple[str, str]:
    username, password = body.get("username"), body.get("password")
    if not isinstance(username, str) or not isinstance(password, str):
        raise BadRequest(N_("The username and the password must be strings."))
    return username, password


@bp.post("/auth/register")
@register_limit
def api_register():
    """Create a learner account and sign in."""
    body = json_body(("username", "password"))
    if "role" in body:
        # Roles are granted by an admin (quizsvc users set-role), never by asking.
        raise BadRequest(
            N_("Registering cannot choose a role; ask an admin."), field="role"
        )
    username, password = _credentials(body)
    locale = body.get("locale", "zh-CN")
    if locale not in SUPPORTED:
        raise BadRequest(N_("The locale must be zh-CN or en."), field="locale")
    with transaction() as session:
        user = register(session, username, password, locale=locale)
        sign_in(session, user)
    return {"user": _user_dict(user)}, 201


@bp.post("/auth/login")
@login_limit
def api_login():
    """Sign in; the response sets the session cookie."""
    username, password = _credentials(json_body(("username", "password")))
    with transaction() as session:
        user = authenticate(session, username, password)
        if user is None:
            raise Unauthorized(
                N_("Wrong username or password."), code="invalid_credentials"
            )
        sign_in(session, user)
    return {"user": _user_dict(user)}


@bp.post("/auth/reset")
@reset_limit
def api_reset_password():
    """Choose a new password with a one-time code from your teacher; every
    session and token of the account ends. Wrong codes count against a limit."""
    body = json_body(("username", "code", "new_password"))
    fields = (body["username"], body["code"], body["new_password"])
    if not all(isinstance(value, str) for value in fields):
        raise BadRequest(N_("username, code and new_password must be strings."))
    try:
        with transaction() as session:
            user = reset_password(session, *fields)
            shown = _user_dict(user)
    except BadResetCode:
        g.reset_code_refused = True
        raise
    return {"password_changed": True, "user": shown}


@bp.post("/auth/logout")
@login_required
def api_logout():
    """End this session on the server (bearer tokens stay valid until revoked)."""
    with transaction() as session:
        sign_out(session)
    return {"signed_out": True}


@bp.post("/auth/logout-everywhere")
@login_required
def api_logout_everywhere():
    """End every session of yours, this one included (tokens stay valid)."""
    with transaction() as session:
        ended = end_sessions(session, current_db_user())
        sign_out(session)
    return {"signed_out": True, "sessions_ended": ended}


@bp.post("/auth/password")
@login_required
def api_change_password():
    """Change your password; every other session ends, tokens too if asked."""
    body = json_body(("current_password", "new_password"))
    current, new = body["current_password"], body["new_password"]
    revoke = body.get("revoke_tokens", False)
    if not isinstance(current, str) or not isinstance(new, str):
        raise BadRequest(N_("The passwords must be strings."))
    if not isinstance(revoke, bool):
        raise BadRequest(
            N_("revoke_tokens must be true or false."), field="revoke_tokens"
        )
    with transaction() as session:
        ended = change_password(
            session,
            current_db_user(),
            current,
            new,
            keep_session=current_session_secret(),
            revoke_tokens=revoke,
        )
    return {
        "password_changed": True,
        "other_sessions_ended": ended,
        "tokens_revoked": revoke,
    }


@bp.get("/tokens")
@login_required
def api_tokens():
    """List your live tokens (never their secrets)."""
    tokens = list_tokens(get_session(), current_db_user())
    return {"tokens": [_token_dict(t) for t in tokens]}


@bp.post("/tokens")
@login_required
def api_create_token():
    """Create a personal API token; its secret is shown only in this response."""
    body = json_body()
    name = body.get("name", "script")
    if not isinstance(name, str):
        raise BadRequest(N_("The name must be a string."), field="name")
    with transaction() as session:
        issued = issue_token(session, current_db_user(), name)
    return {**_token_dict(issued.token), "token": issued.secret}, 201


@bp.delete("/tokens/<int:token_id>")
@login_required
def api_revoke_token(token_id: int):
    """Revoke one of your tokens."""
    with transaction() as session:
        token = revoke_token(session, current_db_user(), token_id)
    return _token_dict(token)


def _token_dict(token) -> dict:
    return {
        "id": token.id,
        "name": token.name,
        "created_at": token.created_at.isoformat(),
        "revoked_at": token.revoked_at.isoformat() if token.revoked_at else None,
    }
