"""Database engine and the per-request session.

The session lifecycle lives here, outside the code that reads and writes data:
views and CLI commands get a session from `get_session()`, service functions
only add and flush, and the request (or command) commits once at the end.
"""

from __future__ import annotations

from typing import Any

from flask import Flask, current_app, g
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

EXTENSION_KEY = "quizsvc.db"


def make_engine(url: str, **options: Any) -> Engine:
    """Create an engine; SQLite gets WAL, foreign keys and a busy timeout."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        options.setdefault("connect_args", {}).setdefault("timeout", 15)
        engine = create_engine(url, **options)
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    options.setdefault("pool_pre_ping", True)
    return create_engine(url, **options)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    # WAL lets readers carry on while one writer commits; foreign keys are off
    # by default in SQLite; the busy timeout makes a second writer wait, not fail.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=15000")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def init_app(app: Flask) -> None:
    """Create the app's engine and session factory and close sessions per request."""
    engine = make_engine(app.config["DATABASE_URL"])
    app.extensions[EXTENSION_KEY] = sessionmaker(bind=engine, expire_on_commit=False)
    app.teardown_appcontext(_close_session)


def get_engine(app: Flask | None = None) -> Engine:
    """Return the engine bound to the app."""
    factory = (app or current_app).extensions[EXTENSION_KEY]
    return factory.kw["bind"]


def get_session() -> Session:
    """Return this request's (or command's) session, opening it on first use."""
    if "db_session" not in g:
        g.db_session = current_app.extensions[EXTENSION_KEY]()
    return g.db_session


def _close_session(exc: BaseException | None) -> None:
    session = g.pop("db_session", None)
    if session is not None:
        # Anything not committed explicitly by the request is discarded.
        session.close()


def prepare_database(app: Flask) -> None:
    """Make sure the database exists and answers before the server starts."""
    # Later the schema is brought up to date here too; for now opening one
    # connection creates the SQLite file in the instance folder.
    with get_engine(app).connect() as connection:
        connection.exec_driver_sql("SELECT 1")
