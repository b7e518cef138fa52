"""Migrations build the schema the models describe, on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import CheckConstraint, inspect, text
from sqlalchemy.orm import Session

from quizsvc import create_app
from quizsvc.db import (
    MigrationsNotFound,
    alembic_config,
    current_revision,
    downgrade,
    head_revision,
    make_engine,
    migrations_path,
    prepare_database,
    upgrade,
)
from quizsvc.models import Base, User


@pytest.fixture
def empty_engine(empty_database_url):
    engine = make_engine(empty_database_url)
    yield engine
    engine.dispose()


def revisions_oldest_first() -> list[str]:
    script = ScriptDirectory.from_config(alembic_config())
    return [rev.revision for rev in reversed(list(script.walk_revisions()))]


def test_migrated_schema_matches_the_models(empty_engine):
    """Does building the schema by migrations give exactly what the models say?"""
    upgrade(empty_engine)
    with empty_engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        assert compare_metadata(context, Base.metadata) == []
        inspector = inspect(connection)
        for table in Base.metadata.sorted_tables:
            # Alembic's comparison skips check constraints; compare their names.
            expected = {
                c.name for c in table.constraints if isinstance(c, CheckConstraint)
            }
            found = {c["name"] for c in inspector.get_check_constraints(table.name)}
            assert found == expected, table.name


def test_every_revision_downgrades_and_upgrades_again(empty_engine):
    """Can each revision be undone and redone, one step at a time, from empty?"""
    revisions = revisions_oldest_first()
    assert revisions[-1] == head_revision()
    for revision in revisions:
        upgrade(empty_engine, revision)
        assert current_revision(empty_engine) == revision
        downgrade(empty_engine, "-1")
        upgrade(empty_engine, revision)
    downgrade(empty_engine, "base")
    assert current_revision(empty_engine) is None
    tables = set(inspect(empty_engine).get_table_names()) - {"alembic_version"}
    assert tables == set()


def test_revisions_form_one_line_with_descriptive_names():
    """Is there a single head, every revision documented and its file named for it?"""
    script = ScriptDirectory.from_config(alembic_config())
    assert len(script.get_heads()) == 1
    for revision in script.walk_revisions():
        assert revision.doc and len(revision.doc) > 10
        assert Path(revision.module.__file__).name.startswith(f"{revision.revision}_")


def test_prepare_database_upgrades_an_older_database_keeping_its_rows(
    empty_database_url, tmp_path
):
    """Does `serve`'s start-up step bring an old database to the head, data intact?"""
    engine = make_engine(empty_database_url)
    first = revisions_oldest_first()[0]
    upgrade(engine, first)
    with engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO users (username, role, locale, timezone, created_at) "
                "VALUES ('early', 'learner', 'zh-CN', 'Asia/Shanghai', "
                "'2026-01-02 03:04:05')"
            )
        )
    engine.dispose()
    app = create_app(
        {"TESTING": True, "SECRET_KEY": "x", "DATABASE_URL": empty_database_url}
    )
    from quizsvc.db import get_engine

    prepare_database(app)
    prepare_database(app)  # a second start finds nothing to do
    engine = get_engine(app)
    assert current_revision(engine) == head_revision()
    with Session(engine) as session:
        user = session.query(User).one()
        assert user.username == "early"
        assert user.created_at.tzinfo is not None
    engine.dispose()


def test_prepare_database_creates_a_fresh_sqlite_file(tmp_path):
    """Does a first start create the SQLite file with the whole schema?"""
    path = tmp_path / "fresh" / "quizsvc.sqlite3"
    path.parent.mkdir()
    app = create_app(
        {"TESTING": True, "SECRET_KEY": "x", "DATABASE_URL": f"sqlite:///{path}"}
    )
    from quizsvc.db import get_engine

    prepare_database(app)
    engine = get_engine(app)
    assert {"users", "reviews", "cards", "alembic_version"} <= set(
        inspect(engine).get_table_names()
    )
    engine.dispose()


def test_missing_migrations_folder_is_a_clear_error(monkeypatch, tmp_path):
    """Is a broken install reported with where the migrations were looked for?"""
    monkeypatch.setenv("QUIZSVC_MIGRATIONS_PATH", str(tmp_path / "nowhere"))
    with pytest.raises(MigrationsNotFound, match="nowhere"):
        migrations_path()


def test_sqlite_migrations_leave_foreign_keys_enforced(tmp_path):
    """After a migration switched them off for batch mode, are foreign keys on again?"""
    engine = make_engine(f"sqlite:///{tmp_path / 'fk.sqlite3'}", pool_size=1)
    upgrade(engine)
    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    engine.dispose()


@pytest.fixture
def empty_app(empty_database_url):
    app = create_app(
        {"TESTING": True, "SECRET_KEY": "x", "DATABASE_URL": empty_database_url}
    )
    yield app
    from quizsvc.db import get_engine

    get_engine(app).dispose()


