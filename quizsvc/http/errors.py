"""One error contract: JSON `{"error", "message"}` for API clients, a page otherwise."""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Flask, jsonify, render_template, request, url_for
from flask_babel import lazy_gettext as _l
from flask_limiter import RateLimitExceeded
from werkzeug.exceptions import HTTPException, InternalServerError

from quizsvc.http.requestlog import request_id, route_of_request


def wants_json() -> bool:
    """True when the client is an API client rather than a browser."""
    if request.path.startswith("/api/"):
        return True
    best = request.accept_mimetypes.best_match(["application/json", "text/html"])
    return (
        best == "application/json"
        and request.accept_mimetypes[best] > (request.accept_mimetypes["text/html"])
    )


def message_of(exc: Exception) -> str:
    """A service error's message in the request's language (when it has both)."""
    from quizsvc.i18n import current_language

    localized = getattr(exc, "localized", None)
    return localized(current_language()) if localized else str(exc)


def error_code(exc: HTTPException) -> str:
    """A stable snake_case code for an HTTP error, e.g. "not_found"."""
    return getattr(exc, "code_name", None) or (exc.name or "error").lower().replace(
        " ", "_"
    )


# Page titles and, where werkzeug's generic English text would be shown, a
# message in the learner's language.
_PAGE_TEXT = {
    400: (_l("Bad request"), _l("The request could not be read.")),
    403: (_l("Forbidden"), _l("You may not open this page.")),
    404: (_l("Not found"), _l("There is nothing at this address.")),
    405: (_l("Method not allowed"), _l("This page cannot be used that way.")),
    413: (_l("Too large"), _l("What you sent is too large.")),
    500: (
        _l("Server error"),
        _l("Something went wrong on our side; please try again."),
    ),
}


def handle_http_error(exc: HTTPException):
    """Render an HTTP error for whoever asked."""
    status = exc.code or 500
    message = exc.description or exc.name
    # A server error names its request, so a report can be matched to the log.
    reference = request_id() if status >= 500 else None
    if wants_json():
        return _json_answer(exc, status, message, reference)
    title, generic = _PAGE_TEXT.get(status, (exc.name, None))
    if generic is not None and exc.description == type(exc).description:
        message = generic
    return _page_answer(status, title, message, reference)


def handle_rate_limited(exc: RateLimitExceeded):
    """Answer a request over one of Flask-Limiter's limits, page or JSON.

    The limiter's own description is the limit in English ("10 per 1 minute");
    the learner reads what to do, in their language.
    """
    message = str(_l("Too many attempts; wait a minute and try again."))
    if wants_json():
        return _json_answer(exc, 429, message)
    return _page_answer(429, _l("Too many attempts"), message)


def _json_answer(exc: HTTPException, status: int, message, reference=None):
    extra = {"request_id": reference} if reference else {}
    response = jsonify(error=error_code(exc), message=message, **extra)
    response.status_code = status
    if exc.response is not None:
        response.headers.extend(
            (k, v)
            for k, v in exc.response.headers.items()
            if k.lower() in {"retry-after", "www-authenticate"}
        )
    return response


def _page_answer(status: int, title, message, reference=None):
    return render_template(
        "error.html",
        status=status,
        title=title,
        message=message,
        back=_way_back(),
        reference=reference,
    ), status


def _way_back() -> str:
    """Where the error page's button leads: the page the learner came from, when
    it is one of ours, else the home page."""
    referrer = request.referrer
    if referrer and urlsplit(referrer).netloc == request.host:
        return referrer
    return url_for("home.home")


def handle_unexpected(exc: Exception):
    """Log the traceback and answer a plain 500 without leaking it."""
    from flask import current_app

    current_app.logger.exception(
        "unhandled error, request %s: %s %s",
        request_id(),
        request.method,
        route_of_request(),
    )
    return handle_http_error(InternalServerError())


def init_app(app: Flask) -> None:
    """Register the handlers."""
    app.register_error_handler(HTTPException, handle_http_error)
    app.register_error_handler(RateLimitExceeded, handle_rate_limited)
    app.register_error_handler(Exception, handle_unexpected)
