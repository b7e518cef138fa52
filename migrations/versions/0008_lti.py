"""LTI 1.3: platforms and their deployments, accounts and courses bound to an LMS,
the used-nonce store, the roster read from the platform (NRPS), and grade pushes
with their log and the scores each platform acknowledged (AGS).

No secret is stored: the tool's private keys stay in the instance folder.

Revision ID: 0008
Revises: 0006
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# Stored as UTC, returned aware (quizsvc.models.UTCDateTime).
TIMESTAMP = sa.DateTime(timezone=True)

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "lti_platforms",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("issuer", sa.String(length=255), nullable=False),
        sa.Column("client_id", sa.String(length=255), nullable=False),
        sa.Column("auth_login_url", sa.String(length=1024), nullable=False),
        sa.Column("auth_token_url", sa.String(length=1024), nullable=False),
        sa.Column("key_set_url", sa.String(length=1024), nullable=False),
        sa.Column("frame_origins", sa.JSON(), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lti_platforms")),
        sa.UniqueConstraint(
            "issuer", "client_id", name=op.f("uq_lti_platforms_issuer_client_id")
        ),
    )
    op.create_table(
        "lti_used_nonces",
        sa.Column("issuer", sa.String(length=255), nullable=False),
        sa.Column("nonce", sa.String(length=255), nullable=False),
        sa.Column("used_at", TIMESTAMP, nullable=False),
        sa.Column("expires_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("issuer", "nonce", name=op.f("pk_lti_used_nonces")),
    )
    with op.batch_alter_table("lti_used_nonces", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_lti_used_nonces_expires_at"), ["expires_at"], unique=False
        )

    op.create_table(
        "lti_accounts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("issuer", sa.String(length=255), nullable=False),
        sa.Column("sub", sa.String(length=255), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=True),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("last_launch_at", TIMESTAMP, nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_lti_accounts_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lti_accounts")),
        sa.UniqueConstraint("issuer", "sub", name=op.f("uq_lti_accounts_issuer_sub")),
    )
    with op.batch_alter_table("lti_accounts", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_lti_accounts_user_id"), ["user_id"], unique=False
        )

    op.create_table(
        "lti_deployments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("platform_id", sa.Integer(), nullable=False),
        sa.Column("deployment_id", sa.String(length=255), nullable=False),
        sa.ForeignKeyConstraint(
            ["platform_id"],
            ["lti_platforms.id"],
            name=op.f("fk_lti_deployments_platform_id_lti_platforms"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lti_deployments")),
        sa.UniqueConstraint(
            "platform_id",
            "deployment_id",
            name=op.f("uq_lti_deployments_platform_id_deployment_id"),
        ),
    )
    op.create_table(
        "lti_contexts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("issuer", sa.String(length=255), nullable=False),
        sa.Column("client_id", sa.String(length=255), nullable=False),
        sa.Column("deployment_id", sa.String(length=255), nullable=False),
        sa.Column("context_id", sa.String(length=255), nullable=False),
        sa.Column("title", sa.String(length=255), nullable=True),
        sa.Column("class_id", sa.Integer(), nullable=False),
        sa.Column("memberships_url", sa.String(length=1024), nullable=True),
        sa.Column("lineitems_url", sa.String(length=1024), nullable=True),
        sa.Column("ags_scopes", sa.JSON(), nullable=False),
        sa.Column("lineitem_url", sa.String(length=1024), nullable=True),
        sa.Column("roster_synced_at", TIMESTAMP, nullable=True),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.ForeignKeyConstraint(
            ["class_id"],
            ["classes.id"],
            name=op.f("fk_lti_contexts_class_id_classes"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lti_contexts")),
        sa.UniqueConstraint("class_id", name=op.f("uq_lti_contexts_class_id")),
        sa.UniqueConstraint(
            "issuer",
            "deployment_id",
            "context_id",
            name=op.f("uq_lti_contexts_issuer_deployment_id_context_id"),
        ),
    )
    op.create_table(
        "lti_grade_pushes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("context_id", sa.Integer(), nullable=False),
        sa.Column("rule", sa.String(length=16), nullable=False),
        sa.Column("started_by", sa.Integer(), nullable=True),
        sa.Column("started_at", TIMESTAMP, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=False),
        sa.Column("finished_at", TIMESTAMP, nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("done", sa.Integer(), nullable=False),
        sa.Column("sent", sa.Integer(), nullable=False),
        sa.Column("unchanged", sa.Integer(), nullable=False),
        sa.Column("failed", sa.Integer(), nullable=False),
        sa.Column("retried", sa.Integer(), nullable=False),
        sa.Column("skipped", sa.Integer(), nullable=False),
        sa.Column("message", sa.Text(), nullable=True),
        sa.CheckConstraint(
            "rule IN ('accuracy', 'retention')", name=op.f("ck_lti_grade_pushes_rule")
        ),
        sa.CheckConstraint(
            "status IN ('running', 'done', 'failed')",
            name=op.f("ck_lti_grade_pushes_status"),
        ),
        sa.ForeignKeyConstraint(
            ["context_id"],
            ["lti_contexts.id"],
            name=op.f("fk_lti_grade_pushes_context_id_lti_contexts"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["started_by"],
            ["users.id"],
            name=op.f("fk_lti_grade_pushes_started_by_users"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lti_grade_pushes")),
    )
    with op.batch_alter_table("lti_grade_pushes", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_lti_grade_pushes_context_id_started_at"),
            ["context_id", "started_at"],
            unique=False,
        )

    op.create_table(
        "lti_roster_members",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("context_id", sa.Integer(), nullable=False),
        sa.Column("sub", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=True),
        sa.Column("email", sa.String(length=320), nullable=True),
        sa.Column("student_number", sa.String(length=64), nullable=True),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("synced_at", TIMESTAMP, nullable=False),
        sa.CheckConstraint(
            "role IN ('learner', 'teacher')", name=op.f("ck_lti_roster_members_role")
        ),
        sa.ForeignKeyConstraint(
            ["context_id"],
            ["lti_contexts.id"],
            name=op.f("fk_lti_roster_members_context_id_lti_contexts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lti_roster_members")),
        sa.UniqueConstraint(
            "context_id", "sub", name=op.f("uq_lti_roster_members_context_id_sub")
        ),
    )
    op.create_table(
        "lti_scores",
        sa.Column("context_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("acknowledged_at", TIMESTAMP, nullable=False),
        sa.ForeignKeyConstraint(
            ["context_id"],
            ["lti_contexts.id"],
            name=op.f("fk_lti_scores_context_id_lti_contexts"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_lti_scores_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("context_id", "user_id", name=op.f("pk_lti_scores")),
    )
    op.create_table(
        "lti_score_sends",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("push_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("sub", sa.String(length=255), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("status", sa.String(length=8), nullable=False),
        sa.Column("attempts", sa.SmallInteger(), nullable=False),
        sa.Column("http_status", sa.SmallInteger(), nullable=True),
        sa.Column("detail", sa.String(length=500), nullable=True),
        sa.Column("at", TIMESTAMP, nullable=False),
        sa.CheckConstraint(
            "status IN ('sent', 'failed')", name=op.f("ck_lti_score_sends_status")
        ),
        sa.ForeignKeyConstraint(
            ["push_id"],
            ["lti_grade_pushes.id"],
            name=op.f("fk_lti_score_sends_push_id_lti_grade_pushes"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_lti_score_sends_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lti_score_sends")),
    )
    with op.batch_alter_table("lti_score_sends", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_lti_score_sends_push_id"), ["push_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("lti_score_sends", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_lti_score_sends_push_id"))

    op.drop_table("lti_score_sends")
    op.drop_table("lti_scores")
    op.drop_table("lti_roster_members")
    with op.batch_alter_table("lti_grade_pushes", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_lti_grade_pushes_context_id_started_at"))

    op.drop_table("lti_grade_pushes")
    op.drop_table("lti_contexts")
    op.drop_table("lti_deployments")
    with op.batch_alter_table("lti_accounts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_lti_accounts_user_id"))

    op.drop_table("lti_accounts")
    with op.batch_alter_table("lti_used_nonces", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_lti_used_nonces_expires_at"))

    op.drop_table("lti_used_nonces")
    op.drop_table("lti_platforms")
