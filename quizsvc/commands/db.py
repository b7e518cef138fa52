"""`quizsvc db …` (schema migrations) and `quizsvc questions sync` (bank → database)."""

from __future__ import annotations

from pathlib import Path

import click
from alembic.util.exc import CommandError
from flask.cli import with_appcontext
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError

from quizsvc import db


def _where(engine) -> str:
    return make_url(str(engine.url)).render_as_string(hide_password=True)


def _migrate(action, engine, revision: str) -> None:
    """Run a migration step and say what changed; failures become one line."""
    try:
        before = db.current_revision(engine)
        action(engine, revision)
        after = db.current_revision(engine)
    except (CommandError, db.MigrationsNotFound) as exc:
        raise click.UsageError(str(exc)) from None
    except OperationalError as exc:
        raise click.ClickException(
            f"the database did not answer: {exc.orig or exc}"
        ) from None
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

    Tables added after REVISION are dropped with everything in them.
    """
    engine = db.get_engine()
    if not yes:
        click.confirm(
            f"Downgrading {_where(engine)} to {revision} deletes the tables (and "
            "data) of later revisions. Continue?",
            abort=True,
        )
    _migrate(db.downgrade, engine, revision)


@db_group.command("current")
@with_appcontext
def current_command() -> None:
    """Show the database's schema revision and whether it is the newest."""
    engine = db.get_engine()
    try:
        current = db.current_revision(engine)
        head = db.head_revision()
    except db.MigrationsNotFound as exc:
        raise click.UsageError(str(exc)) from None
    except OperationalError as exc:
        raise click.ClickException(
            f"the database did not answer: {exc.orig or exc}"
        ) from None
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
