"""One-time password reset codes a teacher issues for a learner of their class;
open_items.day_repeat, so the drill's counter can say both the day's position
(answers today + 1) and whether the open item is a learning-step repeat; and
open_items.option_order, the shuffled order of a choice item's options.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# Stored as UTC, returned aware (quizsvc.models.UTCDateTime).
TIMESTAMP = sa.DateTime(timezone=True)

revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "reset_codes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("code_hash", sa.String(length=64), nullable=False),
        sa.Column("issued_by", sa.Integer(), nullable=True),
        sa.Column("class_id", sa.Integer(), nullable=True),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("expires_at", TIMESTAMP, nullable=False),
        sa.Column("used_at", TIMESTAMP, nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_reset_codes_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["issued_by"],
            ["users.id"],
            name=op.f("fk_reset_codes_issued_by_users"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["class_id"],
            ["classes.id"],
            name=op.f("fk_reset_codes_class_id_classes"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reset_codes")),
        sa.UniqueConstraint("code_hash", name=op.f("uq_reset_codes_code_hash")),
    )
    op.create_index(
        op.f("ix_reset_codes_user_id"), "reset_codes", ["user_id"], unique=False
    )
    with op.batch_alter_table("open_items") as batch:
        batch.add_column(sa.Column("day_repeat", sa.Boolean(), nullable=True))
        batch.add_column(sa.Column("option_order", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("open_items") as batch:
        batch.drop_column("option_order")
        batch.drop_column("day_repeat")
    op.drop_index(op.f("ix_reset_codes_user_id"), table_name="reset_codes")
    op.drop_table("reset_codes")
