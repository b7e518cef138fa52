"""Copies of the database: online backups, checked restores, what a downgrade drops.

SQLite is copied with its online backup API (`sqlite3.Connection.backup`): the
copy is one consistent snapshot, taken while the server keeps writing, and
holds every transaction committed before it started (a `cp` of the file and its
WAL does not). PostgreSQL is copied with `pg_dump` in its custom format and put
back with `pg_restore`; both come with the PostgreSQL client tools.

A restore checks the copy first (SQLite's integrity check, or that pg_restore
can read the archive) and its schema revision against the code's newest one,
and refuses to overwrite a database that holds data unless told to.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from contextlib import closing, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import Engine, func, inspect, select, table
from sqlalchemy.engine import URL, make_url

from quizsvc import db


class BackupError(RuntimeError):
    """A backup or restore cannot be done; the message says why and what to do."""


@dataclass(frozen=True)
class CopyReport:
    """What a backup wrote or a restore put back."""

    path: Path
    revision: str | None
    reviews: int | None

    def line(self) -> str:
        """One line for the command line."""
        reviews = "" if self.reviews is None else f", {self.reviews} reviews"
        return f"{self.path} (schema {self.revision or 'empty'}{reviews})"


# --- what is stored -----------------------------------------------------------------


def row_counts(engine: Engine) -> dict[str, int]:
    """Rows per table of quizsvc's schema (Alembic's own table left out)."""
    with engine.connect() as connection:
        names = [
            name
            for name in inspect(connection).get_table_names()
            if name != "alembic_version"
        ]
        return {
            name: connection.scalar(select(func.count()).select_from(table(name)))
            for name in names
        }


def tables_after_downgrade(engine: Engine, revision: str) -> set[str]:
    """The tables left after downgrading to `revision`, found by a rolled-back run."""
    from alembic import command

    found: set[str] = set()

    def probe(config) -> None:
        command.downgrade(config, revision)
        connection = config.attributes["connection"]
        found.update(inspect(connection).get_table_names())
        raise _RolledBack

    with suppress(_RolledBack):
        db.run_migrations(engine, probe)
    return found - {"alembic_version"}


class _RolledBack(Exception):
    """Raised inside a migration transaction to undo it."""


# --- backup --------------------------------------------------------------------------


def backup(engine: Engine, target: Path) -> CopyReport:
    """Copy the database to `target` while it stays in use."""
    url = engine.url
    if url.get_backend_name() == "sqlite":
        return _backup_sqlite(_sqlite_path(url), target)
    if url.get_backend_name() == "postgresql":
        return _backup_postgres(url, target)
    raise BackupError(f"no backup method for {url.get_backend_name()} databases")


def _sqlite_path(url: URL) -> Path:
    if not url.database or url.database == ":memory:":
        raise BackupError("an in-memory SQLite database has nothing to back up")
    return Path(url.database)


def _backup_sqlite(source: Path, target: Path) -> CopyReport:
    if not source.exists():
        raise BackupError(f"there is no database at {source}")
    target = target.resolve()
    partial = target.with_name(f".{target.name}.partial")
    partial.unlink(missing_ok=True)
    with _sqlite(source) as live, _sqlite(partial) as copy:
        # One step (pages=-1): a consistent snapshot even while others write.
        live.backup(copy)
    check = check_sqlite_file(partial)
    # Renamed into place only once complete, so a FILE is never half a backup.
    os.replace(partial, target)
    return CopyReport(target, check.revision, check.reviews)


def _sqlite(path: Path) -> closing[sqlite3.Connection]:
    """A plain sqlite3 connection, closed (not just committed) when the block ends."""
    return closing(sqlite3.connect(path, timeout=db.BUSY_TIMEOUT_SECONDS))


def check_sqlite_file(path: Path) -> CopyReport:
    """Check a SQLite copy's integrity; return its schema revision and review count."""
    try:
        with _sqlite(path) as connection:
            problems = [row[0] for row in connection.execute("PRAGMA integrity_check")]
            if problems != ["ok"]:
                raise BackupError(
                    f"{path} fails SQLite's integrity check: {'; '.join(problems[:5])}"
                )
            revision = _scalar_or_none(
                connection, "SELECT version_num FROM alembic_version"
            )
            reviews = _scalar_or_none(connection, "SELECT count(*) FROM reviews")
    except sqlite3.DatabaseError as exc:
        raise BackupError(
            f"{path} is damaged or not a SQLite database (integrity check: {exc})"
        ) from None
    return CopyReport(Path(path), revision, reviews)


def _scalar_or_none(connection: sqlite3.Connection, sql: str):
    try:
        row = connection.execute(sql).fetchone()
    except sqlite3.OperationalError:  # no such table: not (yet) a quizsvc schema
        return None
    return row[0] if row else None


def _libpq(url: URL) -> tuple[str, str | None]:
    """The URL as libpq takes it, and the schema its search_path names, if any.

    A deployment kept in one schema (`?options=-csearch_path=NAME`) is dumped
    and restored as that schema alone.
    """
    plain = url.set(drivername="postgresql", password=None)
    schema = None
    options = url.query.get("options")
    if isinstance(options, str) and "search_path=" in options:
        schema = options.split("search_path=", 1)[1].split()[0].split(",")[0]
    return plain.render_as_string(hide_password=False), schema


