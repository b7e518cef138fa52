"""Learning record: cards, the review log, explanations, self-assessments,
learner settings, FSRS parameter history and the open drill item.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TIMESTAMP = sa.DateTime(timezone=True)


def _user_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["user_id"],
        ["users.id"],
        name=op.f(f"fk_{table}_user_id_users"),
        ondelete="CASCADE",
    )


def _item_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["item_id"], ["items.id"], name=op.f(f"fk_{table}_item_id_items")
    )


def upgrade() -> None:
    op.create_table(
        "cards",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.String(length=128), nullable=False),
        sa.Column("state", sa.SmallInteger(), nullable=False),
        sa.Column("step", sa.Integer(), nullable=True),
        sa.Column("stability", sa.Double(), nullable=True),
        sa.Column("difficulty", sa.Double(), nullable=True),
        sa.Column("due", TIMESTAMP, nullable=False),
        sa.Column("last_review", TIMESTAMP, nullable=True),
        sa.Column("reps", sa.Integer(), nullable=False),
        sa.Column("lapses", sa.Integer(), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=False),
        sa.CheckConstraint("state BETWEEN 0 AND 3", name=op.f("ck_cards_state")),
        _item_fk("cards"),
        _user_fk("cards"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cards")),
        sa.UniqueConstraint(
            "user_id", "item_id", name=op.f("uq_cards_user_id_item_id")
        ),
    )
    op.create_index(op.f("ix_cards_item_id"), "cards", ["item_id"])
    # The daily queue reads one learner's due cards: an index range, not a scan.
    op.create_index(op.f("ix_cards_user_id_due"), "cards", ["user_id", "due"])

    op.create_table(
        "reviews",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.String(length=128), nullable=False),
        sa.Column("card_id", sa.Integer(), nullable=False),
        sa.Column("reviewed_at", TIMESTAMP, nullable=False),
        sa.Column("rating", sa.SmallInteger(), nullable=False),
        sa.Column("rating_source", sa.String(length=8), nullable=False),
        sa.Column("correct", sa.Boolean(), nullable=False),
        sa.Column("score", sa.Double(), nullable=True),
        sa.Column("duration_ms", sa.Integer(), nullable=True),
        sa.Column("answer_text", sa.Text(), nullable=True),
        sa.Column("hint_used", sa.Boolean(), nullable=False),
        sa.Column("problem_kind", sa.String(length=64), nullable=True),
        sa.Column("problem_seed", sa.BigInteger(), nullable=True),
        sa.Column("problem_level", sa.SmallInteger(), nullable=True),
        sa.Column("misconception", sa.String(length=64), nullable=True),
        sa.Column("idempotency_key", sa.String(length=128), nullable=True),
        sa.Column("state_before", sa.SmallInteger(), nullable=False),
        sa.Column("state_after", sa.SmallInteger(), nullable=False),
        sa.Column("stability_after", sa.Double(), nullable=True),
        sa.Column("difficulty_after", sa.Double(), nullable=True),
        sa.Column("due_after", TIMESTAMP, nullable=False),
        sa.CheckConstraint(
            "rating_source IN ('graded', 'learner')",
            name=op.f("ck_reviews_rating_source"),
        ),
        sa.CheckConstraint(
            "duration_ms IS NULL OR duration_ms >= 0", name=op.f("ck_reviews_duration")
        ),
        sa.CheckConstraint("rating BETWEEN 1 AND 4", name=op.f("ck_reviews_rating")),
        sa.CheckConstraint(
            "score IS NULL OR (score >= 0 AND score <= 1)",
            name=op.f("ck_reviews_score"),
        ),
        sa.ForeignKeyConstraint(
            ["card_id"],
            ["cards.id"],
            name=op.f("fk_reviews_card_id_cards"),
            ondelete="CASCADE",
        ),
        _item_fk("reviews"),
        _user_fk("reviews"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reviews")),
        sa.UniqueConstraint(
            "user_id",
            "idempotency_key",
            name=op.f("uq_reviews_user_id_idempotency_key"),
        ),
    )
    op.create_index(
        op.f("ix_reviews_card_id_reviewed_at"), "reviews", ["card_id", "reviewed_at"]
    )
    op.create_index(op.f("ix_reviews_item_id"), "reviews", ["item_id"])
    op.create_index(
        op.f("ix_reviews_user_id_reviewed_at"), "reviews", ["user_id", "reviewed_at"]
    )

    op.create_table(
        "explanations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("review_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=False),
        sa.ForeignKeyConstraint(
            ["review_id"],
            ["reviews.id"],
            name=op.f("fk_explanations_review_id_reviews"),
            ondelete="CASCADE",
        ),
        _user_fk("explanations"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_explanations")),
        sa.UniqueConstraint("review_id", name=op.f("uq_explanations_review_id")),
    )
    op.create_index(op.f("ix_explanations_user_id"), "explanations", ["user_id"])

    op.create_table(
        "self_assessments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("skill_id", sa.String(length=64), nullable=False),
        sa.Column("level", sa.SmallInteger(), nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("assessed_at", TIMESTAMP, nullable=False),
        sa.CheckConstraint(
            "level BETWEEN 0 AND 3", name=op.f("ck_self_assessments_level")
        ),
        sa.ForeignKeyConstraint(
            ["skill_id"],
            ["skills.id"],
            name=op.f("fk_self_assessments_skill_id_skills"),
        ),
        _user_fk("self_assessments"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_self_assessments")),
    )
    op.create_index(
        op.f("ix_self_assessments_skill_id"), "self_assessments", ["skill_id"]
    )
    op.create_index(
        op.f("ix_self_assessments_user_id_skill_id_assessed_at"),
        "self_assessments",
        ["user_id", "skill_id", "assessed_at"],
    )

    op.create_table(
        "learner_settings",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("desired_retention", sa.Double(), nullable=False),
        sa.Column("new_per_day", sa.Integer(), nullable=False),
        sa.Column("reviews_per_day", sa.Integer(), nullable=False),
        sa.Column("rollover_hour", sa.Integer(), nullable=False),
        sa.Column("timezone", sa.String(length=64), nullable=False),
        sa.Column("two_button_mode", sa.Boolean(), nullable=False),
        sa.Column("language", sa.String(length=8), nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=False),
        sa.CheckConstraint(
            "language IN ('zh-CN', 'en')", name=op.f("ck_learner_settings_language")
        ),
        sa.CheckConstraint(
            "desired_retention >= 0.7 AND desired_retention <= 0.99",
            name=op.f("ck_learner_settings_desired_retention"),
        ),
        sa.CheckConstraint(
            "new_per_day >= 0", name=op.f("ck_learner_settings_new_per_day")
        ),
        sa.CheckConstraint(
            "reviews_per_day >= 0", name=op.f("ck_learner_settings_reviews_per_day")
        ),
        sa.CheckConstraint(
            "rollover_hour BETWEEN 0 AND 23",
            name=op.f("ck_learner_settings_rollover_hour"),
        ),
        _user_fk("learner_settings"),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_learner_settings")),
    )

    op.create_table(
        "fsrs_parameters",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("parameters", sa.JSON(), nullable=False),
        sa.Column("fitted_at", TIMESTAMP, nullable=False),
        sa.Column("review_count", sa.Integer(), nullable=False),
        sa.Column("log_loss_current", sa.Double(), nullable=True),
        sa.Column("log_loss_fitted", sa.Double(), nullable=True),
        sa.Column("adopted", sa.Boolean(), nullable=False),
        _user_fk("fsrs_parameters"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_fsrs_parameters")),
    )
    op.create_index(
        op.f("ix_fsrs_parameters_user_id_fitted_at"),
        "fsrs_parameters",
        ["user_id", "fitted_at"],
    )

    op.create_table(
        "open_items",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.String(length=128), nullable=False),
        sa.Column("opened_at", TIMESTAMP, nullable=False),
        sa.Column("problem_kind", sa.String(length=64), nullable=True),
        sa.Column("problem_seed", sa.BigInteger(), nullable=True),
        sa.Column("problem_level", sa.SmallInteger(), nullable=True),
        _item_fk("open_items"),
        _user_fk("open_items"),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_open_items")),
    )
    op.create_index(op.f("ix_open_items_item_id"), "open_items", ["item_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_open_items_item_id"), table_name="open_items")
    op.drop_table("open_items")
    op.drop_index(
        op.f("ix_fsrs_parameters_user_id_fitted_at"), table_name="fsrs_parameters"
    )
    op.drop_table("fsrs_parameters")
    op.drop_table("learner_settings")
    op.drop_index(
        op.f("ix_self_assessments_user_id_skill_id_assessed_at"),
        table_name="self_assessments",
    )
    op.drop_index(op.f("ix_self_assessments_skill_id"), table_name="self_assessments")
    op.drop_table("self_assessments")
    op.drop_index(op.f("ix_explanations_user_id"), table_name="explanations")
    op.drop_table("explanations")
    op.drop_index(op.f("ix_reviews_user_id_reviewed_at"), table_name="reviews")
    op.drop_index(op.f("ix_reviews_item_id"), table_name="reviews")
    op.drop_index(op.f("ix_reviews_card_id_reviewed_at"), table_name="reviews")
    op.drop_table("reviews")
    op.drop_index(op.f("ix_cards_user_id_due"), table_name="cards")
    op.drop_index(op.f("ix_cards_item_id"), table_name="cards")
    op.drop_table("cards")
