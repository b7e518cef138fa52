"""The bank's version token: workers cache the bank and re-read it only when a
sync changed it (one row, its token random so no two databases share one).

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-02
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    table = op.create_table(
        "bank_version",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("token", sa.BigInteger(), nullable=False),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_bank_version")),
    )
    op.bulk_insert(
        table,
        [{"id": 1, "token": secrets.randbits(62), "changed_at": datetime.now(UTC)}],
    )


def downgrade() -> None:
    op.drop_table("bank_version")
