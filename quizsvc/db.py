"""Database engine, the per-request session, and schema migrations.

Session lifecycle (one commit per request or command)
------------------------------------------------------
The session lives outside the code that reads and writes data:

- Views and CLI commands get this request's (or command's) session from
  `get_session()`. It is opened on first use and closed when the app context
  ends; anything not committed by then is rolled back.
- Service functions (`quizsvc.services.*`) take the session as an argument,
  add and `flush()`, and never commit.
- The view or command commits once, at the end, when everything succeeded:
  wrap a state-changing view in `@commits` (commits when the view returns,
  rolls back when it raises), or use `with transaction() as session:` around
  the work in a command. Read-only views need neither.

SQLite
------
The embedded default runs in WAL mode with foreign keys on, a busy timeout and
`synchronous=FULL` (an acknowledged commit survives a power cut; the
SQLITE_SYNCHRONOUS setting trades that for speed).
A transaction that may write starts with `BEGIN IMMEDIATE`: it takes SQLite's
single write lock up front, so two requests never both read, then both try to
write and fail with "database is locked"; and SAVEPOINTs
(`session.begin_nested()`) work, which the Python driver's own transaction
handling breaks. Before that BEGIN, a writer waits for its turn at the writer
gate (threads of a process on a lock, processes on a flock of
`<database>-writers`), which wakes the next writer as soon as one commits;
SQLite's own busy handler would sleep and poll instead, leaving the lock idle
under load and some writers starved for most of a second.

A request's reads that come before its writes (signing in, the learner's
settings, the drill's plan for the day) run in its read phase
(`begin_reading()`): a `BEGIN DEFERRED` snapshot that takes neither the gate
nor the lock. `transaction()` ends the read phase before the first write, so a
request holds the lock only for the work that may write, and a request that
only reads never takes it. Objects read in the read phase stay loaded; values
a request caches per transaction (`phase_cache`) carry over to the write that
follows. Code that writes must do it inside `transaction()` or `@commits`.
Do not open a second session that writes while the first is still open: it
waits for the gate the first one holds, until the busy timeout.

Migrations
----------
The schema is built by the Alembic revisions in the repository's top-level
`migrations/` folder (`migrations_path()` finds it). `upgrade(engine)` brings a
database to the newest revision; `prepare_database(app)` does it before the
server starts; `quizsvc db upgrade|downgrade|current` does it by hand.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from flask import Flask, current_app, g, has_request_context, request
from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

EXTENSION_KEY = "quizsvc.db"
READ_ONLY_OPTION = "quizsvc_read_only"
_READ_PHASE = "quizsvc_read_phase"
_LAST_READ_PHASE = "quizsvc_last_read_phase"
BUSY_TIMEOUT_SECONDS = 15
SQLITE_SYNCHRONOUS_LEVELS = ("OFF", "NORMAL", "FULL", "EXTRA")
# The execution option (set on a session by `get_session` for views marked
# `commits_without_flush`) under which a transaction may commit without
# waiting for the disk.
NO_FLUSH_OPTION = "quizsvc_commit_without_flush"
# Any constant works: it only has to be the same for every quizsvc process
# migrating the same PostgreSQL database.
_MIGRATION_LOCK_ID = 0x71756973


class ReadPhaseWrite(RuntimeError):
    """Code tried to write inside a read-only transaction (a programming error)."""


class MigrationsNotFound(RuntimeError):
    """The Alembic migrations folder is not where quizsvc expects it."""


def make_engine(
    url: str, *, sqlite_synchronous: str = "FULL", **options: Any
) -> Engine:
    """Create an engine; SQLite gets WAL, foreign keys, a busy timeout, savepoints."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        synchronous = check_sqlite_synchronous(sqlite_synchronous)
        connect_args = options.setdefault("connect_args", {})
        connect_args.setdefault("timeout", BUSY_TIMEOUT_SECONDS)
        if parsed.database and parsed.database != ":memory:":
            connect_args.setdefault("factory", _gated_connection_class(parsed.database))
        engine = create_engine(url, **options)
        event.listen(
            engine,
            "connect",
            lambda dbapi_connection, record: _sqlite_on_connect(
                dbapi_connection, record, synchronous
            ),
        )
        event.listen(
            engine,
            "begin",
            lambda connection: _sqlite_begin(connection, synchronous),
        )
        event.listen(engine, "before_cursor_execute", _refuse_writes_while_reading)
        return engine
    options.setdefault("pool_pre_ping", True)
    engine = create_engine(url, **options)
    event.listen(engine, "begin", _postgresql_begin)
    return engine


# One lock per database file and process: the threads of a worker queue on it
# (a release wakes the next at once) before one of them takes the file lock.
_WRITER_LOCKS: dict[str, threading.Lock] = {}
_WRITER_LOCKS_GUARD = threading.Lock()


def _gated_connection_class(database: str) -> type[sqlite3.Connection]:
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
            if not in_process.acquire(timeout=BUSY_TIMEOUT_SECONDS):
                raise sqlite3.OperationalError("database is locked")
            try:
                if self._gate_fd is None:
                    self._gate_fd = os.open(gate_path, os.O_RDWR | os.O_CREAT, 0o600)
                _flock_within(self._gate_fd, BUSY_TIMEOUT_SECONDS)
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


