"""`quizsvc users …`: accounts and their roles (learner, teacher, admin).

Roles are granted here, on the server's command line, and nowhere else:
registering always makes a learner.
"""

from __future__ import annotations

import sys

import click
from flask.cli import with_appcontext

from quizsvc.models import ROLES


@click.group("users")
def users_group() -> None:
    """Create accounts, give them roles or new passwords, list them."""


def _read_password(from_stdin: bool) -> str:
    if from_stdin:
        # One line, as `echo "$PASSWORD" | quizsvc users create …` sends it.
        return sys.stdin.readline().rstrip("\r\n")
    return click.prompt("Password", hide_input=True, confirmation_prompt=True)


@users_group.command("create")
@click.argument("username")
@click.option(
    "--role",
    type=click.Choice(ROLES),
    default="learner",
    show_default=True,
    help="The account's role.",
)
@click.option("--display-name", help="The name shown on pages.")
@click.option(
    "--password-stdin",
    is_flag=True,
    help="Read the password from the first line of standard input (else prompt).",
)
@with_appcontext
def create_command(
    username: str, role: str, display_name: str | None, password_stdin: bool
) -> None:
    """Create an account (e.g. a teacher) that signs in with a password."""
    from quizsvc.db import transaction
    from quizsvc.services import ServiceError
    from quizsvc.services.accounts import check_password_rules, hash_password
    from quizsvc.services.users import create_user

    password = _read_password(password_stdin)
    try:
        check_password_rules(password)
        with transaction() as session:
            user = create_user(
                session,
                username,
                role=role,
                display_name=display_name,
                password_hash=hash_password(password),
            )
    except ServiceError as exc:
        raise click.UsageError(str(exc)) from None
    click.echo(f"created {user.role} {user.username!r} (id {user.id})")


@users_group.command("set-role")
@click.argument("username")
@click.argument("role", type=click.Choice(ROLES))
@with_appcontext
def set_role_command(username: str, role: str) -> None:
    """Give an existing account another role (learner, teacher or admin)."""
    from quizsvc.db import transaction
    from quizsvc.services.users import find_user

    with transaction() as session:
        user = find_user(session, username)
        if user is None:
            raise click.BadParameter(f"no account {username!r}", param_hint="USERNAME")
        before, user.role = user.role, role
    click.echo(f"{user.username!r}: {before} -> {role}")


@users_group.command("set-password")
@click.argument("username")
@click.option(
    "--password-stdin",
    is_flag=True,
    help="Read the new password from the first line of standard input (else prompt).",
)
@with_appcontext
def set_password_command(username: str, password_stdin: bool) -> None:
    """Give an account a new password (same rule as registering).

    Every session and API token of that account ends: whoever used it before
    has to sign in again with the new password.
    """
    from quizsvc.db import transaction
    from quizsvc.services import ServiceError
    from quizsvc.services.accounts import set_password
    from quizsvc.services.users import find_user

    password = _read_password(password_stdin)
    try:
        with transaction() as session:
            user = find_user(session, username)
            if user is None:
                raise click.BadParameter(
                    f"no account {username!r}", param_hint="USERNAME"
                )
            done = set_password(session, user, password)
            name = user.username
    except ServiceError as exc:
        raise click.UsageError(str(exc)) from None
    click.echo(
        f"new password for {name!r}; ended {done.sessions_ended} session(s) "
        f"and revoked {done.tokens_revoked} API token(s)"
    )


@users_group.command("list")
@click.option("--role", type=click.Choice(ROLES), help="Only accounts with this role.")
@with_appcontext
def list_command(role: str | None) -> None:
    """List accounts: username, role, display name, created (UTC)."""
    from sqlalchemy import select

    from quizsvc.db import get_session
    from quizsvc.models import User

    query = select(User).order_by(User.username)
    if role is not None:
        query = query.where(User.role == role)
    users = list(get_session().scalars(query))
    if not users:
        click.echo("no accounts")
        return
    width = max(len(user.username) for user in users)
    for user in users:
        click.echo(
            f"{user.username:<{width}}  {user.role:<7}  "
            f"{user.created_at:%Y-%m-%d %H:%M}  {user.display_name or ''}".rstrip()
        )
