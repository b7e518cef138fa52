"""`quizsvc db …` (schema migrations) and `quizsvc questions sync` (bank → database)."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import click
from alembic.util.exc import CommandError
from flask.cli import with_appcontext
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError

from quizsvc import backups, db


def _where(engine) -> str:
    return make_url(str(engine.url)).render_as_string(hide_password=True)


@contextmanager
def _one_line_failures():
    """Turn an unknown revision or an unreachable database into one line."""
    try:
        yield
    except (CommandError, db.MigrationsNotFound) as exc:
        raise click.UsageError(str(exc)) from None
    except OperationalError as exc:
        raise click.ClickException(
            f"the database did not answer: {exc.orig or exc}"
        ) from None


def _migrate(action, engine, revision: str) -> None:
    """Run a migration step and say what changed; failures become one line."""
    with _one_line_failures():
        before = db.current_revision(engine)
        action(engine, revision)
        after = db.current_revision(engine)
    if before == after:
        click.echo(f"{_where(engine)}: already at {after or 'base (empty)'}")
    else:
        click.echo(f"{_where(engine)}: {before or 'empty'} → {after or 'empty'}")


@click.group("db")
def db_group() -> None:
    """Create and upgrade the database schema (Alembic migrations in migrations/)."""


@db_group.command("upgrade")
@click.argument("revision", default="head")
@with_appcontext
def upgrade_command(revision: str) -> None:
    """Upgrade the schema to REVISION (default: the newest, "head")."""
    _migrate(db.upgrade, db.get_engine(), revision)


# ignore_unknown_options lets "-1" (one step down) through as the revision.
@db_group.command("downgrade", context_settings={"ignore_unknown_options": True})
@click.argument("revision")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@with_appcontext
def downgrade_command(revision: str, yes: bool) -> None:
    """Downgrade the schema to REVISION ("-1" = one step, "base" = empty).

    Tables added after REVISION are dropped with everything in them: the
    command says how many rows that is and asks first (unless --yes); on
    SQLite it takes a backup beside the database before dropping any row.
    """
    engine = db.get_engine()
    with _one_line_failures():
        counts = backups.row_counts(engine)
        dropped = sorted(set(counts) - backups.tables_after_downgrade(engine, revision))
    lost = {name: counts[name] for name in dropped if counts[name]}
    if lost:
        listed = ", ".join(f"{name} ({rows})" for name, rows in lost.items())
        loss = f"drops {sum(lost.values())} rows: {listed}"
    elif dropped:
        loss = f"drops the empty tables {', '.join(dropped)}"
    else:
        loss = "drops no table"
    if not yes:
        click.confirm(
            f"Downgrading {_where(engine)} to {revision} {loss}. Continue?", abort=True
        )
    if lost and db.is_sqlite(engine):
        target = backups.downgrade_backup_path(Path(engine.url.database), revision)
        click.echo(f"backup first: {_copy(backups.backup, engine, target).line()}")
    _migrate(db.downgrade, engine, revision)


def _copy(action, engine, path: Path, **options) -> backups.CopyReport:
    """Run a backup or restore; its refusals become one line and exit code 2."""
    try:
        return action(engine, path, **options)
    except backups.BackupError as exc:
        raise click.UsageError(str(exc)) from None


@db_group.command("backup")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@with_appcontext
def backup_command(file: Path) -> None:
    """Copy the database to FILE while the service keeps running.

    SQLite: an online backup (one consistent snapshot, checked). PostgreSQL:
    `pg_dump -Fc` (the PostgreSQL client tools must be on PATH).
    """
    report = _copy(backups.backup, db.get_engine(), file)
    click.echo(f"backup written: {report.line()}")


@db_group.command("restore")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--yes", is_flag=True, help="Replace a database that already holds data.")
@with_appcontext
def restore_command(file: Path, yes: bool) -> None:
    """Put the backup FILE back in place of the database.

    The copy is checked first (integrity, and a schema revision this version
    knows); a database that holds data is replaced only with --yes. Run
    `quizsvc db upgrade` afterwards when the backup is older than the code.
    """
    engine = db.get_engine()
    report = _copy(backups.restore, engine, file, overwrite=yes)
    head = db.head_revision()
    click.echo(f"restored into {_where(engine)}: {report.line()}")
    if report.revision != head:
        click.echo(f"the schema is behind {head}: run `quizsvc db upgrade`")


@db_group.command("current")
@with_appcontext
def current_command() -> None:
    """Show the database's schema revision and whether it is the newest."""
    engine = db.get_engine()
    with _one_line_failures():
        current = db.current_revision(engine)
        head = db.head_revision()
    if current is None:
        state = "empty; run `quizsvc db upgrade`"
    elif current == head:
        state = "up to date"
    else:
        state = f"behind {head}; run `quizsvc db upgrade`"
    click.echo(f"{_where(engine)}: {current or 'no revision'} ({state})")


@click.command("sync")
@click.argument(
    "path",
    required=False,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
@with_appcontext
def questions_sync_command(path: Path | None) -> None:
    """Load the question bank (PATH, default questions/) into the database.

    Safe to run again: unchanged questions stay as they are, edited ones are
    updated, removed ones are retired (never deleted).
    """
    from quizsvc.bank import DEFAULT_PATH, BankError, load
    from quizsvc.services.bank_sync import sync_bank

    try:
        bank = load(path or DEFAULT_PATH)
    except BankError as exc:
        raise click.UsageError(
            f"the question bank has {len(exc.problems)} problem(s); "
            "`quizsvc questions validate` lists them"
        ) from None
    with db.transaction() as session:
        report = sync_bank(session, bank)
    for line in report.lines():
        click.echo(line)
    if not report.changed:
        click.echo("the database already matched the bank")
