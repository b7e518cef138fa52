"""SQLite writers queue on a lock file; a request's reads take no write lock.

quizsvc's SQLite engines wait for a writer's turn on an exclusive flock beside
the database (quizsvc.db): the next writer wakes when the last one commits,
rolls back, closes or dies, instead of sleeping in SQLite's busy loop. Reads
that come before a request's writes run in a deferred transaction, so a
request that only reads never waits for a writer.
"""

from __future__ import annotations

import fcntl
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading

import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from quizsvc import create_app
from quizsvc.db import (
    READ_ONLY_OPTION,
    get_engine,
    make_engine,
    phase_cache,
    prepare_database,
)
from tests.factories import make_learner, sign_in, sync_real_bank

SCHEMA = "CREATE TABLE counter (id INTEGER PRIMARY KEY, value INTEGER NOT NULL)"


@pytest.fixture
def database(tmp_path):
    """A SQLite file with one counter row, and its URL."""
    path = tmp_path / "gate.sqlite3"
    with sqlite3.connect(path) as connection:
        connection.execute(SCHEMA)
        connection.execute("INSERT INTO counter VALUES (1, 0)")
    return path, f"sqlite:///{path}"


def _bump(connection) -> None:
    connection.execute(text("UPDATE counter SET value = value + 1 WHERE id = 1"))


def _value(url: str) -> int:
    engine = make_engine(url)
    with engine.connect() as connection:
        value = connection.execute(text("SELECT value FROM counter")).scalar_one()
    engine.dispose()
    return value


def test_a_second_writer_waits_for_the_first_to_commit(database):
    """Does a writer in another engine (another worker) start only after a commit?"""
    _, url = database
    first, second = make_engine(url), make_engine(url)
    order: list[str] = []
    holding, finished = threading.Event(), threading.Event()

    def write_second():
        holding.wait(timeout=10)
        with second.begin() as connection:
            order.append("second began")
            _bump(connection)
        finished.set()

    thread = threading.Thread(target=write_second)
    thread.start()
    with first.begin() as connection:
        _bump(connection)
        holding.set()
        # The second writer is queued on the gate, not inside SQLite.
        assert not finished.wait(timeout=0.3)
        order.append("first commits")
    thread.join(timeout=10)
    assert order == ["first commits", "second began"]
    assert _value(url) == 2
    first.dispose()
    second.dispose()


