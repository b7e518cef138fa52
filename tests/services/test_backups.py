"""Backups, restores and downgrades keep every acknowledged answer (each backend)."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session
from sqlalchemy.pool import NullPool

from quizsvc import create_app, scheduling
from quizsvc.db import current_revision, get_engine, head_revision, make_engine
from quizsvc.models import Review, User
from quizsvc.services.bank_sync import sync_bank
from quizsvc.services.users import create_user
from tests.factories import record_answer
from tests.fixtures.databases import postgres_schema

T0 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
WRITERS = 3


@pytest.fixture(
    params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
)
def backend(request):
    return request.param


@pytest.fixture
def fresh_url(backend, tmp_path):
    """A migrated database of its own (PostgreSQL: a private schema)."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'live.sqlite3'}"
        return
    if shutil.which("pg_dump") is None:
        pytest.skip("pg_dump is not on PATH (install the PostgreSQL client tools)")
    with postgres_schema() as url:
        yield url


@pytest.fixture
def live_app(fresh_url, small_bank):
    """An app on a migrated database holding the small bank and three learners."""
    from quizsvc.db import upgrade

    app = create_app({"TESTING": True, "SECRET_KEY": "x", "DATABASE_URL": fresh_url})
    engine = get_engine(app)
    upgrade(engine)
    with Session(engine) as session:
        sync_bank(session, small_bank, now=T0)
        for number in range(WRITERS):
            create_user(session, f"writer{number}", now=T0)
        session.commit()
    yield app
    engine.dispose()


def cli(app, *args, input=None):
    from quizsvc.cli import main

    return app.test_cli_runner().invoke(main, list(args), input=input)


def review_ids(engine) -> set[int]:
    with engine.connect() as connection:
        return set(connection.scalars(select(Review.id)))


