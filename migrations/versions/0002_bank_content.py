"""Bank content: lessons, skills, items and the skills each item exercises.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TIMESTAMP = sa.DateTime(timezone=True)
ITEM_TYPES = "'choice', 'numeric', 'cloze', 'recall', 'ordering', 'generated'"


def upgrade() -> None:
    op.create_table(
        "lessons",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("title", sa.JSON(), nullable=False),
        sa.Column("summary", sa.JSON(), nullable=False),
        sa.Column("prerequisites", sa.JSON(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("synced_at", TIMESTAMP, nullable=False),
        sa.Column("retired_at", TIMESTAMP, nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lessons")),
    )
    op.create_table(
        "skills",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("lesson_id", sa.String(length=64), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("title", sa.JSON(), nullable=False),
        sa.Column("can_do", sa.JSON(), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("synced_at", TIMESTAMP, nullable=False),
        sa.Column("retired_at", TIMESTAMP, nullable=True),
        sa.ForeignKeyConstraint(
            ["lesson_id"], ["lessons.id"], name=op.f("fk_skills_lesson_id_lessons")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_skills")),
    )
    op.create_index(op.f("ix_skills_lesson_id"), "skills", ["lesson_id"])
    op.create_table(
        "items",
        sa.Column("id", sa.String(length=128), nullable=False),
        sa.Column("lesson_id", sa.String(length=64), nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("difficulty", sa.Integer(), nullable=True),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("content", sa.JSON(), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=False),
        sa.Column("retired_at", TIMESTAMP, nullable=True),
        sa.CheckConstraint(f"type IN ({ITEM_TYPES})", name=op.f("ck_items_type")),
        sa.ForeignKeyConstraint(
            ["lesson_id"], ["lessons.id"], name=op.f("fk_items_lesson_id_lessons")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_items")),
    )
    op.create_index(op.f("ix_items_lesson_id"), "items", ["lesson_id"])
    op.create_table(
        "item_skills",
        sa.Column("item_id", sa.String(length=128), nullable=False),
        sa.Column("skill_id", sa.String(length=64), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["item_id"],
            ["items.id"],
            name=op.f("fk_item_skills_item_id_items"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["skill_id"], ["skills.id"], name=op.f("fk_item_skills_skill_id_skills")
        ),
        sa.PrimaryKeyConstraint("item_id", "skill_id", name=op.f("pk_item_skills")),
    )
    op.create_index(op.f("ix_item_skills_skill_id"), "item_skills", ["skill_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_item_skills_skill_id"), table_name="item_skills")
    op.drop_table("item_skills")
    op.drop_index(op.f("ix_items_lesson_id"), table_name="items")
    op.drop_table("items")
    op.drop_index(op.f("ix_skills_lesson_id"), table_name="skills")
    op.drop_table("skills")
    op.drop_table("lessons")
