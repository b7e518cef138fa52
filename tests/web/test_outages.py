"""A dependency that cannot answer: 503, Retry-After, localized, one log line.

The served tests (tests/test_serve_faults.py) break real servers; these break
the app's database in process (every new connection refused, as when its
file cannot be opened or its disk is full) and check the contract itself:
the page and the JSON, the error page drawn for a signed-in learner with no
database behind it, the log line instead of a traceback, pages that need no
database still served, a bug still a 500, and recovery once it answers.
"""

from __future__ import annotations

import json
import logging
import re
import sqlite3
import time
from contextlib import contextmanager

import pytest
from sqlalchemy import event, text
from sqlalchemy import exc as sa

from quizsvc import db
from quizsvc.http.outages import DATABASE, RATE_LIMITS, outage_of
from tests.factories import sync_real_bank
from tests.fixtures.faults import silent_listener

CJK = re.compile("[\u4e00-\u9fff]")


@pytest.fixture
def app(db_app):
    sync_real_bank(db_app)
    return db_app


@contextmanager
def database_down(app, monkeypatch, message: str = "unable to open database file"):
    """Every new connection of the app's database fails, saying `message`.

    SQLite's as its driver raises it; PostgreSQL's as a psycopg
    OperationalError (a bug in a statement is a ProgrammingError there, so
    `bug=True` raises that instead).
    """
    engine = db.get_engine(app)
    engine.dispose()
    if db.is_sqlite(engine):

        def refuse(*_args):
            raise sqlite3.OperationalError(message)

        event.listen(engine, "do_connect", refuse)
        try:
            yield
        finally:
            event.remove(engine, "do_connect", refuse)
        return
    import psycopg

    from quizsvc.db.postgresql import BoundedConnection

    error = (
        psycopg.ProgrammingError
        if message.startswith("no such")
        else psycopg.OperationalError
    )

    def refuse_connect(cls, *_args, **_kwargs):
        raise error(message)

    with monkeypatch.context() as patch:
        patch.setattr(BoundedConnection, "connect", classmethod(refuse_connect))
        yield


def request_lines(caplog) -> list[dict]:
    return [
        json.loads(record.getMessage())
        for record in caplog.records
        if record.name == "quizsvc.requests"
    ]


def test_a_signed_in_page_during_an_outage_is_the_apps_own_503_page(
    app, learner_client, caplog, monkeypatch
):
    """Does a learner get the localized page with its headers and id, no traceback?"""
    with (
        database_down(app, monkeypatch, "database or disk is full"),
        caplog.at_level(logging.INFO),
    ):
        page = learner_client.get("/drill")
    assert page.status_code == 503
    html = page.get_data(as_text=True)
    assert "<html" in html and CJK.search(html)
    assert "数据库暂时没有响应" in html
    assert page.headers["X-Request-ID"] in html
    assert "Content-Security-Policy" in page.headers
    assert page.headers["Cache-Control"] == "no-store"
    assert int(page.headers["Retry-After"]) == app.config["UNAVAILABLE_RETRY_AFTER"]
    # The browser still holds its session: its own navigation, sign-out too.
    assert 'action="/logout"' in html
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert "Traceback" not in caplog.text
    (line,) = [line for line in request_lines(caplog) if line["route"] == "/drill"]
    assert line["status"] == 503
    assert line["dependency"] == "database"
    assert line["error"].startswith("OperationalError: database or disk is full")
    assert line["request_id"] == page.headers["X-Request-ID"]


def test_the_api_answers_json_in_the_clients_language(app, learner_client, monkeypatch):
    """Is the API's 503 JSON with a code, a message in English when asked, an id?"""
    with database_down(app, monkeypatch):
        response = learner_client.get(
            "/api/v1/drill/next", headers={"Accept-Language": "en"}
        )
    assert response.status_code == 503
    assert int(response.headers["Retry-After"]) > 0
    body = response.json
    assert body["error"] == "unavailable"
    assert body["message"].startswith("The database is not answering right now")
    assert body["request_id"] == response.headers["X-Request-ID"]


def test_pages_that_need_no_database_are_served_during_an_outage(
    app, client, monkeypatch
):
    """Do the home page, the lab and a generated problem still answer?"""
    with database_down(app, monkeypatch):
        assert client.get("/").status_code == 200
        assert client.get("/lab").status_code == 200
        problem = client.post("/api/v1/problems", json={"kind": "scores"})
        assert problem.status_code == 201, problem.json
        assert client.get("/healthz").status_code == 200


def test_the_service_recovers_by_itself(app, learner_client, monkeypatch):
    """Once the database answers again, does the same request succeed?"""
    with database_down(app, monkeypatch):
        assert learner_client.get("/api/v1/drill/next").status_code == 503
    assert learner_client.get("/api/v1/drill/next").status_code == 200


