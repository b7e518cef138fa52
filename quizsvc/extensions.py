"""Flask extensions, created unbound here and bound in create_app with init_app."""

from __future__ import annotations

from flask import current_app, g, request
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_login import LoginManager
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


# One counter per limit for the web form and the API together.
login_limit = limiter.shared_limit(
    lambda: current_app.config["LOGIN_RATE_LIMIT"], scope="login", methods=["POST"]
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
