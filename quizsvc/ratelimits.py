"""Rate-limit counters every worker of one machine shares: a small SQLite file.

Flask-Limiter's `memory://` storage is per process, so with four gunicorn
workers a limit of 10 per minute let 40 through. This `limits` storage keeps
fixed-window counters in a SQLite file (by default `ratelimits.sqlite3` in the
instance folder), each increment one `BEGIN IMMEDIATE` transaction, so all
workers count together. Several machines share counters through Redis instead
(`QUIZSVC_RATELIMIT_STORAGE_URI=redis://...`).

Importing this module registers the `sqlite` scheme with `limits`:
`sqlite:////abs/path/ratelimits.sqlite3`.

When the storage fails (Redis stopped or hung, the SQLite file on a full disk),
Flask-Limiter's in-memory fallback counts in each worker's memory, with a
warning in the log, until the storage answers again: signing in keeps working
with limits per worker instead of per deployment. Its waits are bounded by
RATELIMIT_STORAGE_TIMEOUT, so a hung Redis delays a login by that much once
per worker, not for as long as it hangs. RATELIMIT_IN_MEMORY_FALLBACK_ENABLED
= False fails closed instead.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import sys
import threading
import time
from typing import Any
from urllib.parse import urlparse

from limits.storage import Storage

# Flask-Limiter reports its storage falling over and coming back here.
FLASK_LIMITER_LOGGER = "flask-limiter"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS counters (
    key TEXT PRIMARY KEY,
    count INTEGER NOT NULL,
    expires_at REAL NOT NULL
)
"""


def configure(app: Any) -> None:
    """Bound the storage's waits and log its outages (the app's settings are final)."""
    bound_storage_waits(app.config)
    # Flask-Limiter switches to its fallback on the first failure only: a
    # request that failed at the same moment in another thread raised, a
    # 500. Swallowing those lets it through uncounted instead. Only with the
    # fallback on: failing closed must stay closed.
    app.config.setdefault(
        "RATELIMIT_SWALLOW_ERRORS",
        bool(app.config["RATELIMIT_IN_MEMORY_FALLBACK_ENABLED"]),
    )
    logger = logging.getLogger(FLASK_LIMITER_LOGGER)
    logger.setLevel(logging.INFO)
    if not app.testing and not any(
        isinstance(h, _StorageEventHandler) for h in logger.handlers
    ):
        # Flask-Limiter only adds a NullHandler: its "falling back to
        # in-memory storage" and "recovered" would be lost.
        logger.addHandler(
            _StorageEventHandler(describe_storage(app.config["RATELIMIT_STORAGE_URI"]))
        )


class _StorageEventHandler(logging.StreamHandler):
    """Print Flask-Limiter's storage events as JSON lines beside the request log."""

    def __init__(self, storage: str):
        super().__init__(sys.stderr)
        self.storage = storage

    def format(self, record: logging.LogRecord) -> str:
        return json.dumps(
            {
                "event": "rate_limit_storage",
                "level": record.levelname.lower(),
                "storage": self.storage,
                "message": record.getMessage(),
            }
        )


def bound_storage_waits(config: dict[str, Any]) -> None:
    """Bound the storage's connect, read and lock waits by RATELIMIT_STORAGE_TIMEOUT.

    Options set in RATELIMIT_STORAGE_OPTIONS win.
    """
    seconds = float(config["RATELIMIT_STORAGE_TIMEOUT"])
    scheme = urlparse(config["RATELIMIT_STORAGE_URI"]).scheme
    options = dict(config.get("RATELIMIT_STORAGE_OPTIONS") or {})
    if scheme.startswith("redis"):
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        # Without them redis-py waits for a hung server for as long as it hangs.
        options.setdefault("socket_connect_timeout", seconds)
        options.setdefault("socket_timeout", seconds)
        # redis-py tries 3 more times by default, with growing pauses: a hung
        # Redis would hold a sign-in 4 timeouts and more instead of one.
        options.setdefault("retry", Retry(NoBackoff(), 0))
    elif scheme == "sqlite":
        options.setdefault("timeout", seconds)
    config["RATELIMIT_STORAGE_OPTIONS"] = options


