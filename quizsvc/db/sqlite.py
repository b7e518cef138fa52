"""SQLite as quizsvc runs it: WAL, the writer gate, BEGIN IMMEDIATE, durability.

Each connection runs in WAL mode with foreign keys on, a busy timeout and
`synchronous=FULL` (an acknowledged commit survives a power cut; the
SQLITE_SYNCHRONOUS setting trades that for speed). A transaction that may
write starts with `BEGIN IMMEDIATE`, after waiting for its turn at the writer
gate (threads of a process on a lock, processes on a flock of
`<database>-writers`); a read-only one starts with `BEGIN DEFERRED`, and any
write inside it is refused (`ReadPhaseWrite`).
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
import time
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.exc import OperationalError

from quizsvc.db.transactions import NO_FLUSH_OPTION, READ_ONLY_OPTION, ReadPhaseWrite

BUSY_TIMEOUT_SECONDS = 15
SQLITE_SYNCHRONOUS_LEVELS = ("OFF", "NORMAL", "FULL", "EXTRA")


def create_sqlite_engine(
    url: str,
    database: str | None,
    *,
    synchronous: str = "FULL",
    busy_timeout: float | None = None,
    **options: Any,
) -> Engine:
    """Create a SQLite engine with WAL, foreign keys, the writer gate, savepoints.

    A writer waits at most `busy_timeout` seconds for its turn
    (BUSY_TIMEOUT_SECONDS when None), then fails with "database is locked".
    """
    synchronous = check_sqlite_synchronous(synchronous)
    seconds = float(BUSY_TIMEOUT_SECONDS if busy_timeout is None else busy_timeout)
    connect_args = options.setdefault("connect_args", {})
    connect_args.setdefault("timeout", seconds)
    if database and database != ":memory:":
        connect_args.setdefault("factory", _gated_connection_class(database, seconds))
    engine = create_engine(url, **options)
    event.listen(
        engine,
        "connect",
        lambda dbapi_connection, record: _sqlite_on_connect(
            dbapi_connection, record, synchronous, seconds
        ),
    )
    event.listen(
        engine,
        "begin",
        lambda connection: _sqlite_begin(connection, synchronous),
    )
    event.listen(engine, "before_cursor_execute", _refuse_writes_while_reading)
    return engine


# One lock per database file and process: the threads of a worker queue on it
# (a release wakes the next at once) before one of them takes the file lock.
_WRITER_LOCKS: dict[str, threading.Lock] = {}
_WRITER_LOCKS_GUARD = threading.Lock()


def _gated_connection_class(
    database: str, busy_timeout: float
) -> type[sqlite3.Connection]:
    """Make a sqlite3 connection class whose writers queue for their turn, not spin."""
    gate_path = f"{database}-writers"
    with _WRITER_LOCKS_GUARD:
        in_process = _WRITER_LOCKS.setdefault(gate_path, threading.Lock())

    class GatedConnection(sqlite3.Connection):
        # A writer that finds SQLite's lock taken sleeps and retries (1, 2, 5
        # ... 100 ms), so under load the lock sits free while writers sleep.
        # Here writers wait for their turn first: threads of one process on a
        # lock that wakes the next one at once, processes on an exclusive
        # flock of a file beside the database (the kernel drops it when a
        # process dies). Both waits give up after the busy timeout with
        # SQLite's own "database is locked", as SQLite would.
        _gate_fd: int | None = None
        _gate_held = False

        def enter_writer_gate(self) -> None:
            if not in_process.acquire(timeout=busy_timeout):
                raise sqlite3.OperationalError("database is locked")
            try:
                if self._gate_fd is None:
                    self._gate_fd = os.open(gate_path, os.O_RDWR | os.O_CREAT, 0o600)
                _flock_within(self._gate_fd, busy_timeout)
            except BaseException:
                in_process.release()
                raise
            self._gate_held = True

        def leave_writer_gate(self) -> None:
            if self._gate_held:
                self._gate_held = False
                try:
                    fcntl.flock(self._gate_fd, fcntl.LOCK_UN)
                finally:
                    in_process.release()

        def commit(self) -> None:
            try:
                super().commit()
            finally:
                self.leave_writer_gate()

        def rollback(self) -> None:
            try:
                super().rollback()
            finally:
                self.leave_writer_gate()

        def close(self) -> None:
            try:
                super().close()
            finally:
                self.leave_writer_gate()
                if self._gate_fd is not None:
                    os.close(self._gate_fd)
                    self._gate_fd = None

    return GatedConnection


def _flock_within(fd: int, seconds: float) -> None:
    """Take an exclusive flock, or raise "database is locked" after `seconds`."""
    deadline = time.monotonic() + seconds
    pause = 0.0002
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            # Only one thread per process gets here, so polling is cheap; the
            # pause stays short because the holder's turn is usually brief.
            if time.monotonic() >= deadline:
                raise sqlite3.OperationalError("database is locked") from None
            time.sleep(pause)
            pause = min(pause * 2, 0.0005)


def check_sqlite_synchronous(value: str) -> str:
    """Return a valid `PRAGMA synchronous` level, or refuse with the choices."""
    level = str(value).strip().upper()
    if level not in SQLITE_SYNCHRONOUS_LEVELS:
        raise ValueError(
            "SQLITE_SYNCHRONOUS (QUIZSVC_SQLITE_SYNCHRONOUS) must be one of "
            f"{', '.join(SQLITE_SYNCHRONOUS_LEVELS)}, not {value!r}"
        )
    return level


def _sqlite_on_connect(
    dbapi_connection: Any, record: Any, synchronous: str, busy_timeout: float
) -> None:
    # Hand transaction control to SQLAlchemy (see _sqlite_begin): the driver's
    # own implicit BEGIN comes too late and breaks SAVEPOINT.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    # WAL lets readers carry on while one writer commits; foreign keys are off
    # by default in SQLite; the busy timeout makes a second writer wait, not fail.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={round(busy_timeout * 1000)}")
    # FULL: a commit is on disk (WAL synced) before the answer is acknowledged,
    # so a power cut cannot take it back; NORMAL may lose the last commits.
    cursor.execute(f"PRAGMA synchronous={synchronous}")
    cursor.close()
    record.info["synchronous"] = synchronous


def _sqlite_begin(connection: Connection, synchronous: str) -> None:
    options = connection.get_execution_options()
    if options.get(READ_ONLY_OPTION):
        # A read (an export, a request's read phase) takes no write lock: in
        # WAL mode it reads a snapshot while learners keep answering.
        connection.exec_driver_sql("BEGIN DEFERRED")
        return
    wanted = synchronous
    if options.get(NO_FLUSH_OPTION):
        wanted = min(synchronous, "NORMAL", key=SQLITE_SYNCHRONOUS_LEVELS.index)
    # SQLite refuses to change the level inside a transaction, so it is set
    # here, just before BEGIN, and only when this transaction needs another
    # level than the connection's last one.
    if connection.info.get("synchronous") != wanted:
        connection.exec_driver_sql(f"PRAGMA synchronous={wanted}")
        connection.info["synchronous"] = wanted
    dbapi_connection = connection.connection.dbapi_connection
    enter_gate = getattr(dbapi_connection, "enter_writer_gate", None)
    if enter_gate is not None:
        try:
            enter_gate()
        except sqlite3.OperationalError as exc:
            # Raised as SQLAlchemy raises what the database says, so callers
            # handle a gate that timed out like SQLite's "database is locked".
            raise OperationalError("BEGIN IMMEDIATE", None, exc) from None
    try:
        connection.exec_driver_sql("BEGIN IMMEDIATE")
    except BaseException:
        if enter_gate is not None:
            dbapi_connection.leave_writer_gate()
        raise


_READING_STATEMENTS = ("SELECT", "WITH", "PRAGMA", "BEGIN", "EXPLAIN")


def _refuse_writes_while_reading(connection, cursor, statement, *_args) -> None:
    # A write in a deferred snapshot would have to upgrade it to a write lock,
    # which SQLite refuses ("database is locked") whenever another writer
    # committed since the snapshot began: a rare failure under load. Made
    # certain here, so a test finds the view that forgot `transaction()`.
    if connection.get_execution_options().get(READ_ONLY_OPTION) and not (
        statement.lstrip().upper().startswith(_READING_STATEMENTS)
    ):
        raise ReadPhaseWrite(
            "a write in a read-only transaction (the request's read phase or "
            f"an export's snapshot): {statement.split(None, 3)[:3]}; "
            "do it inside transaction()"
        )
