"""Classes for teachers: term, time zone, join code, who created the class;
the student number and name a learner shows a class; the teacher's roster.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Classes that exist before this revision get a code like new classes do. A
# copy, not an import, so the revision keeps working when the service changes:
# the alphabet is quizsvc.services.classes.JOIN_CODE_ALPHABET (no 0/O, 1/I/L, U),
# and tests/test_migrations.py checks the two agree.
_ALPHABET = "23456789ABCDEFGHJKMNPQRSTVWXYZ"


def upgrade() -> None:
    with op.batch_alter_table("classes") as batch:
        batch.add_column(sa.Column("term", sa.String(length=100), nullable=True))
        batch.add_column(
            sa.Column(
                "timezone",
                sa.String(length=64),
                nullable=False,
                server_default="Asia/Shanghai",
            )
        )
        batch.add_column(sa.Column("join_code", sa.String(length=16), nullable=True))
        batch.add_column(
            sa.Column(
                "joining_open", sa.Boolean(), nullable=False, server_default=sa.true()
            )
        )
        batch.add_column(sa.Column("created_by", sa.Integer(), nullable=True))
        batch.create_foreign_key(
            op.f("fk_classes_created_by_users"),
            "users",
            ["created_by"],
            ["id"],
            ondelete="SET NULL",
        )
    connection = op.get_bind()
    classes = sa.table("classes", sa.column("id"), sa.column("join_code"))
    for (class_id,) in connection.execute(sa.select(classes.c.id)).all():
        code = "".join(secrets.choice(_ALPHABET) for _ in range(8))
        connection.execute(
            classes.update().where(classes.c.id == class_id).values(join_code=code)
        )
    with op.batch_alter_table("classes") as batch:
        batch.alter_column("join_code", existing_type=sa.String(16), nullable=False)
        batch.alter_column("timezone", server_default=None)
        batch.alter_column("joining_open", server_default=None)
        batch.create_unique_constraint(op.f("uq_classes_join_code"), ["join_code"])

    with op.batch_alter_table("memberships") as batch:
        batch.add_column(
            sa.Column("student_number", sa.String(length=64), nullable=True)
        )
        batch.add_column(
            sa.Column("display_name", sa.String(length=128), nullable=True)
        )

    op.create_table(
        "roster_entries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("class_id", sa.Integer(), nullable=False),
        sa.Column("student_number", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.ForeignKeyConstraint(
            ["class_id"],
            ["classes.id"],
            name=op.f("fk_roster_entries_class_id_classes"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_roster_entries")),
        sa.UniqueConstraint(
            "class_id",
            "student_number",
            name=op.f("uq_roster_entries_class_id_student_number"),
        ),
    )


def downgrade() -> None:
    op.drop_table("roster_entries")
    with op.batch_alter_table("memberships") as batch:
        batch.drop_column("display_name")
        batch.drop_column("student_number")
    with op.batch_alter_table("classes") as batch:
        batch.drop_constraint(op.f("uq_classes_join_code"), type_="unique")
        batch.drop_constraint(op.f("fk_classes_created_by_users"), type_="foreignkey")
        batch.drop_column("created_by")
        batch.drop_column("joining_open")
        batch.drop_column("join_code")
        batch.drop_column("timezone")
        batch.drop_column("term")
