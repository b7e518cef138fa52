"""`quizsvc lti …`: register LMS platforms, rotate the tool's keys, push grades.

Bad input (an unknown class or platform, a malformed URL, an unknown rule)
exits with code 2 and one line; a push in which some scores could not be
delivered exits with code 1 after listing them (the next push resends them).
"""

from __future__ import annotations

import sys
from datetime import date

import click
from flask import current_app
from flask.cli import with_appcontext

RULES = ("accuracy", "retention")


@click.group("lti")
def lti_group() -> None:
    """Register LMS platforms (LTI 1.3) and send a class's grades to its LMS."""


def _usage(exc: Exception) -> click.UsageError:
    return click.UsageError(" ".join(str(exc).split()))


@lti_group.command("add-platform")
@click.option("--issuer", required=True, help="The platform's issuer (iss).")
@click.option("--client-id", required=True, help="The client id the LMS gave quizsvc.")
@click.option(
    "--deployment-id",
    "deployment_ids",
    multiple=True,
    required=True,
    help="A deployment id (repeat for several).",
)
@click.option("--auth-login-url", required=True, help="The OIDC authorization URL.")
@click.option("--auth-token-url", required=True, help="The OAuth2 access token URL.")
@click.option("--key-set-url", required=True, help="The platform's public key set URL.")
@click.option("--name", help="A name for the platform (default: the issuer's host).")
@click.option(
    "--frame-origin",
    "frame_origins",
    multiple=True,
    help="Another origin whose pages frame quizsvc (e.g. a school's Canvas "
    "address when the issuer is canvas.instructure.com).",
)
@with_appcontext
def add_platform_command(
    issuer: str,
    client_id: str,
    deployment_ids: tuple[str, ...],
    auth_login_url: str,
    auth_token_url: str,
    key_set_url: str,
    name: str | None,
    frame_origins: tuple[str, ...],
) -> None:
    """Register an LMS so that its launches are accepted."""
    from quizsvc.db import transaction
    from quizsvc.lti.platforms import PlatformFields, add_platform
    from quizsvc.services import ServiceError

    try:
        with transaction() as session:
            platform = add_platform(
                session,
                PlatformFields(
                    issuer=issuer,
                    client_id=client_id,
                    deployment_ids=deployment_ids,
                    auth_login_url=auth_login_url,
                    auth_token_url=auth_token_url,
                    key_set_url=key_set_url,
                    name=name,
                    frame_origins=frame_origins,
                ),
                allow_http=current_app.config.get("LTI_ALLOW_HTTP", False),
            )
    except ServiceError as exc:
        raise _usage(exc) from None
    click.echo(
        f"registered platform {platform.id}: {platform.name} ({platform.issuer}, "
        f"client {platform.client_id}, {len(platform.deployments)} deployment(s))"
    )


@lti_group.command("list-platforms")
@with_appcontext
def list_platforms_command() -> None:
    """List the registered platforms and their deployments."""
    from quizsvc.db import get_session
    from quizsvc.lti.platforms import list_platforms

    found = list_platforms(get_session())
    if not found:
        click.echo("no platforms registered (quizsvc lti add-platform …)")
        return
    for platform in found:
        deployments = ", ".join(d.deployment_id for d in platform.deployments)
        click.echo(f"{platform.id}  {platform.name}")
        click.echo(f"    issuer          {platform.issuer}")
        click.echo(f"    client id       {platform.client_id}")
        click.echo(f"    deployments     {deployments}")
        click.echo(f"    auth login URL  {platform.auth_login_url}")
        click.echo(f"    auth token URL  {platform.auth_token_url}")
        click.echo(f"    key set URL     {platform.key_set_url}")
        for origin in platform.frame_origins or []:
            click.echo(f"    frame origin    {origin}")