def backup_review_ids(path, backend) -> set[int]:
    """The review ids a backup file holds, read without restoring it."""
    if backend == "sqlite":
        with sqlite3.connect(path) as connection:
            return {row[0] for row in connection.execute("SELECT id FROM reviews")}
    dump = subprocess.run(
        ["pg_restore", "--data-only", "-t", "reviews", "-f", "-", str(path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    start = next(i for i, line in enumerate(dump) if line.startswith("COPY "))
    rows = dump[start + 1 : dump.index("\\.", start)]
    return {int(row.split("\t")[0]) for row in rows}


def test_a_backup_taken_while_writers_run_holds_every_acknowledged_review(
    live_app, backend, tmp_path
):
    """Is every answer acknowledged before the backup started in the backup?"""
    engine = get_engine(live_app)
    acknowledged: list[int] = []
    stop = threading.Event()
    errors: list[BaseException] = []

    def writer(number: int) -> None:
        worker_engine = make_engine(engine.url.render_as_string(False))
        try:
            with Session(worker_engine, expire_on_commit=False) as session:
                user = session.scalars(
                    select(User).where(User.username == f"writer{number}")
                ).one()
                for round_ in range(10_000):
                    if stop.is_set():
                        return
                    result = record_answer(
                        session,
                        user,
                        "weights-1" if round_ % 2 else "scores-1",
                        graded=scheduling.GradedAnswer(correct=round_ % 3 > 0),
                    )
                    session.commit()
                    acknowledged.append(result.id)
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            worker_engine.dispose()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(WRITERS)]
    for thread in threads:
        thread.start()
    try:
        while len(acknowledged) < 30 and not errors:
            threading.Event().wait(0.01)
        before = set(acknowledged)
        target = tmp_path / "during.backup"
        result = cli(live_app, "db", "backup", str(target))
        while len(acknowledged) < len(before) + 30 and not errors:
            threading.Event().wait(0.01)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
    assert not errors, errors
    assert result.exit_code == 0, result.output
    assert (
        "backup written" in result.output
        and f"schema {head_revision()}" in result.output
    )
    in_backup = backup_review_ids(target, backend)
    assert before <= in_backup, f"missing acknowledged reviews {before - in_backup}"
    assert in_backup <= review_ids(engine)
    assert len(review_ids(engine)) > len(in_backup)  # writing went on meanwhile


def test_restore_checks_the_copy_and_refuses_to_overwrite_data(
    live_app, backend, tmp_path
):
    """Does a restore bring back the backup's rows, only with --yes over data?"""
    engine = get_engine(live_app)
    with Session(engine) as session:
        user = session.scalars(select(User)).first()
        record_answer(session, user, "scores-1", graded=scheduling.GradedAnswer(True))
        session.commit()
    target = tmp_path / "one.backup"
    assert cli(live_app, "db", "backup", str(target)).exit_code == 0
    with Session(engine) as session:
        user = session.scalars(select(User)).first()
        record_answer(session, user, "output-1", graded=scheduling.GradedAnswer(True))
        session.commit()
    assert len(review_ids(engine)) == 2

    refused = cli(live_app, "db", "restore", str(target))
    assert refused.exit_code == 2 and "--yes" in refused.output
    assert len(review_ids(engine)) == 2

    restored = cli(live_app, "db", "restore", str(target), "--yes")
    assert restored.exit_code == 0, restored.output
    engine = get_engine(live_app)
    assert len(review_ids(engine)) == 1
    assert current_revision(engine) == head_revision()


def test_restore_refuses_a_damaged_or_unknown_copy(live_app, backend, tmp_path):
    """Is a damaged file, or a schema newer than the code, refused with a reason?"""
    damaged = tmp_path / "damaged.backup"
    damaged.write_bytes(b"not a database at all" * 100)
    result = cli(live_app, "db", "restore", str(damaged), "--yes")
    assert result.exit_code == 2 and "Traceback" not in result.output
    if backend != "sqlite":
        return
    newer = tmp_path / "newer.sqlite3"
    assert cli(live_app, "db", "backup", str(newer)).exit_code == 0
    with sqlite3.connect(newer) as connection:
        connection.execute("UPDATE alembic_version SET version_num = '9999'")
    connection.close()
    result = cli(live_app, "db", "restore", str(newer), "--yes")
    assert result.exit_code == 2 and "9999" in result.output
    # A page written over with zeros fails SQLite's integrity check.
    broken = tmp_path / "broken.sqlite3"
    assert cli(live_app, "db", "backup", str(broken)).exit_code == 0
    # The users table's root page: a page in use (a migration that rebuilds a
    # table leaves free pages behind, which the integrity check does not read).
    with sqlite3.connect(broken) as connection:
        root, page_size = connection.execute(
            "SELECT rootpage, (SELECT page_size FROM pragma_page_size()) "
            "FROM sqlite_master WHERE name = 'users'"
        ).fetchone()
    connection.close()
    data = bytearray(broken.read_bytes())
    start = (root - 1) * page_size
    data[start : start + 200] = bytes(200)
    broken.write_bytes(bytes(data))
    result = cli(live_app, "db", "restore", str(broken), "--yes")
    assert result.exit_code == 2 and "integrity" in result.output


def test_a_downgrade_that_drops_rows_says_how_many_and_asks(live_app, backend):
    """Does a downgrade that would drop rows refuse without --yes, naming the count?"""
    engine = get_engine(live_app)
    with Session(engine) as session:
        user = session.scalars(select(User)).first()
        record_answer(session, user, "scores-1", graded=scheduling.GradedAnswer(True))
        session.commit()
    # 0002 drops the learning record: 1 review, 1 card (and empty tables), and
    # the bank's version row (0012).
    refused = cli(live_app, "db", "downgrade", "0002", input="n\n")
    assert refused.exit_code == 1
    assert "drops 3 rows: bank_version (1), cards (1), reviews (1)" in refused.output
    assert current_revision(engine) == head_revision()
    assert review_ids(engine)
    done = cli(live_app, "db", "downgrade", "0002", "--yes")
    assert done.exit_code == 0, done.output
    assert current_revision(engine) == "0002"
    if backend == "sqlite":
        path = done.output.split("backup first: ")[1].split(" (schema")[0]
        with sqlite3.connect(path) as connection:
            assert connection.execute("SELECT count(*) FROM reviews").fetchone() == (1,)
        connection.close()
    else:
        assert "backup first" not in done.output


def test_sqlite_syncs_every_commit_by_default(tmp_path):
    """Is an acknowledged commit on disk (synchronous=FULL) unless configured?"""
    levels = {}
    for setting in (None, "normal"):
        config = {
            "TESTING": True,
            "SECRET_KEY": "x",
            "DATABASE_URL": f"sqlite:///{tmp_path / 'sync.sqlite3'}",
        }
        if setting:
            config["SQLITE_SYNCHRONOUS"] = setting
        engine = get_engine(create_app(config))
        with engine.connect() as connection:
            levels[setting] = connection.exec_driver_sql("PRAGMA synchronous").scalar()
            assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        engine.dispose()
    assert levels == {None: 2, "normal": 1}  # 2 = FULL, 1 = NORMAL
    with pytest.raises(ValueError, match="FULL"):
        make_engine("sqlite://", sqlite_synchronous="sometimes")


def test_the_synchronous_level_comes_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("QUIZSVC_INSTANCE_PATH", str(tmp_path))
    monkeypatch.setenv("QUIZSVC_SQLITE_SYNCHRONOUS", "NORMAL")
    app = create_app()
    assert app.config["SQLITE_SYNCHRONOUS"] == "NORMAL"
    engine = get_engine(app)
    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA synchronous").scalar() == 1
    engine.dispose()


def test_serve_refuses_an_unknown_synchronous_level(tmp_path):
    """Does a mistyped QUIZSVC_SQLITE_SYNCHRONOUS stop `serve` with one line?"""
    exe = shutil.which("quizsvc", path=str(Path(sys.executable).parent))
    env = {
        **os.environ,
        "QUIZSVC_INSTANCE_PATH": str(tmp_path),
        "QUIZSVC_SQLITE_SYNCHRONOUS": "sometimes",
    }
    env.pop("QUIZSVC_DATABASE_URL", None)
    result = subprocess.run(
        [exe, "serve", "--port", "0"], capture_output=True, text=True, env=env
    )
    assert result.returncode == 2
    assert "(QUIZSVC_SQLITE_SYNCHRONOUS) must be one of" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_missing_pg_dump_is_explained(monkeypatch, tmp_path):
    """Without the PostgreSQL client tools, does backup say how to get them?"""
    from quizsvc import backups

    monkeypatch.setattr(backups.shutil, "which", lambda name: None)
    engine = make_engine("postgresql+psycopg://u@localhost/db", poolclass=NullPool)
    with pytest.raises(backups.BackupError, match="postgresql-client.*pg_dump -Fc"):
        backups.backup(engine, tmp_path / "x.dump")
