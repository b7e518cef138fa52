"""The database: engines, the per-request session, and schema migrations.

Session lifecycle (one commit per request or command)
------------------------------------------------------
The session lives outside the code that reads and writes data:

- Views and CLI commands get this request's (or command's) session from
  `get_session()`. It is opened on first use and closed when the app context
  ends; anything not committed by then is rolled back.
- Service functions (`quizsvc.services.*`) take the session as an argument,
  add and `flush()`, and never commit.
- The view or command commits once, at the end, when everything succeeded:
  `with transaction() as session:` around the work commits when the block
  ends and rolls back when it raises. Read-only views need no transaction.

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
follows. Code that writes must do it inside `transaction()`.
Do not open a second session that writes while the first is still open: it
waits for the gate the first one holds, until the busy timeout.

Migrations
----------
The schema is built by the Alembic revisions in the repository's top-level
`migrations/` folder (`migrations_path()` finds it). `upgrade(engine)` brings a
database to the newest revision; `prepare_database(app)` does it before the
server starts; `quizsvc db upgrade|downgrade|current` does it by hand.

The modules: `session` (the request's session, its read phase, the commit),
`transactions` (execution options and per-transaction values; no Flask, so
services use it), `engine` (making engines, long read-only sessions),
`sqlite` (WAL, the writer gate, BEGIN IMMEDIATE), `migrations` (Alembic).
Their public names are importable from `quizsvc.db` itself.
"""

from __future__ import annotations

from quizsvc.db.engine import is_sqlite, make_engine, read_only_session
from quizsvc.db.migrations import (
    MigrationsNotFound,
    alembic_config,
    current_revision,
    downgrade,
    head_revision,
    migrations_path,
    prepare_database,
    run_migrations,
    upgrade,
)
from quizsvc.db.session import (
    EXTENSION_KEY,
    begin_reading,
    commits_without_flush,
    get_engine,
    get_session,
    init_app,
    transaction,
)
from quizsvc.db.sqlite import (
    BUSY_TIMEOUT_SECONDS,
    SQLITE_SYNCHRONOUS_LEVELS,
    check_sqlite_synchronous,
)
from quizsvc.db.transactions import (
    NO_FLUSH_OPTION,
    READ_ONLY_OPTION,
    ReadPhaseWrite,
    phase_cache,
)

__all__ = [
    "BUSY_TIMEOUT_SECONDS",
    "EXTENSION_KEY",
    "NO_FLUSH_OPTION",
    "READ_ONLY_OPTION",
    "SQLITE_SYNCHRONOUS_LEVELS",
    "MigrationsNotFound",
    "ReadPhaseWrite",
    "alembic_config",
    "begin_reading",
    "check_sqlite_synchronous",
    "commits_without_flush",
    "current_revision",
    "downgrade",
    "get_engine",
    "get_session",
    "head_revision",
    "init_app",
    "is_sqlite",
    "make_engine",
    "migrations_path",
    "phase_cache",
    "prepare_database",
    "read_only_session",
    "run_migrations",
    "transaction",
    "upgrade",
]
