"""PostgreSQL as quizsvc runs it: every wait on the server bounded.

A server that refuses connections fails a request at once; one that hangs
(frozen, swapped out, behind a dead network path) would hold it for as long as
it hangs, since the kernel keeps acknowledging the packets. So each wait has
its own bound (the `Bounds`):

- connect: psycopg's `connect_timeout` (whole seconds, at least 2: libpq's
  rule), covering the TCP connection and the start-up handshake;
- pool: how long a request waits for a free pooled connection;
- statement: the server's `statement_timeout` for every statement, and on the
  client the longest silence it accepts from the server while it waits for an
  answer (a statement, a commit, a rollback). Past that the connection is
  closed, since a half-read answer leaves it unusable, and the request fails
  with an OperationalError the pool treats as a disconnect;
- ping: the pool's pre-ping of a connection that sat idle, shorter than a
  statement's, so a frozen server costs a request one ping and one connect
  timeout, not a whole statement timeout first.

A migration lifts the statement bound for its connection
(`without_statement_timeout`): rewriting a big table may take minutes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
from sqlalchemy import Connection, Engine, create_engine, event

# What a pooled connection that was idle may take to answer the pre-ping.
PING_TIMEOUT_SECONDS = 1.0


@dataclass(frozen=True)
class Bounds:
    """How long a request may wait on the server, in seconds (0: no bound)."""

    connect: float = 2
    pool: float = 3
    statement: float = 3

    @property
    def answer(self) -> float | None:
        """The client's limit on the server's silence during a statement."""
        # A little past the server's own statement_timeout: a live server
        # cancels a slow statement itself, keeping the connection usable.
        return self.statement + 0.5 if self.statement > 0 else None


class BoundedConnection(psycopg.Connection):
    """A psycopg connection that gives up on a server silent for too long."""

    # Set per connection by the engine's pool events (None: wait as long as
    # the server takes).
    answer_timeout: float | None = None

    def wait(self, gen: Any, interval: Any = None, timeout: float | None = None):
        """Consume a generator on the connection, within the answer timeout."""
        bound = self.answer_timeout if timeout is None else timeout
        options = {} if interval is None else {"interval": interval}
        try:
            return super().wait(gen, timeout=bound, **options)
        except psycopg.OperationalError as exc:
            if timeout is not None or self.closed or not _timed_out(exc):
                raise
            # The protocol stopped halfway: nothing more can be read or sent
            # on this connection. Closed, so the pool drops it.
            self.pgconn.finish()
            raise psycopg.errors.ConnectionTimeout(
                f"the database did not answer within {bound:g} s"
            ) from None


def _timed_out(exc: BaseException) -> bool:
    # psycopg's wait functions raise a private subclass of OperationalError
    # when their timeout expires; it is told apart by name, not imported.
    return type(exc).__name__ == "_WaitTimeout"


def create_postgresql_engine(
    url: str, *, bounds: Bounds | None = None, **options: Any
) -> Engine:
    """Create a PostgreSQL engine whose connect, checkout and statements are bounded."""
    bounds = bounds or Bounds()
    options.setdefault("pool_pre_ping", True)
    if bounds.pool > 0 and options.get("poolclass") is None:
        options.setdefault("pool_timeout", bounds.pool)
    connect_args = options.setdefault("connect_args", {})
    if bounds.connect > 0:
        connect_args.setdefault("connect_timeout", max(2, round(bounds.connect)))
    engine = create_engine(url, **options)

    @event.listens_for(engine, "do_connect")
    def connect_bounded(dialect, record, cargs, cparams):
        connection = BoundedConnection.connect(*cargs, **cparams)
        # Bounded from its first statement (SQLAlchemy's own set-up queries).
        connection.answer_timeout = bounds.answer
        return connection

    @event.listens_for(engine, "connect")
    def set_statement_timeout(dbapi_connection, record):
        if bounds.statement > 0:
            _set_statement_timeout(dbapi_connection, bounds.statement)
        dbapi_connection.answer_timeout = bounds.answer

    @event.listens_for(engine, "checkout")
    def bound_statements(dbapi_connection, record, proxy):
        dbapi_connection.answer_timeout = bounds.answer

    @event.listens_for(engine, "checkin")
    def bound_next_ping(dbapi_connection, record):
        # The next thing this connection does is the pre-ping of its next
        # checkout; a server that froze meanwhile is found out in a second.
        if dbapi_connection is not None and bounds.answer is not None:
            dbapi_connection.answer_timeout = min(PING_TIMEOUT_SECONDS, bounds.answer)

    return engine


def _set_statement_timeout(dbapi_connection: Any, seconds: float) -> None:
    autocommit = dbapi_connection.autocommit
    dbapi_connection.autocommit = True
    try:
        # A session setting, outside any transaction: it holds for the
        # connection's life, whatever the transactions on it do.
        dbapi_connection.execute(
            "SELECT set_config('statement_timeout', %s, false)",
            (f"{round(seconds * 1000)}ms",),
        )
    finally:
        dbapi_connection.autocommit = autocommit


@contextmanager
def without_statement_timeout(connection: Connection) -> Iterator[None]:
    """Lift the statement bounds for one connection's work (a migration)."""
    if connection.dialect.name != "postgresql":
        yield
        return
    dbapi_connection = connection.connection.dbapi_connection
    saved = getattr(dbapi_connection, "answer_timeout", None)
    # RESET would go back to the server's default, not to this connection's
    # bound: the value is kept and put back.
    before = connection.exec_driver_sql("SHOW statement_timeout").scalar_one()
    dbapi_connection.answer_timeout = None
    connection.exec_driver_sql("SET statement_timeout = 0")
    connection.commit()
    try:
        yield
    finally:
        dbapi_connection.answer_timeout = saved
        connection.exec_driver_sql(
            "SELECT set_config('statement_timeout', %(value)s, false)",
            {"value": before},
        )
        connection.commit()
