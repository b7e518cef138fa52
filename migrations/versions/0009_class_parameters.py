"""Class priors: FSRS parameters pooled over a class's shared histories, and
what each learner's fit was measured against (procedure, blend target, the
interval of its rolling log loss minus the defaults', the reason).

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# Stored as UTC, returned aware (quizsvc.models.UTCDateTime).
TIMESTAMP = sa.DateTime(timezone=True)

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "class_parameters",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("class_id", sa.Integer(), nullable=False),
        sa.Column("parameters", sa.JSON(), nullable=False),
        sa.Column("fitted_at", TIMESTAMP, nullable=False),
        sa.Column("review_count", sa.Integer(), nullable=False),
        sa.Column("learner_count", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["class_id"],
            ["classes.id"],
            name=op.f("fk_class_parameters_class_id_classes"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_class_parameters")),
    )
    op.create_index(
        op.f("ix_class_parameters_class_id_fitted_at"),
        "class_parameters",
        ["class_id", "fitted_at"],
    )
    with op.batch_alter_table("fsrs_parameters", schema=None) as batch_op:
        batch_op.add_column(sa.Column("method", sa.String(length=32), nullable=True))
        batch_op.add_column(
            sa.Column("blend_target", sa.String(length=16), nullable=True)
        )
        batch_op.add_column(sa.Column("delta_log_loss_low", sa.Double(), nullable=True))
        batch_op.add_column(
            sa.Column("delta_log_loss_high", sa.Double(), nullable=True)
        )
        batch_op.add_column(sa.Column("reason", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("fsrs_parameters", schema=None) as batch_op:
        batch_op.drop_column("reason")
        batch_op.drop_column("delta_log_loss_high")
        batch_op.drop_column("delta_log_loss_low")
        batch_op.drop_column("blend_target")
        batch_op.drop_column("method")
    op.drop_index(
        op.f("ix_class_parameters_class_id_fitted_at"), table_name="class_parameters"
    )
    op.drop_table("class_parameters")
