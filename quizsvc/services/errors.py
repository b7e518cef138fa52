"""The errors services raise, built on quizsvc.errors: a code, a status, a message.

A service refuses with one of these and an English msgid marked with `N_`
(plus its parameters); the edge that shows it translates it.

    raise InvalidInput(N_("The note may have at most %(n)d characters."), n=2000)
"""

from __future__ import annotations

from quizsvc import errors
from quizsvc.errors import N_, Message, QuizError

__all__ = [
    "N_",
    "Conflict",
    "InvalidInput",
    "Message",
    "NotFound",
    "ServiceError",
]


class ServiceError(QuizError):
    """A request the service cannot carry out; `code` names the reason."""

    code = "invalid"
    status = 400


class NotFound(ServiceError, errors.NotFound):
    """The thing asked for does not exist (or is not the caller's)."""

    code = "not_found"
    status = 404


class InvalidInput(ServiceError, errors.BadRequest, ValueError):
    """The input breaks a rule; the message says which."""

    code = "invalid_input"
    status = 400


class Conflict(ServiceError, errors.Conflict):
    """The request contradicts what is already stored."""

    code = "conflict"
    status = 409
