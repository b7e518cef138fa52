"""The per-request (or per-command) session, its read phase and its one commit."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

from flask import Flask, current_app, g, has_request_context, request
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from quizsvc.db.engine import is_sqlite, make_engine
from quizsvc.db.postgresql import Bounds
from quizsvc.db.transactions import NO_FLUSH_OPTION, end_read_phase, start_read_phase

EXTENSION_KEY = "quizsvc.db"

P = ParamSpec("P")
R = TypeVar("R")


def init_app(app: Flask) -> None:
    """Create the app's engine and session factory and close sessions per request."""
    engine = make_engine(
        app.config["DATABASE_URL"],
        sqlite_synchronous=app.config["SQLITE_SYNCHRONOUS"],
        sqlite_busy_timeout=_seconds(app.config, "SQLITE_BUSY_TIMEOUT"),
        bounds=Bounds(
            connect=_seconds(app.config, "DATABASE_CONNECT_TIMEOUT"),
            pool=_seconds(app.config, "DATABASE_POOL_TIMEOUT"),
            statement=_seconds(app.config, "DATABASE_STATEMENT_TIMEOUT"),
        ),
    )
    app.extensions[EXTENSION_KEY] = sessionmaker(bind=engine, expire_on_commit=False)
    app.teardown_appcontext(_close_session)


def _seconds(config: dict, name: str) -> float:
    """A timeout setting in seconds (0 for none), or a ValueError naming it."""
    value = config.get(name)
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = -1.0
    if not 0 <= seconds < 3600:
        raise ValueError(
            f"{name} (QUIZSVC_{name}) must be a number of seconds from 0 "
            f"(no limit) to 3600, not {value!r}"
        )
    return seconds


def get_engine(app: Flask | None = None) -> Engine:
    """Return the engine bound to the app."""
    factory = (app or current_app).extensions[EXTENSION_KEY]
    return factory.kw["bind"]


def get_session() -> Session:
    """Return this request's (or command's) session, opening it on first use."""
    if "db_session" not in g:
        options = {NO_FLUSH_OPTION: True} if _view_commits_without_flush() else {}
        g.db_session = current_app.extensions[EXTENSION_KEY](execution_options=options)
    return g.db_session


def commits_without_flush(view: Callable[P, R]) -> Callable[P, R]:
    """Mark a view whose commit stores nothing a learner would miss after a crash.

    Its transaction commits without waiting for the disk (SQLite
    `synchronous=NORMAL`, PostgreSQL `synchronous_commit=off`); a later
    durable commit makes it durable too. See the README's Database section.
    """
    view.commits_without_flush = True  # type: ignore[attr-defined]
    return view


def _view_commits_without_flush() -> bool:
    if not has_request_context() or request.endpoint is None:
        return False
    view = current_app.view_functions.get(request.endpoint)
    return bool(getattr(view, "commits_without_flush", False))


def _close_session(exc: BaseException | None) -> None:
    session = g.pop("db_session", None)
    if session is not None:
        # Anything not committed explicitly by the request is discarded.
        session.close()


@contextmanager
def transaction() -> Iterator[Session]:
    """Yield this request's session; commit if the block succeeds, else roll back."""
    session = get_session()
    end_read_phase(session)
    try:
        yield session
    except BaseException:
        session.rollback()
        raise
    session.commit()


def begin_reading() -> Session:
    """Start this request's read phase: the reads that come before its writes.

    On SQLite the read phase is a deferred transaction: it sees one snapshot
    and takes neither the writer gate nor SQLite's write lock, so signing in,
    loading settings and planning the next step do not make other learners'
    answers wait. `transaction()` ends it before the first write; a request
    that only reads never takes the lock at all. Elsewhere (PostgreSQL, where
    reads take no lock) and once a transaction is open, it changes nothing.
    """
    session = get_session()
    if not session.in_transaction() and is_sqlite(session.get_bind()):
        start_read_phase(session)
    return session
