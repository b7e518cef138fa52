"""Liveness and readiness: /healthz asks nothing, /readyz tells the truth in time."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest
from sqlalchemy import event
from sqlalchemy.engine import make_url

from quizsvc import readiness
from quizsvc.db import get_engine
from tests.fixtures.databases import make_test_app


def app_on(database_url: str, **settings):
    return make_test_app(
        {
            "TESTING": True,
            "SECRET_KEY": "test-secret",
            "DATABASE_URL": database_url,
            **settings,
        }
    )


def test_healthz_asks_no_dependency(app):
    """Does /healthz answer without a single database statement?"""
    statements = []
    event.listen(
        get_engine(app), "before_cursor_execute", lambda *a: statements.append(a[2])
    )
    response = app.test_client().get("/healthz")
    assert response.status_code == 200
    assert response.json["status"] == "ok"
    assert statements == []


def test_readyz_reports_each_dependency_ready(db_app):
    response = db_app.test_client().get("/readyz")
    assert response.status_code == 200, response.json
    body = response.json
    assert body["status"] == "ready"
    assert set(body["checks"]) == {"database", "rate_limits"}
    backend = make_url(db_app.config["DATABASE_URL"]).get_backend_name()
    assert body["checks"]["database"]["status"] == "ok"
    assert body["checks"]["database"]["backend"] == backend
    assert body["checks"]["rate_limits"] == {
        "status": "ok",
        "storage": "memory://",
        "duration_ms": body["checks"]["rate_limits"]["duration_ms"],
    }


def test_readyz_is_not_ready_when_sqlite_disk_is_short_of_space(database_url):
    """A disk with less free space than READYZ_MIN_FREE_MB cannot take answers."""
    if not database_url.startswith("sqlite"):
        pytest.skip("free disk space is checked for SQLite")
    app = app_on(database_url, READYZ_MIN_FREE_MB=10**12)
    response = app.test_client().get("/readyz")
    assert response.status_code == 503
    database = response.json["checks"]["database"]
    assert database["status"] == "error"
    assert "READYZ_MIN_FREE_MB" in database["message"]
    assert database["free_disk_mb"] > 0
    assert response.json["status"] == "not ready"


def test_readyz_is_not_ready_while_another_process_holds_the_write_lock(tmp_path):
    """Does /readyz see that no answer could be stored, and say so within its time?"""
    sqlite3.connect(tmp_path / "quizsvc.sqlite3").close()
    app = app_on(f"sqlite:///{tmp_path / 'quizsvc.sqlite3'}")
    client = app.test_client()
    assert client.get("/readyz").status_code == 200
    holder = sqlite3.connect(tmp_path / "quizsvc.sqlite3", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        started = time.monotonic()
        response = client.get("/readyz")
        took = time.monotonic() - started
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert response.status_code == 503
    database = response.json["checks"]["database"]
    assert database["status"] == "error", database
    assert "locked" in database["message"]
    assert took < app.config["READYZ_TIMEOUT"] + 1.0
    assert client.get("/readyz").status_code == 200


def test_readyz_is_ready_while_writers_keep_the_lock_busy_and_committing(tmp_path):
    """A database whose lock passes from writer to writer is busy, not stuck."""
    path = tmp_path / "quizsvc.sqlite3"
    with sqlite3.connect(path) as setup:
        setup.execute("CREATE TABLE answers (n INTEGER)")
    app = app_on(f"sqlite:///{path}", READYZ_TIMEOUT=0.4)
    stop = threading.Event()

    def writer() -> None:
        connection = sqlite3.connect(path, timeout=5, isolation_level=None)
        while not stop.is_set():
            connection.execute("BEGIN IMMEDIATE")
            connection.execute("INSERT INTO answers VALUES (1)")
            time.sleep(0.05)  # holds the lock far longer than it leaves it free
            connection.execute("COMMIT")
        connection.close()

    busy = threading.Thread(target=writer)
    busy.start()
    try:
        time.sleep(0.1)
        response = app.test_client().get("/readyz")
    finally:
        stop.set()
        busy.join()
    assert response.status_code == 200, response.json
    assert response.json["checks"]["database"]["status"] == "ok"


def test_readyz_is_not_ready_on_a_read_only_postgresql(database_url):
    if not database_url.startswith("postgresql"):
        pytest.skip("a read-only server is a PostgreSQL state")
    url = make_url(database_url)
    options = url.query.get("options", "")
    read_only = url.update_query_dict(
        {"options": f"{options} -cdefault_transaction_read_only=on".strip()}
    )
    app = app_on(read_only.render_as_string(hide_password=False))
    try:
        response = app.test_client().get("/readyz")
    finally:
        get_engine(app).dispose()
    assert response.status_code == 503
    database = response.json["checks"]["database"]
    assert database == {
        "status": "error",
        "backend": "postgresql",
        "message": "default_transaction_read_only is on",
        "duration_ms": database["duration_ms"],
    }


def test_readyz_answers_in_time_while_a_check_hangs(app, monkeypatch):
    """A hung database makes /readyz say "timeout" in time, and costs one thread."""
    release = threading.Event()

    def hang(_app):
        release.wait(30)
        return readiness.Check(readiness.OK)

    monkeypatch.setattr(readiness, "check_database", hang)
    app.config["READYZ_TIMEOUT"] = 0.3
    client = app.test_client()
    try:
        threads_before = threading.active_count()
        for _ in range(3):
            started = time.monotonic()
            response = client.get("/readyz")
            assert time.monotonic() - started < 1.0
            assert response.status_code == 503
            assert response.json["checks"]["database"]["status"] == "timeout"
            assert response.json["checks"]["rate_limits"]["status"] == "ok"
        # The first probe's thread is still stuck; the others started none.
        assert threading.active_count() <= threads_before + 1
    finally:
        release.set()
    time.sleep(0.1)
    assert client.get("/readyz").json["checks"]["database"]["status"] == "ok"


@pytest.mark.parametrize("fallback", [True, False])
def test_readyz_reports_rate_limit_storage_down(tmp_path, fallback):
    """Redis down: a warning while each worker counts in memory, 503 if fail-closed."""
    sqlite3.connect(tmp_path / "quizsvc.sqlite3").close()
    app = app_on(
        f"sqlite:///{tmp_path / 'quizsvc.sqlite3'}",
        # A port nothing listens on: connection refused at once.
        RATELIMIT_STORAGE_URI="redis://:secret@127.0.0.1:9/0",
        RATELIMIT_IN_MEMORY_FALLBACK_ENABLED=fallback,
    )
    response = app.test_client().get("/readyz")
    limits = response.json["checks"]["rate_limits"]
    assert limits["storage"] == "redis://127.0.0.1:9/0"  # no password
    if fallback:
        assert response.status_code == 200
        assert response.json["status"] == "degraded"
        assert limits["status"] == "fallback"
        assert "memory" in limits["message"]
    else:
        assert response.status_code == 503
        assert limits["status"] == "error"


@pytest.mark.parametrize("fallback", [True, False])
def test_readyz_counts_a_hung_rate_limit_storage_as_failing(
    app, tmp_path, monkeypatch, fallback
):
    """A storage that does not answer in time is down: a warning, or 503 if closed."""
    sqlite3.connect(tmp_path / "quizsvc.sqlite3").close()
    release = threading.Event()

    def hang(_app):
        release.wait(30)
        return readiness.Check(readiness.OK)

    monkeypatch.setattr(readiness, "check_rate_limits", hang)
    app.config.update(READYZ_TIMEOUT=0.3, RATELIMIT_IN_MEMORY_FALLBACK_ENABLED=fallback)
    try:
        response = app.test_client().get("/readyz")
    finally:
        release.set()
    limits = response.json["checks"]["rate_limits"]
    if fallback:
        assert response.status_code == 200
        assert limits["status"] == "fallback"
        assert "memory" in limits["message"]
    else:
        assert response.status_code == 503
        assert limits["status"] == "timeout"
