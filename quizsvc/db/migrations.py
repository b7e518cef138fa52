"""Running the Alembic migrations: upgrade, downgrade, the current and newest revision.

The schema is built by the revisions in the repository's top-level
`migrations/` folder (`migrations_path()` finds it).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flask import Flask
from sqlalchemy import Connection, Engine, text

from quizsvc.db.engine import is_sqlite
from quizsvc.db.postgresql import without_statement_timeout
from quizsvc.db.session import get_engine

# Any constant works: it only has to be the same for every quizsvc process
# migrating the same PostgreSQL database.
_MIGRATION_LOCK_ID = 0x71756973


class MigrationsNotFound(RuntimeError):
    """The Alembic migrations folder is not where quizsvc expects it."""


def migrations_path() -> Path:
    """Find the Alembic migrations folder (QUIZSVC_MIGRATIONS_PATH overrides)."""
    override = os.environ.get("QUIZSVC_MIGRATIONS_PATH")
    if override:
        path = Path(override)
    else:
        # quizsvc is installed editable from the checkout; migrations/ sits
        # beside the package folder, two levels above this file.
        path = Path(__file__).resolve().parents[2] / "migrations"
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
    with engine.connect() as connection, without_statement_timeout(connection):
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