def _gate_is_free(path) -> bool:
    with open(f"{path}-writers", "a+") as gate:
        try:
            fcntl.flock(gate, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(gate, fcntl.LOCK_UN)
        return True


def test_a_write_transaction_holds_the_gate_until_it_commits(database):
    """Is the lock file held exactly while a write transaction is open?"""
    path, url = database
    engine = make_engine(url)
    with engine.connect() as connection:
        assert _gate_is_free(path)
        with connection.begin():
            _bump(connection)
            assert not _gate_is_free(path)
        assert _gate_is_free(path)
        # A read-only transaction (an export, a request's read phase) takes none.
        reading = connection.execution_options(**{READ_ONLY_OPTION: True})
        with reading.begin():
            reading.execute(text("SELECT value FROM counter")).scalar_one()
            assert _gate_is_free(path)
    engine.dispose()


@pytest.mark.parametrize("ending", ["rollback", "close"])
def test_a_writer_that_rolls_back_or_closes_lets_the_next_one_in(database, ending):
    """Is the gate given back however a write transaction ends?"""
    _, url = database
    first, second = make_engine(url), make_engine(url)
    connection = first.connect()
    transaction = connection.begin()
    _bump(connection)
    if ending == "rollback":
        transaction.rollback()
    connection.close()
    done = threading.Event()

    def write_second():
        with second.begin() as other:
            _bump(other)
        done.set()

    thread = threading.Thread(target=write_second)
    thread.start()
    assert done.wait(timeout=10), "the second writer is still waiting"
    thread.join()
    assert _value(url) == 1
    first.dispose()
    second.dispose()


def test_a_writer_gives_up_after_the_busy_timeout(database, monkeypatch):
    """Does a writer that never gets its turn fail as SQLite would, not hang?"""
    from quizsvc import db

    _, url = database
    monkeypatch.setattr(db.sqlite, "BUSY_TIMEOUT_SECONDS", 0.2)
    first, second = make_engine(url), make_engine(url)
    with first.begin() as connection:
        _bump(connection)
        # The same thread asking again would otherwise wait for itself forever.
        with (
            pytest.raises(OperationalError, match="database is locked"),
            second.begin() as other,
        ):
            _bump(other)
    assert _value(url) == 1
    first.dispose()
    second.dispose()


def test_a_worker_killed_while_writing_does_not_block_the_others(database, monkeypatch):
    """While a process writes the others wait; once it dies, can they write?"""
    from quizsvc import db

    _, url = database
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import sys, time
                from sqlalchemy import text
                from quizsvc.db import make_engine
                connection = make_engine({url!r}).connect()
                connection.begin()
                connection.execute(text("UPDATE counter SET value = 99"))
                print("holding", flush=True)
                time.sleep(60)
                """
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "holding"
        monkeypatch.setattr(db.sqlite, "BUSY_TIMEOUT_SECONDS", 0.2)
        waiting = make_engine(url)
        with (
            pytest.raises(OperationalError, match="database is locked"),
            waiting.begin() as connection,
        ):
            _bump(connection)
        waiting.dispose()
        monkeypatch.undo()
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=10)
        engine = make_engine(url)
        with engine.begin() as connection:
            _bump(connection)
        engine.dispose()
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    # The dead writer's update never committed.
    assert _value(url) == 1


def test_many_writers_at_once_all_commit(database):
    """Do 8 threads on 2 engines, 25 increments each, lose or fail none?"""
    _, url = database
    engines = [make_engine(url), make_engine(url)]
    errors: list[BaseException] = []

    def writer(engine):
        try:
            for _ in range(25):
                with engine.begin() as connection:
                    _bump(connection)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [
        threading.Thread(target=writer, args=(engines[n % 2],)) for n in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    assert _value(url) == 200
    for engine in engines:
        engine.dispose()


@pytest.fixture
def app(tmp_path):
    app = create_app(
        {
            "TESTING": True,
            "SECRET_KEY": "test-secret",
            "DATABASE_URL": f"sqlite:///{tmp_path / 'quizsvc.sqlite3'}",
        }
    )
    with app.app_context():
        prepare_database(app)
    sync_real_bank(app)
    yield app
    get_engine(app).dispose()


def test_showing_the_open_item_needs_no_write_lock(app, tmp_path):
    """While another writer holds SQLite's lock, is the open item still shown?"""
    make_learner(app, "ana")
    client = app.test_client()
    sign_in(client, "ana")
    opened = client.get("/api/v1/drill/next")
    assert opened.status_code == 200, opened.json
    # Another program (not quizsvc, so not queued on the gate) takes the lock.
    other = sqlite3.connect(tmp_path / "quizsvc.sqlite3", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        again = client.get("/api/v1/drill/next")
        page = client.get("/drill")
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert again.status_code == 200, again.json
    assert again.json["item_id"] == opened.json["item_id"]
    assert page.status_code == 200


def test_values_read_before_the_writes_are_kept_for_them_only(app):
    """Does a read phase's cache carry into the write that follows, and no further?"""
    from quizsvc.db import begin_reading, transaction

    with app.test_request_context():
        reading = begin_reading()
        phase_cache(reading, "numbers")["read"] = 1
        with transaction() as session:
            assert phase_cache(session, "numbers") == {"read": 1}
        with transaction() as session:
            assert phase_cache(session, "numbers") == {}


def test_a_write_in_the_read_phase_is_refused(app):
    """Does a write that skipped transaction() fail at once, not under load?"""
    from quizsvc.db import ReadPhaseWrite, begin_reading

    user_id = make_learner(app, "ana")
    with app.test_request_context():
        session = begin_reading()
        with pytest.raises(ReadPhaseWrite, match="inside transaction"):
            session.execute(
                text("UPDATE users SET display_name = 'x' WHERE id = :id"),
                {"id": user_id},
            )