def _tool(name: str, what: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise BackupError(
            f"{name} is not on PATH: install the PostgreSQL client tools (for "
            f"example `apt-get install postgresql-client`, the same major version "
            f"as the server or newer), then run this again; or {what}"
        )
    return path


def _run(arguments: list[str], password: str | None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if password:
        env["PGPASSWORD"] = password
    result = subprocess.run(arguments, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        said = result.stderr.strip() or result.stdout.strip()
        raise BackupError(f"{Path(arguments[0]).name} failed: {said}")
    return result


def _backup_postgres(url: URL, target: Path) -> CopyReport:
    conninfo, schema = _libpq(url)
    pg_dump = _tool(
        "pg_dump", f"run `pg_dump -Fc -f {target} '{conninfo}'` where it is installed"
    )
    target = target.resolve()
    partial = target.with_name(f".{target.name}.partial")
    arguments = [pg_dump, "-Fc", "--no-owner", "-f", str(partial), "-d", conninfo]
    if schema:
        arguments += ["-n", schema]
    _run(arguments, url.password)
    revision = _archive_revision(partial, url.password)
    os.replace(partial, target)
    return CopyReport(target, revision, None)


def _archive_revision(path: Path, password: str | None) -> str | None:
    """Read the schema revision out of a pg_dump archive (pg_restore checks it)."""
    pg_restore = _tool("pg_restore", "restore it by hand with pg_restore")
    listing = _run([pg_restore, "-l", str(path)], password).stdout
    if " alembic_version " not in listing:
        return None
    data = _run(
        [pg_restore, "--data-only", "-t", "alembic_version", "-f", "-", str(path)],
        password,
    ).stdout
    lines = data.splitlines()
    for number, line in enumerate(lines):
        if line.startswith("COPY ") and "alembic_version" in line:
            value = lines[number + 1].strip()
            return None if value == "\\." else value
    return None


# --- restore -------------------------------------------------------------------------


def restore(engine: Engine, source: Path, *, overwrite: bool) -> CopyReport:
    """Put a backup back; refuse a damaged copy, a newer schema, or data in the way."""
    if not source.is_file():
        raise BackupError(f"there is no backup at {source}")
    url = engine.url
    if url.get_backend_name() == "sqlite":
        report = check_sqlite_file(source)
    elif url.get_backend_name() == "postgresql":
        report = CopyReport(source, _archive_revision(source, url.password), None)
    else:
        raise BackupError(f"no restore method for {url.get_backend_name()} databases")
    _check_revision(report.revision, source)
    if not overwrite:
        held = _stored_rows(engine)
        if held:
            raise BackupError(
                f"the database at {_where(engine)} already holds {held} rows; a "
                "restore replaces all of them: stop the server, take a backup of "
                "it (`quizsvc db backup FILE`) and run this again with --yes"
            )
    if url.get_backend_name() == "sqlite":
        with _sqlite(source) as copy, _sqlite(_sqlite_path(url)) as live:
            # Through the backup API, so connections still open see the new
            # content, not a file swapped under them.
            copy.backup(live)
    else:
        _restore_postgres(engine, source)
    return report


def _check_revision(revision: str | None, source: Path) -> None:
    from alembic.script import ScriptDirectory

    if revision is None:
        raise BackupError(f"{source} holds no quizsvc schema (no migration revision)")
    script = ScriptDirectory.from_config(db.alembic_config())
    known = {rev.revision for rev in script.walk_revisions()}
    if revision not in known:
        raise BackupError(
            f"{source} has schema revision {revision}, which this version of "
            f"quizsvc does not know (its newest is {db.head_revision()}): restore "
            "it with the quizsvc version that wrote it"
        )


def _stored_rows(engine: Engine) -> int:
    try:
        return sum(row_counts(engine).values())
    except Exception:  # an unreadable or missing database holds nothing to lose
        return 0


def _where(engine: Engine) -> str:
    return make_url(str(engine.url)).render_as_string(hide_password=True)


def _restore_postgres(engine: Engine, source: Path) -> None:
    url = engine.url
    conninfo, schema = _libpq(url)
    pg_restore = _tool(
        "pg_restore",
        f"run `pg_restore --clean --if-exists --no-owner -d '{conninfo}' {source}`",
    )
    engine.dispose()
    arguments = [
        pg_restore,
        "--clean",
        "--if-exists",
        "--no-owner",
        "--single-transaction",
        "-d",
        conninfo,
        str(source),
    ]
    if schema:
        arguments[1:1] = ["-n", schema]
    _run(arguments, url.password)


def downgrade_backup_path(database: Path, revision: str) -> Path:
    """Where the automatic backup before a downgrade goes (beside the database)."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    safe = "".join(c if c.isalnum() else "_" for c in revision)
    return database.with_name(
        f"{database.stem}-before-downgrade-{safe}-{stamp}.sqlite3"
    )
