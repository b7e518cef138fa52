"""Engines: SQLite and PostgreSQL set up for quizsvc (their modules), long reads."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, Engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from quizsvc.db.postgresql import Bounds, create_postgresql_engine
from quizsvc.db.sqlite import create_sqlite_engine
from quizsvc.db.transactions import NO_FLUSH_OPTION, READ_ONLY_OPTION


def make_engine(
    url: str,
    *,
    sqlite_synchronous: str = "FULL",
    sqlite_busy_timeout: float | None = None,
    bounds: Bounds | None = None,
    **options: Any,
) -> Engine:
    """Create an engine; SQLite gets WAL, foreign keys, a busy timeout, savepoints.

    PostgreSQL gets `bounds` on its connect, checkout and statement waits
    (quizsvc.db.postgresql); SQLite's writers give up after
    `sqlite_busy_timeout` seconds (BUSY_TIMEOUT_SECONDS when None).
    """
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return create_sqlite_engine(
            url,
            parsed.database,
            synchronous=sqlite_synchronous,
            busy_timeout=sqlite_busy_timeout,
            **options,
        )
    engine = create_postgresql_engine(url, bounds=bounds, **options)
    event.listen(engine, "begin", _postgresql_begin)
    return engine


def _postgresql_begin(connection: Connection) -> None:
    if connection.get_execution_options().get(NO_FLUSH_OPTION):
        # This transaction only: its commit returns before the WAL is flushed.
        connection.exec_driver_sql("SET LOCAL synchronous_commit TO off")


def is_sqlite(engine_or_connection: Engine | Connection) -> bool:
    """Tell whether the database behind an engine or connection is SQLite."""
    return engine_or_connection.dialect.name == "sqlite"


@contextmanager
def read_only_session(engine: Engine) -> Iterator[Session]:
    """Yield a session of its own for a long read; it never commits.

    On SQLite it starts a deferred transaction instead of BEGIN IMMEDIATE, so
    an export streaming a million rows does not hold the write lock.
    """
    with engine.connect() as connection:
        connection.execution_options(**{READ_ONLY_OPTION: True})
        with Session(bind=connection, expire_on_commit=False) as session:
            yield session