def describe_storage(uri: str) -> str:
    """Name a storage URI without its password: `redis://host:6379/0`."""
    parsed = urlparse(uri)
    if parsed.scheme in ("memory", "sqlite"):
        return f"{parsed.scheme}://{parsed.path}" if parsed.path else uri
    host = parsed.hostname or ""
    port = f":{parsed.port}" if parsed.port else ""
    return f"{parsed.scheme}://{host}{port}{parsed.path}"


class SQLiteStorage(Storage):
    """Fixed-window rate-limit counters in a SQLite file, safe across processes."""

    STORAGE_SCHEME = ["sqlite"]

    def __init__(self, uri: str, wrap_exceptions: bool = False, **options: Any):
        path = urlparse(uri).path
        # sqlite:////abs/file has the path "//abs/file"; keep one leading slash.
        self.path = "/" + path.lstrip("/") if path.startswith("//") else path[1:]
        self.timeout = float(options.get("timeout", 5))
        self._local = threading.local()
        with self._transaction() as connection:
            connection.execute(_SCHEMA)
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)

    @property
    def base_exceptions(self) -> type[Exception]:
        return sqlite3.Error

    def _connection(self) -> sqlite3.Connection:
        # One connection per thread (gthread workers serve requests in threads)
        # and per process: a connection must not cross gunicorn's fork.
        if getattr(self._local, "pid", None) != os.getpid():
            connection = sqlite3.connect(
                self.path, timeout=self.timeout, isolation_level=None
            )
            connection.execute("PRAGMA journal_mode=WAL")
            self._local.connection, self._local.pid = connection, os.getpid()
        return self._local.connection

    def _transaction(self) -> _Transaction:
        return _Transaction(self._connection())

    def incr(self, key: str, expiry: float, amount: int = 1) -> int:
        """Add `amount` to the key's counter, starting a new window if it expired."""
        now = time.time()
        with self._transaction() as connection:
            row = connection.execute(
                "SELECT count, expires_at FROM counters WHERE key = ?", (key,)
            ).fetchone()
            if row is None or row[1] <= now:
                # A new window: also drop every other finished one, so the
                # file holds only the counters of the last window or so.
                connection.execute("DELETE FROM counters WHERE expires_at <= ?", (now,))
                count = amount
                connection.execute(
                    "INSERT OR REPLACE INTO counters VALUES (?, ?, ?)",
                    (key, count, now + expiry),
                )
            else:
                count = row[0] + amount
                connection.execute(
                    "UPDATE counters SET count = ? WHERE key = ?", (count, key)
                )
        return count

    def get(self, key: str) -> int:
        """The key's count in its current window (0 when none)."""
        row = (
            self._connection()
            .execute(
                "SELECT count FROM counters WHERE key = ? AND expires_at > ?",
                (key, time.time()),
            )
            .fetchone()
        )
        return row[0] if row else 0

    def get_expiry(self, key: str) -> float:
        """When the key's window ends (now when it has none)."""
        row = (
            self._connection()
            .execute("SELECT expires_at FROM counters WHERE key = ?", (key,))
            .fetchone()
        )
        return row[0] if row else time.time()

    def check(self) -> bool:
        """Tell whether the file can be read."""
        try:
            self._connection().execute("SELECT 1 FROM counters LIMIT 1")
        except sqlite3.Error:
            return False
        return True

    def reset(self) -> int | None:
        """Forget every counter; return how many there were."""
        with self._transaction() as connection:
            return connection.execute("DELETE FROM counters").rowcount

    def clear(self, key: str) -> None:
        """Forget one key's counter."""
        with self._transaction() as connection:
            connection.execute("DELETE FROM counters WHERE key = ?", (key,))


class _Transaction:
    """`BEGIN IMMEDIATE` … `COMMIT`: the write lock is taken before reading."""

    def __init__(self, connection: sqlite3.Connection):
        self.connection = connection

    def __enter__(self) -> sqlite3.Connection:
        self.connection.execute("BEGIN IMMEDIATE")
        return self.connection

    def __exit__(self, exc_type: Any, *_: Any) -> None:
        self.connection.execute("ROLLBACK" if exc_type else "COMMIT")
