"""One error contract: any error becomes a page, or JSON `{"error", "message"}`.

Every error quizsvc answers with passes through here: the errors of
quizsvc.errors (the services' and the API's), werkzeug's HTTP errors (the
strict input checks' 400s, a 404 from the URL map, a 405, a 413), Flask-
Limiter's 429. `message_of(exc)` gives its message in the request's language:
a msgid from the Babel catalogue, or bilingual content picked with
quizsvc.text.pick; `status_of` and `code_of` give its status and its code.

An error that shows a dependency unavailable (quizsvc.http.outages: the
database refusing, hanging past its bound, out of disk; the rate-limit
counters' storage failing closed) is a 503 with Retry-After, logged as one
line naming the dependency and the error; anything else unexpected is a 500
with its traceback. The error page needs neither the database nor Redis.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from flask import Flask, current_app, g, jsonify, render_template, request, url_for
from flask_babel import gettext
from flask_babel import lazy_gettext as _l
from flask_limiter import RateLimitExceeded
from flask_wtf.csrf import CSRFError
from werkzeug.exceptions import HTTPException, InternalServerError

from quizsvc.errors import N_, Message, QuizError, Unavailable
from quizsvc.http.login import settle_user_for_error_page
from quizsvc.http.outages import DATABASE, RATE_LIMITS, Outage, outage_of
from quizsvc.http.requestlog import request_id, route_of_request
from quizsvc.i18n import current_language

# A title and a message for each status, shown when the error brings no
# message of its own (werkzeug's generic English text is never shown).
_STATUS_TEXT = {
    400: (_l("Bad request"), _l("The request could not be read.")),
    401: (_l("Sign in first"), _l("Sign in first, then try again.")),
    403: (_l("Forbidden"), _l("You may not open this page.")),
    404: (_l("Not found"), _l("There is nothing at this address.")),
    405: (_l("Method not allowed"), _l("This page cannot be used that way.")),
    409: (_l("Conflict"), _l("This contradicts what is already stored.")),
    413: (_l("Too large"), _l("What you sent is too large.")),
    415: (
        _l("Unsupported format"),
        _l("This address cannot read what was sent in that format."),
    ),
    423: (_l("Closed for now"), _l("This stays closed while a drill item is open.")),
    429: (
        _l("Too many attempts"),
        _l("Too many attempts; wait a minute and try again."),
    ),
    500: (
        _l("Server error"),
        _l("Something went wrong on our side; please try again."),
    ),
    503: (
        _l("Unavailable"),
        _l("The service is unavailable for a moment; please try again soon."),
    ),
}
_ANY_STATUS = (_l("Error"), _l("The request could not be carried out."))
# Flask-WTF names the failed check in English ("The CSRF token is missing.").
_CSRF_REFUSED = _l("The form expired; please submit it again.")
# What a learner is told when a dependency is unavailable.
_OUTAGE_MESSAGES = {
    DATABASE: N_(
        "The database is not answering right now, so nothing was saved; "
        "try again in a few seconds."
    ),
    RATE_LIMITS: N_(
        "Signing in is unavailable for a moment; try again in a few seconds."
    ),
}


class RefusedRequest(HTTPException):
    """A werkzeug HTTP error whose message is a catalogue msgid with parameters.

    For the checks that must raise werkzeug's errors (the URL converter, the
    JSON provider); everything else raises a quizsvc.errors error.
    """

    code_name = "invalid_input"

    def __init__(self, msgid: str, /, **params: Any):
        self.message = Message(msgid, **params)
        super().__init__(description=str(self.message))


def _translate(msgid: str) -> str:
    return gettext(msgid)


def wants_json() -> bool:
    """Tell whether the client is an API client rather than a browser."""
    if request.path.startswith("/api/"):
        return True
    best = request.accept_mimetypes.best_match(["application/json", "text/html"])
    return (
        best == "application/json"
        and request.accept_mimetypes[best] > (request.accept_mimetypes["text/html"])
    )


def status_of(exc: BaseException) -> int:
    """Return the HTTP status an error is answered with."""
    if isinstance(exc, QuizError):
        return exc.status
    if isinstance(exc, HTTPException):
        return exc.code or 500
    return 500


def code_of(exc: BaseException) -> str:
    """Return the error's stable snake_case code (the JSON contract's `error`)."""
    if isinstance(exc, QuizError):
        return exc.code
    if isinstance(exc, HTTPException):
        named = getattr(exc, "code_name", None)
        return named or (exc.name or "error").lower().replace(" ", "_")
    return "internal_server_error"


def message_of(exc: BaseException) -> str:
    """Return the error's message in the request's language."""
    if isinstance(exc, QuizError):
        return exc.render(_translate, current_language())
    message = getattr(exc, "message", None)
    if isinstance(message, Message):
        return message.render(_translate, current_language())
    if isinstance(exc, CSRFError):
        return str(_CSRF_REFUSED)
    # A view's own description (given with abort(…, description=_(…))) is in
    # the request's language already; werkzeug's default one is English, and
    # the limiter's names the limit in English.
    if (
        isinstance(exc, HTTPException)
        and not isinstance(exc, RateLimitExceeded)
        and exc.description
        and exc.description != type(exc).description
    ):
        return str(exc.description)
    return str(_STATUS_TEXT.get(status_of(exc), _ANY_STATUS)[1])


def messages_of(errors: list[Message]) -> list[str]:
    """Translate several messages (such as the problems of one file)."""
    lang = current_language()
    return [message.render(_translate, lang) for message in errors]


def error_response(exc: BaseException, *, outage: bool = False):
    """Answer an error for whoever asked: JSON for API clients, else a page.

    `outage`: the database is what failed, so the page must not ask it again
    (who is signed in, their language).
    """
    status = status_of(exc)
    # Before anything that asks who is signed in (the message's language).
    settle_user_for_error_page(outage=outage)
    message = message_of(exc)
    # A server error names its request, so a report can be matched to the log.
    reference = request_id() if status >= 500 else None
    if wants_json():
        extra = {"request_id": reference} if reference else {}
        response = jsonify(error=code_of(exc), message=message, **extra)
        response.status_code = status
        if isinstance(exc, HTTPException) and exc.response is not None:
            response.headers.extend(
                (k, v)
                for k, v in exc.response.headers.items()
                if k.lower() in {"retry-after", "www-authenticate"}
            )
    else:
        response = current_app.make_response(
            (
                render_template(
                    "error.html",
                    status=status,
                    title=_STATUS_TEXT.get(status, _ANY_STATUS)[0],
                    message=message,
                    back=_way_back(),
                    reference=reference,
                ),
                status,
            )
        )
    if status == 503 and "Retry-After" not in response.headers:
        response.headers["Retry-After"] = str(
            int(current_app.config["UNAVAILABLE_RETRY_AFTER"])
        )
    if status >= 500:
        # A passing failure: no cache may keep it in place of the page.
        response.headers["Cache-Control"] = "no-store"
    return response


def _way_back() -> str:
    """Where the error page's button leads: the page the learner came from, when
    it is one of ours, else the home page."""
    referrer = request.referrer
    if referrer and urlsplit(referrer).netloc == request.host:
        return referrer
    return url_for("home.home")


def handle_unexpected(exc: Exception):
    """Answer 503 for an unavailable dependency; else log the traceback, 500."""
    outage = outage_of(exc)
    if outage is not None:
        return _unavailable(outage)
    current_app.logger.exception(
        "unhandled error, request %s: %s %s",
        request_id(),
        request.method,
        route_of_request(),
    )
    return error_response(InternalServerError())


def _unavailable(outage: Outage):
    # The request's log line names the dependency and the error: one line,
    # not a traceback per request for as long as the outage lasts.
    g.outage = {"dependency": outage.dependency, "error": outage.describe()}
    refusal = Unavailable(_OUTAGE_MESSAGES.get(outage.dependency))
    return error_response(refusal, outage=outage.dependency == DATABASE)


def init_app(app: Flask) -> None:
    """Register the handlers: quizsvc's errors, HTTP errors, then anything else."""
    app.register_error_handler(QuizError, error_response)
    app.register_error_handler(HTTPException, error_response)
    app.register_error_handler(Exception, handle_unexpected)
