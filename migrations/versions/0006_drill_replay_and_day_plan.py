"""The drill's memory: each answer keeps the verdict it was given (so a retried
request is answered with the same body), and the open item keeps its place in
the learner's day (position and planned total, so showing it reads no queue).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("reviews") as batch:
        batch.add_column(sa.Column("verdict", sa.JSON(), nullable=True))
    with op.batch_alter_table("open_items") as batch:
        batch.add_column(sa.Column("day_position", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("day_total", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("open_items") as batch:
        batch.drop_column("day_total")
        batch.drop_column("day_position")
    with op.batch_alter_table("reviews") as batch:
        batch.drop_column("verdict")