def _sqlite_on_connect(dbapi_connection: Any, record: Any, synchronous: str) -> None:
    # Hand transaction control to SQLAlchemy (see _sqlite_begin): the driver's
    # own implicit BEGIN comes too late and breaks SAVEPOINT.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    # WAL lets readers carry on while one writer commits; foreign keys are off
    # by default in SQLite; the busy timeout makes a second writer wait, not fail.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_SECONDS * 1000}")
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
            "do it inside transaction() or @commits"
        )


def _postgresql_begin(connection: Connection) -> None:
    if connection.get_execution_options().get(NO_FLUSH_OPTION):
        # This transaction only: its commit returns before the WAL is flushed.
        connection.exec_driver_sql("SET LOCAL synchronous_commit TO off")


def is_sqlite(engine_or_connection: Engine | Connection) -> bool:
    """Tell whether the database behind an engine or connection is SQLite."""
    return engine_or_connection.dialect.name == "sqlite"


def init_app(app: Flask) -> None:
    """Create the app's engine and session factory and close sessions per request."""
    engine = make_engine(
        app.config["DATABASE_URL"],
        sqlite_synchronous=app.config["SQLITE_SYNCHRONOUS"],
    )
    app.extensions[EXTENSION_KEY] = sessionmaker(bind=engine, expire_on_commit=False)
    app.teardown_appcontext(_close_session)


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
    _end_read_phase(session)
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
        session.connection(execution_options={READ_ONLY_OPTION: True})
        session.info[_READ_PHASE] = session.get_transaction()
    return session


def _end_read_phase(session: Session) -> None:
    phase = session.info.pop(_READ_PHASE, None)
    if phase is not None and phase is session.get_transaction():
        # Nothing was written: the commit only lets go of the snapshot.
        session.commit()
        session.info[_LAST_READ_PHASE] = phase


def phase_cache(session: Session, name: str) -> dict[Any, Any]:
    """A dict for values read in this transaction (and in the read phase before it)."""
    session.connection()  # begins the transaction if it has not begun yet
    transaction = session.get_transaction()
    cached = session.info.get(name)
    if cached is not None and cached[0] is not transaction:
        if transaction is not None and cached[0] is session.info.get(_LAST_READ_PHASE):
            cached = session.info[name] = (transaction, cached[1])
        else:
            cached = None
    if cached is None:
        cached = session.info[name] = (transaction, {})
    return cached[1]


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


P = ParamSpec("P")
R = TypeVar("R")


def commits(view: Callable[P, R]) -> Callable[P, R]:
    """Decorate a view (or command) so its work is committed once when it returns."""

    @wraps(view)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with transaction():
            return view(*args, **kwargs)

    return wrapper


# --- migrations -----------------------------------------------------------------


def migrations_path() -> Path:
    """Find the Alembic migrations folder (QUIZSVC_MIGRATIONS_PATH overrides)."""
    override = os.environ.get("QUIZSVC_MIGRATIONS_PATH")
    if override:
        path = Path(override)
    else:
        import quizsvc

        # quizsvc is installed editable from the checkout; migrations/ sits
        # beside the package folder.
        path = Path(quizsvc.__file__).resolve().parents[1] / "migrations"
    if not (path / "env.py").is_file():
        raise MigrationsNotFound(
            f"no Alembic migrations at {path} (expected env.py there): run quizsvc "
            "from its source checkout, or set QUIZSVC_MIGRATIONS_PATH to the "
            "migrations folder"
        )
    return path


def alembic_config(connection: Connection | None = None, url: str | None = None):
    """Build the Alembic configuration in code, bound to a connection or URL."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(migrations_path()))
    if url is not None:
        # ConfigParser interpolation would eat "%" in URL-encoded passwords.
        config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    config.attributes["connection"] = connection
    return config


def run_migrations(engine: Engine, action: Callable[[Any], None]) -> None:
    """Run an Alembic action (given the config) in one transaction on the engine."""
    with engine.connect() as connection:
        sqlite = is_sqlite(connection)
        if sqlite:
            # SQLite's batch migrations copy a table and drop the old one; with
            # foreign keys on, that drop would cascade into the rows that point
            # at it. The pragma is a no-op inside a transaction, so it is set on
            # the driver connection before SQLAlchemy begins one.
            connection.connection.driver_connection.execute("PRAGMA foreign_keys=OFF")
        try:
            with connection.begin():
                if not sqlite:
                    # Two servers starting at once must not migrate together.
                    connection.execute(
                        text("SELECT pg_advisory_xact_lock(:id)"),
                        {"id": _MIGRATION_LOCK_ID},
                    )
                action(alembic_config(connection))
                if sqlite:
                    broken = connection.exec_driver_sql(
                        "PRAGMA foreign_key_check"
                    ).fetchall()
                    if broken:
                        raise RuntimeError(
                            f"migration left rows with dangling foreign keys: {broken}"
                        )
        finally:
            if sqlite:
                connection.connection.driver_connection.execute(
                    "PRAGMA foreign_keys=ON"
                )


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Upgrade the database schema to a revision (the newest by default)."""
    from alembic import command

    run_migrations(engine, lambda config: command.upgrade(config, revision))


def downgrade(engine: Engine, revision: str) -> None:
    """Downgrade the database schema to a revision ("base" empties it)."""
    from alembic import command

    run_migrations(engine, lambda config: command.downgrade(config, revision))


def current_revision(engine: Engine) -> str | None:
    """Return the database's schema revision, or None before the first one."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def head_revision() -> str:
    """Return the newest revision the migrations folder knows."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None, "the migrations folder has no revisions"
    return head


def prepare_database(app: Flask) -> None:
    """Bring the app's database schema up to date before the server starts."""
    upgrade(get_engine(app))
