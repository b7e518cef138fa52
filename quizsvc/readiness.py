"""Readiness: can this server do its job now? Each dependency checked, in bounded time.

`/readyz` asks every dependency at once, each check in a thread of its own,
and waits for them all together at most READYZ_TIMEOUT seconds: a check that
has not answered by then is reported as timing out, and its thread is left to
finish by itself. A dependency whose previous check is still stuck is not
asked again (reported as timing out at once), so a hung database costs one
thread per worker, not one per probe.

- database: it answers and can take a write. SQLite: a `SELECT`, the write
  lock taken and given back at once (`BEGIN IMMEDIATE`, `ROLLBACK`: nothing is
  written) within the check's time, and at least READYZ_MIN_FREE_MB free on
  the database's disk. PostgreSQL: a `SELECT`, and the server is neither a
  standby (`pg_is_in_recovery()`) nor read-only
  (`default_transaction_read_only`).
- rate_limits: the counters' storage answers. When it does not and the
  in-memory fallback is on, sign-in keeps working with counters per worker:
  reported as a warning ("fallback") and the server stays ready.
"""

from __future__ import annotations

import shutil
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flask import Flask
from sqlalchemy import text

from quizsvc import db
from quizsvc.ratelimits import describe_storage

OK, WARNING, ERROR, TIMEOUT = "ok", "fallback", "error", "timeout"
_FALLBACK = "each worker counts sign-ins in its own memory until it does"


@dataclass
class Check:
    """One dependency's answer: a status, and what an operator should know."""

    status: str
    details: dict[str, Any] = field(default_factory=dict)

    def as_json(self, seconds: float) -> dict[str, Any]:
        return {
            "status": self.status,
            **self.details,
            "duration_ms": round(seconds * 1000, 1),
        }


@dataclass
class Readiness:
    """Every dependency's check, and whether the server can serve."""

    checks: dict[str, dict[str, Any]]

    @property
    def ready(self) -> bool:
        return all(c["status"] in (OK, WARNING) for c in self.checks.values())

    @property
    def status(self) -> str:
        if not self.ready:
            return "not ready"
        degraded = any(c["status"] != OK for c in self.checks.values())
        return "degraded" if degraded else "ready"


class _Probe:
    """A check run in a thread of its own; at most one of each kind at a time."""

    def __init__(self, name: str):
        self.name = name
        self.lock = threading.Lock()
        self.running: threading.Thread | None = None
        self.started_at = 0.0

    def start(self, check: Callable[[], Check]) -> Callable[[float], dict]:
        """Start the check; return a function that waits for it until a deadline."""
        result: dict[str, Any] = {}
        started = time.monotonic()
        with self.lock:
            if self.running is not None and self.running.is_alive():
                stuck = Check(
                    TIMEOUT,
                    {
                        "message": "the previous check has not answered in "
                        f"{started - self.started_at:.1f} s"
                    },
                )
                return lambda _deadline: stuck.as_json(0.0)

            def run() -> None:
                try:
                    result["check"] = check()
                except Exception as exc:  # any failure is the answer, not a crash
                    result["check"] = Check(ERROR, {"message": _describe(exc)})
                result["seconds"] = time.monotonic() - started

            # Daemon: a check stuck on a hung server must not keep a stopping
            # worker alive.
            thread = threading.Thread(
                target=run, name=f"readyz-{self.name}", daemon=True
            )
            self.running, self.started_at = thread, started
            thread.start()

        def wait(deadline: float) -> dict:
            thread.join(max(0.0, deadline - time.monotonic()))
            if "check" in result:
                return result["check"].as_json(result["seconds"])
            return Check(TIMEOUT, {"message": "no answer in time"}).as_json(
                time.monotonic() - started
            )

        return wait


_PROBES: dict[str, _Probe] = {}
_PROBES_GUARD = threading.Lock()


def _probe(app: Flask, name: str) -> _Probe:
    with _PROBES_GUARD:
        return _PROBES.setdefault(f"{id(app)}:{name}", _Probe(name))


