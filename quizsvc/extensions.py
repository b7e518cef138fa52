"""Flask extensions, created unbound here and bound in create_app with init_app."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from flask import Response, current_app, g, request
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_login import LoginManager, current_user
from flask_wtf import CSRFProtect

from quizsvc import ratelimits  # noqa: F401  (registers the sqlite:// scheme)

login_manager = LoginManager()
csrf = CSRFProtect()
# Storage comes from RATELIMIT_STORAGE_URI: a SQLite file all workers of one
# machine share by default, a Redis URL when several servers must share them.
limiter = Limiter(key_func=get_remote_address)
# Requests that never touch the counters' storage.
PROBE_ENDPOINTS = frozenset({"health.healthz", "health.readyz", "metrics.metrics"})


@limiter.request_filter
def _is_probe() -> bool:
    # Otherwise Flask-Limiter, while its storage is down, asks it whether it
    # is back on any request, and a hung Redis would hold a probe that long.
    return request.endpoint in PROBE_ENDPOINTS


def _login_account() -> str:
    """The account a sign-in names (form or JSON), as the counters key it."""
    name = request.form.get("username")
    if name is None and request.is_json:
        body = request.get_json(silent=True)
        name = body.get("username") if isinstance(body, dict) else None
    if not isinstance(name, str):
        name = ""
    # Case and surrounding spaces do not make another account to guess at.
    return "account:" + name.strip().casefold()[:150]


def _failed_sign_in(response: Response) -> bool:
    """Only refused sign-ins count: a classroom signing in at once all succeeds.
    A 429 (already limited) or 503 (the counters' storage is down) is no guess."""
    return response.status_code >= 400 and response.status_code not in (429, 503)


# Failed sign-ins, over the web form and the API together (one counter per
# limit): per account from anywhere (guessing one password from many
# addresses), per address and account (one client guessing), and per address
# (one client trying many accounts). Successful sign-ins never count, so 40
# learners behind one school address all get in within the same minute.
_login_limits = (
    limiter.shared_limit(
        lambda: current_app.config["LOGIN_ACCOUNT_RATE_LIMIT"],
        scope="login-account",
        key_func=_login_account,
        methods=["POST"],
        deduct_when=_failed_sign_in,
    ),
    limiter.shared_limit(
        lambda: current_app.config["LOGIN_RATE_LIMIT"],
        scope="login",
        key_func=lambda: f"{get_remote_address()}|{_login_account()}",
        methods=["POST"],
        deduct_when=_failed_sign_in,
    ),
    limiter.shared_limit(
        lambda: current_app.config["LOGIN_ADDRESS_RATE_LIMIT"],
        scope="login-address",
        methods=["POST"],
        deduct_when=_failed_sign_in,
    ),
)


def login_limit(view: Callable) -> Callable:
    """Apply the failed-sign-in limits to a sign-in view.

    The limits count only after a sign-in was refused, so nothing asks the
    counters' storage before the view runs. When it must fail closed
    (RATELIMIT_IN_MEMORY_FALLBACK_ENABLED off), ask it first: a sign-in it
    could not count afterwards is refused with a 503 instead of let through.
    """
    for limit in _login_limits:
        view = limit(view)

    @functools.wraps(view)
    def counted_first(*args: Any, **kwargs: Any) -> Any:
        if not current_app.config["RATELIMIT_IN_MEMORY_FALLBACK_ENABLED"]:
            _require_counters()
        return view(*args, **kwargs)

    return counted_first


def _require_counters() -> None:
    """Raise the storage's own error (a 503 via quizsvc.http.outages) when the
    counters cannot be reached."""
    from limits.errors import StorageError

    if not limiter.storage.check():
        raise StorageError(ConnectionError("the rate-limit storage does not answer"))


def _joining_learner() -> str:
    """Joins count per signed-in learner, not per address (a class shares one)."""
    user_id = current_user.get_id() if current_user else None
    return f"user:{user_id}" if user_id else f"address:{get_remote_address()}"


# Joining a class, on the page and over the API together.
join_limit = limiter.shared_limit(
    lambda: current_app.config["JOIN_RATE_LIMIT"],
    scope="join",
    key_func=_joining_learner,
    methods=["POST"],
)
register_limit = limiter.shared_limit(
    lambda: current_app.config["REGISTER_RATE_LIMIT"],
    scope="register",
    methods=["POST"],
)


def _code_refused(response) -> bool:
    # Set by the reset views when a code was wrong, used or expired: only those
    # attempts count, so a typo in the new password costs nothing.
    return bool(g.get("reset_code_refused"))


# Password resets with a code, on the page and over the API together.
reset_limit = limiter.shared_limit(
    lambda: current_app.config["RESET_RATE_LIMIT"],
    scope="reset",
    methods=["POST"],
    deduct_when=_code_refused,
)
