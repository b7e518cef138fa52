"""Class sharing: whether a learner shows a class their answers from before joining.

A class's teachers see a learner's answers from the moment the learner joined
on; `share_history` records the learner's choice (on the join page or in
settings) to show the earlier ones too. Off for everyone already in a class:
they were never asked.

A teacher's membership also records when they last marked the class's
explanations read (`explanations_read_at`), for the "unread" filter.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("memberships") as batch:
        batch.add_column(
            sa.Column(
                "share_history",
                sa.Boolean(),
                nullable=False,
                server_default=sa.false(),
            )
        )
        batch.add_column(
            sa.Column("explanations_read_at", sa.DateTime(timezone=True), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("memberships") as batch:
        batch.drop_column("explanations_read_at")
        batch.drop_column("share_history")
