"""Tell a dependency that is unavailable from a bug.

A request that fails because the database or the rate-limit counters cannot
answer now (refused, hung past its bound, out of disk, locked too long, shut
down) is answered 503 with Retry-After: the client should try again shortly.
Anything else that escapes a view is a bug, answered 500 with a traceback in
the log. `outage_of(exc)` says which: the dependency and the error that shows
it, or None for a bug.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from sqlalchemy import exc as sa

DATABASE, RATE_LIMITS = "database", "rate_limits"

# What SQLite says when the file cannot take the request now, as opposed to
# a bug in the statement ("no such table", "syntax error" …).
_SQLITE_UNAVAILABLE = (
    "database is locked",
    "database table is locked",
    "database or disk is full",
    "disk i/o error",
    "unable to open database file",
    "attempt to write a readonly database",
)


@dataclass(frozen=True)
class Outage:
    """A dependency that did not answer, and the error that showed it."""

    dependency: str
    error: BaseException

    def describe(self) -> str:
        """The error's class and first line, for a log line (no traceback)."""
        error = self.error
        text = str(getattr(error, "orig", None) or error).strip()
        first = text.splitlines()[0] if text else ""
        return f"{type(error).__name__}: {first}" if first else type(error).__name__


def outage_of(exc: BaseException) -> Outage | None:
    """Return the unavailable dependency behind an error, or None for a bug."""
    seen: set[int] = set()
    error: BaseException | None = exc
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        dependency = _dependency(error)
        if dependency is not None:
            return Outage(dependency, error)
        error = error.__cause__ or error.__context__
    return None


def _dependency(error: BaseException) -> str | None:
    if isinstance(error, sa.TimeoutError):  # no free pooled connection in time
        return DATABASE
    if isinstance(error, sa.PendingRollbackError) and "reconnect until invalid" in (
        str(error)
    ):
        # The connection was lost earlier in this request, and that error was
        # handled (a page drawn in the default language instead of the
        # learner's): the next use of the session says so.
        return DATABASE
    if isinstance(error, sa.DBAPIError):
        if error.connection_invalidated:
            return DATABASE
        return _dependency(error.orig) if error.orig is not None else None
    if isinstance(error, sqlite3.OperationalError):
        message = str(error).lower()
        return DATABASE if message.startswith(_SQLITE_UNAVAILABLE) else None
    module = type(error).__module__
    if module.startswith("psycopg"):
        return _psycopg_dependency(error)
    if module.startswith(("redis", "limits")):
        return _limits_dependency(error)
    return None


def _psycopg_dependency(error: BaseException) -> str | None:
    import psycopg

    # OperationalError covers the server refusing, shutting down, cancelling
    # a statement past its timeout and a connection timing out; the others
    # (a constraint, a type, bad SQL) are bugs. A read-only server (a standby
    # during failover) cannot take the write either.
    if isinstance(error, psycopg.OperationalError | psycopg.InterfaceError):
        return DATABASE
    if isinstance(error, psycopg.errors.ReadOnlySqlTransaction):
        return DATABASE
    return None


def _limits_dependency(error: BaseException) -> str | None:
    try:
        import redis
    except ImportError:  # pragma: no cover - redis is a dependency of quizsvc
        redis = None
    if redis is not None and isinstance(
        error, redis.exceptions.ConnectionError | redis.exceptions.TimeoutError
    ):
        return RATE_LIMITS
    from limits.errors import StorageError

    return RATE_LIMITS if isinstance(error, StorageError) else None