@lti_group.command("remove-platform")
@click.argument("platform_id", type=int)
@with_appcontext
def remove_platform_command(platform_id: int) -> None:
    """Unregister a platform (by the id list-platforms shows)."""
    from quizsvc.db import transaction
    from quizsvc.lti.platforms import remove_platform
    from quizsvc.services import ServiceError

    try:
        with transaction() as session:
            platform = remove_platform(session, platform_id)
    except ServiceError as exc:
        raise _usage(exc) from None
    click.echo(f"removed platform {platform_id}: {platform.name} ({platform.issuer})")


@lti_group.command("rotate-key")
@with_appcontext
def rotate_key_command() -> None:
    """Add a new signing key; the old ones stay published until retired."""
    from quizsvc.lti import keys

    key = keys.new_key(current_app.instance_path)
    click.echo(f"new signing key {key.kid} (run `quizsvc lti retire-keys` in a day)")


@lti_group.command("retire-keys")
@with_appcontext
def retire_keys_command() -> None:
    """Stop publishing every key but the newest."""
    from quizsvc.lti import keys

    retired = keys.retire_old_keys(current_app.instance_path)
    for key in retired:
        click.echo(f"retired key {key.kid}")
    newest = keys.signing_key(current_app.instance_path)
    click.echo(f"signing key {newest.kid} ({len(retired)} retired)")


def _retention_date(value: str | None) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is not a date YYYY-MM-DD", param_hint="--retention-date"
        ) from None


@lti_group.command("push-grades")
@click.argument("class_id", type=int)
@click.option(
    "--rule",
    type=click.Choice(RULES),
    default="accuracy",
    show_default=True,
    help="How a score is computed (as in the Canvas export).",
)
@click.option(
    "--retention-date",
    help="For --rule retention: the day recall is predicted for "
    "(YYYY-MM-DD; default a week from today).",
)
@with_appcontext
def push_grades_command(class_id: int, rule: str, retention_date: str | None) -> None:
    """Send a class's scores to its LMS gradebook (only changed ones)."""
    from tqdm import tqdm

    from quizsvc.db import get_session, transaction
    from quizsvc.lti import accounts, grades
    from quizsvc.models import Classroom
    from quizsvc.services import ServiceError

    on = _retention_date(retention_date)
    session = get_session()
    classroom = session.get(Classroom, class_id)
    context = accounts.context_of_class(session, class_id) if classroom else None
    if classroom is None:
        raise click.BadParameter(f"no class {class_id}", param_hint="CLASS_ID")
    if context is None:
        raise click.BadParameter(
            f"class {class_id} ({classroom.name}) is not linked to an LMS course "
            "(an instructor links it by opening quizsvc from the course)",
            param_hint="CLASS_ID",
        )
    try:
        with transaction() as session:
            push = grades.start_push(session, context, rule, started_by=None)
    except ServiceError as exc:
        raise _usage(exc) from None
    bar = tqdm(total=0, unit="score", desc="scores", file=sys.stderr, leave=True)

    def progress(current) -> None:
        bar.total = current.total
        bar.n = current.done
        bar.refresh()

    delays = current_app.config.get("LTI_RETRY_DELAYS") or grades.DEFAULT_RETRY_DELAYS
    try:
        push = grades.run_push(
            session,
            push,
            current_app.instance_path,
            commit=session.commit,
            progress=progress,
            retention_date=on,
            delays=delays,
        )
    finally:
        bar.close()
    click.echo(
        f"push {push.id} ({rule}) to {context.title or classroom.name}: "
        f"{push.sent} sent, {push.unchanged} unchanged, {push.failed} failed, "
        f"{push.retried} retried, {push.skipped} never launched from the LMS"
    )
    if push.status == "failed":
        raise click.ClickException(push.message or "the push failed")
    failures = [line for line in push.sends if line.status == "failed"]
    for line in failures:
        click.echo(
            f"failed: user {line.user_id} (LTI {line.sub}) score {line.score:g} "
            f"after {line.attempts} tries: {line.detail or 'no answer'}",
            err=True,
        )
    if failures:
        click.echo("the next push sends the failed scores again", err=True)
        sys.exit(1)
