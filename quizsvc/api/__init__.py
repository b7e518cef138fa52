"""The JSON API under /api/v1: the same rules as the pages, JSON in and out.

Authentication is the session cookie (POST /api/v1/auth/login) or a personal
token (`Authorization: Bearer qz_…`). The API is exempt from the form CSRF
token because every body must be `application/json`: a cross-site form cannot
send that without a CORS preflight, which this service never grants, and the
session cookie is SameSite=Lax besides.

Errors always have the shape `{"error": code, "message": text}`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, ParamSpec, TypeVar

from flask import Blueprint, Flask, g, request
from flask_login import current_user

from quizsvc.errors import N_, BadRequest, Unauthorized, UnsupportedMediaType
from quizsvc.extensions import csrf
from quizsvc.http.input_checks import MAX_ID

bp = Blueprint("api", __name__, url_prefix="/api/v1")
csrf.exempt(bp)

P = ParamSpec("P")
R = TypeVar("R")


def json_body(required: tuple[str, ...] = ()) -> dict[str, Any]:
    """The request's JSON object; 415 if not JSON, 400 if malformed or incomplete."""
    if not request.is_json:
        raise UnsupportedMediaType(
            N_("Send the body as JSON with Content-Type: application/json.")
        )
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        raise BadRequest(N_("The body must be a JSON object."), code="malformed_json")
    missing = [name for name in required if body.get(name) in (None, "")]
    if missing:
        raise BadRequest(
            N_("missing field(s): %(fields)s"),
            code="missing_field",
            field=missing[0],
            fields=missing,
        )
    return body


def id_field(body: dict[str, Any], name: str) -> int:
    """A database id from the body: a whole number from 1 to MAX_ID, else 400."""
    value = body.get(name)
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or not 1 <= value <= MAX_ID
    ):
        raise BadRequest(
            N_("%(name)s must be a whole number from 1 to %(most)d."),
            field=name,
            name=name,
            most=MAX_ID,
        )
    return value


def login_required(view: Callable[P, R]) -> Callable[P, R]:
    """Refuse anonymous requests with 401 JSON (no redirect to a login page)."""

    @wraps(view)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        if not current_user.is_authenticated:
            if g.get("bad_token"):
                raise Unauthorized(
                    N_("The bearer token is unknown or revoked."), code="invalid_token"
                )
            raise Unauthorized(
                N_("Sign in first (POST /api/v1/auth/login) or send a bearer token.")
            )
        return view(*args, **kwargs)

    return wrapper


def init_app(app: Flask) -> None:
    """Register the API blueprint and its modules."""
    from quizsvc.api import (  # noqa: F401  (modules register routes on bp)
        accounts,
        classes,
        drill,
        exports,
        learner,
        openapi,
        practice,
        rosters,
    )

    app.register_blueprint(bp)