def test_a_bug_in_a_statement_stays_a_500_with_its_traceback(
    app, learner_client, caplog, monkeypatch
):
    """Is SQLite refusing a statement (a bug) told apart from an outage?"""
    with (
        database_down(app, monkeypatch, "no such table: users"),
        caplog.at_level(logging.INFO),
    ):
        response = learner_client.get("/api/v1/drill/next")
    assert response.status_code == 500
    assert "Retry-After" not in response.headers
    assert [r for r in caplog.records if r.levelno >= logging.ERROR]


def _sa_error(orig: BaseException) -> sa.OperationalError:
    return sa.OperationalError("SELECT 1", None, orig)


@pytest.mark.parametrize(
    ("error", "dependency"),
    [
        (_sa_error(sqlite3.OperationalError("database is locked")), DATABASE),
        (_sa_error(sqlite3.OperationalError("database or disk is full")), DATABASE),
        (_sa_error(sqlite3.OperationalError("disk I/O error")), DATABASE),
        (_sa_error(sqlite3.OperationalError("no such table: x")), None),
        (sa.TimeoutError("QueuePool limit reached"), DATABASE),
        (
            sa.PendingRollbackError(
                "Can't reconnect until invalid transaction is rolled back."
            ),
            DATABASE,
        ),
        (
            sa.PendingRollbackError("This Session's transaction has been rolled back"),
            None,
        ),
        (sqlite3.IntegrityError("UNIQUE constraint failed"), None),
        (ValueError("a bug"), None),
    ],
)
def test_outages_are_told_from_bugs(error, dependency):
    """Does each error name the dependency that failed, or none for a bug?"""
    outage = outage_of(error)
    assert (outage.dependency if outage else None) == dependency


def test_postgresql_and_redis_errors_are_told_from_bugs():
    """Are psycopg's operational errors outages and its data errors bugs?"""
    import psycopg
    import redis

    assert outage_of(psycopg.OperationalError("server closed")).dependency == DATABASE
    assert outage_of(psycopg.errors.QueryCanceled("statement timeout")) is not None
    assert outage_of(psycopg.errors.UniqueViolation("duplicate key")) is None
    assert outage_of(psycopg.errors.DivisionByZero("division by zero")) is None
    assert outage_of(redis.exceptions.TimeoutError()).dependency == RATE_LIMITS
    # Wrapped the way Flask-Limiter or SQLAlchemy raise them.
    try:
        try:
            raise redis.exceptions.ConnectionError("refused")
        except redis.exceptions.ConnectionError as inner:
            raise RuntimeError("storage failed") from inner
    except RuntimeError as outer:
        assert outage_of(outer).dependency == RATE_LIMITS


def test_a_postgresql_that_never_answers_fails_a_connect_within_the_bound():
    """Does connecting to a server that accepts and never answers give up in time?"""
    from quizsvc.db.postgresql import Bounds

    with silent_listener() as port:
        engine = db.make_engine(
            f"postgresql+psycopg://postgres@127.0.0.1:{port}/quizsvc",
            bounds=Bounds(connect=2),
        )
        started = time.monotonic()
        with (
            pytest.raises(sa.OperationalError) as raised,
            engine.connect() as connection,
        ):
            connection.execute(text("SELECT 1"))
        took = time.monotonic() - started
        engine.dispose()
    assert took < 5, took
    assert outage_of(raised.value).dependency == DATABASE


@pytest.mark.postgres
def test_a_statement_the_server_does_not_answer_in_time_fails_within_the_bound():
    """Does the client give up on a silent server, and the server cancel a slow one?"""
    from sqlalchemy.pool import NullPool

    from quizsvc.db.postgresql import Bounds
    from tests.fixtures.databases import postgres_base_url

    engine = db.make_engine(
        postgres_base_url(), bounds=Bounds(statement=1), poolclass=NullPool
    )
    try:
        with engine.connect() as connection:
            # The server's own timeout: a slow statement is cancelled.
            started = time.monotonic()
            with pytest.raises(sa.OperationalError) as cancelled:
                connection.execute(text("SELECT pg_sleep(3)"))
            assert time.monotonic() - started < 2.5
            assert outage_of(cancelled.value).dependency == DATABASE
        with engine.connect() as connection:
            # With the server's timeout off, the client's limit on its
            # silence still ends the wait, and the connection is dropped.
            connection.exec_driver_sql("SET statement_timeout = 0")
            started = time.monotonic()
            with pytest.raises(sa.OperationalError) as silent:
                connection.execute(text("SELECT pg_sleep(4)"))
            assert time.monotonic() - started < 3
            assert "did not answer within 1.5 s" in str(silent.value)
            assert silent.value.connection_invalidated
    finally:
        engine.dispose()
