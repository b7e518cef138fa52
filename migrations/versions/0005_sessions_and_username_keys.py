"""Server-side sessions; usernames matched case-insensitively after NFKC.

Existing accounts get their username key. Where two keys collide (`Admin` and
`admin`), the older account keeps the key and the newer ones keep signing in by
their exact spelling only; the collision is reported, nothing is merged or
renamed.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

import logging
import sys
import unicodedata
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TIMESTAMP = sa.DateTime(timezone=True)
log = logging.getLogger("quizsvc.migrations")


def _key(username: str) -> str:
    # A copy of quizsvc.models.username_key as it is at this revision.
    folded = unicodedata.normalize("NFKC", username).casefold()
    return unicodedata.normalize("NFKC", folded)


def upgrade() -> None:
    op.create_table(
        "user_sessions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("ended_at", TIMESTAMP, nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_user_sessions_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_user_sessions")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_user_sessions_token_hash")),
    )
    op.create_index(
        op.f("ix_user_sessions_user_id"), "user_sessions", ["user_id"], unique=False
    )
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("username_key", sa.String(length=64)))

    connection = op.get_bind()
    users = sa.table(
        "users", sa.column("id"), sa.column("username"), sa.column("username_key")
    )
    owners: dict[str, tuple[int, str]] = {}
    collisions: list[str] = []
    rows = connection.execute(sa.select(users.c.id, users.c.username).order_by("id"))
    for user_id, username in rows.all():
        key = _key(username)
        if key in owners:
            owner_id, owner_name = owners[key]
            collisions.append(
                f"  {username!r} (id {user_id}) matches {owner_name!r} (id {owner_id})"
            )
            continue
        owners[key] = (user_id, username)
        connection.execute(
            users.update().where(users.c.id == user_id).values(username_key=key)
        )
    with op.batch_alter_table("users") as batch:
        batch.create_unique_constraint(op.f("uq_users_username_key"), ["username_key"])
    if collisions:
        message = (
            f"{len(collisions)} username(s) differ from an older account's only by "
            "case or Unicode form; the older account keeps the name, the newer "
            "ones sign in by their exact spelling only until renamed:\n"
            + "\n".join(collisions)
        )
        log.warning(message)
        print(f"quizsvc migration 0005: {message}", file=sys.stderr)


def downgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.drop_constraint(op.f("uq_users_username_key"), type_="unique")
        batch.drop_column("username_key")
    op.drop_index(op.f("ix_user_sessions_user_id"), table_name="user_sessions")
    op.drop_table("user_sessions")