def test_db_commands_upgrade_show_and_downgrade(empty_app):
    """Do `db upgrade`, `db current` and `db downgrade` do and say what they should?"""
    from quizsvc.cli import main

    runner = empty_app.test_cli_runner()
    head = head_revision()
    empty = runner.invoke(main, ["db", "current"])
    assert empty.exit_code == 0 and "empty; run `quizsvc db upgrade`" in empty.output
    up = runner.invoke(main, ["db", "upgrade"])
    assert up.exit_code == 0 and f"empty → {head}" in up.output
    assert "up to date" in runner.invoke(main, ["db", "current"]).output
    again = runner.invoke(main, ["db", "upgrade"])
    assert f"already at {head}" in again.output
    kept = runner.invoke(main, ["db", "downgrade", "-1"], input="n\n")
    assert kept.exit_code == 1 and current_revision_of(empty_app) == head
    down = runner.invoke(main, ["db", "downgrade", "-1", "--yes"])
    assert down.exit_code == 0, down.output
    previous = revisions_oldest_first()[-2]
    assert f"{head} → {previous}" in down.output
    assert f"behind {head}" in runner.invoke(main, ["db", "current"]).output
    base = runner.invoke(main, ["db", "downgrade", "base", "--yes"])
    assert base.exit_code == 0 and "→ empty" in base.output


def current_revision_of(app):
    from quizsvc.db import get_engine

    return current_revision(get_engine(app))


@pytest.mark.parametrize(
    "args",
    [["db", "upgrade", "no-such-revision"], ["db", "downgrade", "0999", "--yes"]],
)
def test_db_commands_refuse_unknown_revisions(empty_app, args):
    """Is an unknown revision a one-line error with exit code 2?"""
    from quizsvc.cli import main

    result = empty_app.test_cli_runner().invoke(main, args)
    assert result.exit_code == 2
    assert "Can't locate revision" in result.output and "Traceback" not in result.output


def test_classes_revision_keeps_classes_and_members_both_ways(empty_engine):
    """Does 0004 give old classes a join code, and do both directions keep the rows?"""
    from quizsvc.services.classes import JOIN_CODE_ALPHABET, JOIN_CODE_LENGTH

    upgrade(empty_engine, "0003")
    moment = "'2026-09-01 08:00:00'"
    with empty_engine.begin() as connection:
        for name, role in (("wang", "teacher"), ("ana", "learner"), ("bo", "learner")):
            connection.execute(
                text(
                    "INSERT INTO users (username, role, locale, timezone, created_at) "
                    f"VALUES ('{name}', '{role}', 'zh-CN', 'Asia/Shanghai', {moment})"
                )
            )
        for name in ("一班", "二班"):
            connection.execute(
                text(
                    "INSERT INTO classes (name, created_at) "
                    f"VALUES ('{name}', {moment})"
                )
            )
        connection.execute(
            text(
                "INSERT INTO memberships (class_id, user_id, role, joined_at) VALUES "
                f"(1, 1, 'teacher', {moment}), (1, 2, 'learner', {moment}), "
                f"(2, 3, 'learner', {moment})"
            )
        )
    upgrade(empty_engine, "0004")
    with empty_engine.begin() as connection:
        rows = connection.execute(
            text("SELECT join_code, timezone, joining_open FROM classes ORDER BY id")
        ).all()
        codes = [row.join_code for row in rows]
        assert len(set(codes)) == 2
        assert all(len(c) == JOIN_CODE_LENGTH and set(c) <= set(JOIN_CODE_ALPHABET)
                   for c in codes)  # fmt: skip
        assert [(r.timezone, bool(r.joining_open)) for r in rows] == [
            ("Asia/Shanghai", True)
        ] * 2
        connection.execute(
            text(
                "UPDATE memberships SET student_number = '01', display_name = '安' "
                "WHERE user_id = 2"
            )
        )
        connection.execute(
            text(
                "INSERT INTO roster_entries (class_id, student_number, name) "
                "VALUES (1, '01', '安娜')"
            )
        )
    downgrade(empty_engine, "0003")
    with empty_engine.connect() as connection:
        members = connection.execute(text("SELECT count(*) FROM memberships"))
        assert members.scalar() == 3
        names = connection.execute(text("SELECT name FROM classes ORDER BY id"))
        assert names.scalars().all() == ["一班", "二班"]
    assert "roster_entries" not in inspect(empty_engine).get_table_names()
    upgrade(empty_engine)
    assert current_revision(empty_engine) == head_revision()


def test_the_migration_and_the_service_share_the_join_code_alphabet():
    from quizsvc.services.classes import JOIN_CODE_ALPHABET

    script = ScriptDirectory.from_config(alembic_config())
    assert script.get_revision("0004").module._ALPHABET == JOIN_CODE_ALPHABET
