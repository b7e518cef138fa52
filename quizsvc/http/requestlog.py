"""One structured log line per request, and a request id to match reports by.

Each request gets an id (the client's `X-Request-ID` when it is a short plain
token, else a fresh one), sent back in the `X-Request-ID` header. When the
response is ready, one JSON line goes to the `quizsvc.requests` logger:

    {"request_id": "…", "method": "POST", "route": "/api/v1/drill/answer",
     "status": 201, "duration_ms": 12.4, "user_id": 7}

The route is the URL rule (`/drill/result/<int:review_id>`), never the query
string or the body, so passwords, tokens and answers stay out of the log. A 500
logs its traceback with the same id, and the error page shows the id. A 503
for an unavailable dependency adds `"dependency"` and `"error"` (its class and
first line) to the request's line instead.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
import uuid

from flask import Flask, Response, g, request

log = logging.getLogger("quizsvc.requests")
_CLIENT_ID = re.compile(r"^[A-Za-z0-9._-]{8,64}$")


def request_id() -> str:
    """This request's id."""
    return g.get("request_id") or "-"


def _start() -> None:
    offered = request.headers.get("X-Request-ID", "")
    g.request_id = offered if _CLIENT_ID.match(offered) else uuid.uuid4().hex
    g.request_started = time.perf_counter()


def route_of_request() -> str:
    """The URL rule that matched (or "unmatched"), safe to log and to label."""
    return request.url_rule.rule if request.url_rule is not None else "unmatched"


def _user_id() -> int | None:
    # Only a user this request already loaded: logging must not cost a query.
    user = g.get("_login_user")
    return getattr(user, "id", None) if user is not None else None


def _finish(response: Response) -> Response:
    response.headers["X-Request-ID"] = request_id()
    started = g.get("request_started")
    duration = time.perf_counter() - started if started is not None else 0.0
    g.request_duration = duration
    log.info(
        json.dumps(
            {
                "request_id": request_id(),
                "method": request.method,
                "route": route_of_request(),
                "status": response.status_code,
                "duration_ms": round(duration * 1000, 1),
                "user_id": _user_id(),
                # A 503 for an unavailable dependency: which one, and how it failed.
                **g.get("outage", {}),
            }
        )
    )
    return response


def init_app(app: Flask) -> None:
    """Number every request and log it; print the lines unless testing."""
    # First of the before-request hooks, so even a refused request has an id.
    app.before_request_funcs.setdefault(None, []).insert(0, _start)
    app.after_request(_finish)
    log.setLevel(logging.INFO)
    if not app.testing and not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        log.addHandler(handler)
        # One line per request, printed once (tests read it from the root).
        log.propagate = False