def check_readiness(app: Flask) -> Readiness:
    """Check every dependency at once; answer within READYZ_TIMEOUT seconds."""
    deadline = time.monotonic() + float(app.config["READYZ_TIMEOUT"])
    waits = {
        "database": _probe(app, "database").start(lambda: check_database(app)),
        "rate_limits": _probe(app, "rate_limits").start(lambda: check_rate_limits(app)),
    }
    checks = {name: wait(deadline) for name, wait in waits.items()}
    limits = checks["rate_limits"]
    if limits["status"] == TIMEOUT and app.config.get(
        "RATELIMIT_IN_MEMORY_FALLBACK_ENABLED"
    ):
        # A hung storage is a failing one: the workers count in memory.
        limits.update(status=WARNING, message=f"{limits['message']}: {_FALLBACK}")
    return Readiness(checks)


def check_database(app: Flask) -> Check:
    """Tell whether the database answers and can take a write now."""
    engine = db.get_engine(app)
    if db.is_sqlite(engine):
        return _check_sqlite(app, engine.url.database)
    with engine.connect() as connection:
        in_recovery, read_only = connection.execute(
            text(
                "SELECT pg_is_in_recovery(), "
                "current_setting('default_transaction_read_only')"
            )
        ).one()
        connection.rollback()
    details = {"backend": "postgresql"}
    if in_recovery:
        return Check(ERROR, {**details, "message": "the server is a standby"})
    if read_only == "on":
        return Check(
            ERROR, {**details, "message": "default_transaction_read_only is on"}
        )
    return Check(OK, details)


def _check_sqlite(app: Flask, database: str | None) -> Check:
    details: dict[str, Any] = {"backend": "sqlite"}
    if not database or database == ":memory:":
        return Check(OK, details)
    path = Path(database)
    if not path.exists():
        return Check(ERROR, {**details, "message": f"{path} does not exist"})
    free_mb = shutil.disk_usage(path.parent).free / 2**20
    details["free_disk_mb"] = round(free_mb, 1)
    # A connection of its own with a short busy timeout, not the app's pool:
    # the app's writers queue at the writer gate for SQLITE_BUSY_TIMEOUT. Half the
    # probe's time, so a lock held too long is reported as such, in time.
    timeout = float(app.config["READYZ_TIMEOUT"]) / 2
    connection = sqlite3.connect(path, timeout=timeout, isolation_level=None)
    try:
        connection.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        commits_seen = _data_version(connection)
        try:
            connection.execute("BEGIN IMMEDIATE")
            connection.execute("ROLLBACK")
        except sqlite3.OperationalError:
            # Under load the app's writers hand the lock straight to one
            # another and this check rarely gets it; that is a busy database,
            # not a stuck one, as long as their commits keep coming.
            if _data_version(connection) == commits_seen:
                raise
            details["write_lock"] = "busy: other writers committed meanwhile"
    except sqlite3.Error as exc:
        return Check(ERROR, {**details, "message": _describe(exc)})
    finally:
        connection.close()
    minimum = float(app.config["READYZ_MIN_FREE_MB"])
    if free_mb < minimum:
        return Check(
            ERROR,
            {
                **details,
                "message": f"{free_mb:.1f} MB free on the database's disk, "
                f"below READYZ_MIN_FREE_MB ({minimum:g})",
            },
        )
    return Check(OK, details)


def _data_version(connection: sqlite3.Connection) -> int:
    # Changes whenever another connection commits to the database.
    return connection.execute("PRAGMA data_version").fetchone()[0]


def check_rate_limits(app: Flask) -> Check:
    """Tell whether the rate-limit counters' storage answers."""
    from quizsvc.extensions import limiter

    uri = app.config["RATELIMIT_STORAGE_URI"]
    details: dict[str, Any] = {"storage": describe_storage(uri)}
    if limiter.storage.check():
        return Check(OK, details)
    if app.config.get("RATELIMIT_IN_MEMORY_FALLBACK_ENABLED"):
        return Check(
            WARNING, {**details, "message": f"the storage does not answer: {_FALLBACK}"}
        )
    return Check(
        ERROR,
        {
            **details,
            "message": "the storage does not answer and the in-memory fallback "
            "is off: sign-in and registration are refused",
        },
    )


def _describe(exc: BaseException) -> str:
    # The error's class and first line: enough to act on, no traceback.
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__
