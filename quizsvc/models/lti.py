"""The LTI tables: who the platforms are and what quizsvc knows of their courses.

No secret is stored here: a platform registration is public data (LTI 1.3
platforms publish their keys at a URL) and the tool's private keys live in
the instance folder (quizsvc.lti.keys), so a database copy a teacher takes
holds no key. Access tokens from platforms are kept in memory only.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    CheckConstraint,
    Float,
    ForeignKey,
    Index,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from quizsvc.models.base import Base, check_in, utcnow

URL_LENGTH = 1024
ID_LENGTH = 255
PUSH_RULES = ("accuracy", "retention")
PUSH_STATES = ("running", "done", "failed")
SEND_STATES = ("sent", "failed")


class LtiPlatform(Base):
    """An LMS registration: the issuer, the client id it gave quizsvc, its URLs."""

    __tablename__ = "lti_platforms"
    __table_args__ = (UniqueConstraint("issuer", "client_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    issuer: Mapped[str] = mapped_column(String(ID_LENGTH))
    client_id: Mapped[str] = mapped_column(String(ID_LENGTH))
    auth_login_url: Mapped[str] = mapped_column(String(URL_LENGTH))
    auth_token_url: Mapped[str] = mapped_column(String(URL_LENGTH))
    key_set_url: Mapped[str] = mapped_column(String(URL_LENGTH))
    # Origins besides the issuer's and the login URL's that may frame quizsvc
    # (Canvas Cloud's issuer is canvas.instructure.com, its pages the school's).
    frame_origins: Mapped[list[str]] = mapped_column(JSON, default=list)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    deployments: Mapped[list[LtiDeployment]] = relationship(
        back_populates="platform",
        cascade="all, delete-orphan",
        order_by="LtiDeployment.id",
    )


class LtiDeployment(Base):
    """A deployment id of a platform: launches from other deployments are refused."""

    __tablename__ = "lti_deployments"
    __table_args__ = (UniqueConstraint("platform_id", "deployment_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    platform_id: Mapped[int] = mapped_column(
        ForeignKey("lti_platforms.id", ondelete="CASCADE")
    )
    deployment_id: Mapped[str] = mapped_column(String(ID_LENGTH))

    platform: Mapped[LtiPlatform] = relationship(back_populates="deployments")


class LtiAccount(Base):
    """A platform's user (issuer + sub) bound to the quizsvc account they use."""

    __tablename__ = "lti_accounts"
    __table_args__ = (UniqueConstraint("issuer", "sub"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    issuer: Mapped[str] = mapped_column(String(ID_LENGTH))
    sub: Mapped[str] = mapped_column(String(ID_LENGTH))
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    # From the launch's claims when the platform shares them.
    email: Mapped[str | None] = mapped_column(String(320))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_launch_at: Mapped[datetime] = mapped_column(default=utcnow)


class LtiContext(Base):
    """An LMS course (context) and the quizsvc class it is linked to."""

    __tablename__ = "lti_contexts"
    __table_args__ = (UniqueConstraint("issuer", "deployment_id", "context_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    issuer: Mapped[str] = mapped_column(String(ID_LENGTH))
    client_id: Mapped[str] = mapped_column(String(ID_LENGTH))
    deployment_id: Mapped[str] = mapped_column(String(ID_LENGTH))
    context_id: Mapped[str] = mapped_column(String(ID_LENGTH))
    title: Mapped[str | None] = mapped_column(String(255))
    class_id: Mapped[int] = mapped_column(
        ForeignKey("classes.id", ondelete="CASCADE"), unique=True
    )
    # Service endpoints from the latest launch's claims (NRPS, AGS).
    memberships_url: Mapped[str | None] = mapped_column(String(URL_LENGTH))
    lineitems_url: Mapped[str | None] = mapped_column(String(URL_LENGTH))
    ags_scopes: Mapped[list[str]] = mapped_column(JSON, default=list)
    # The class's line item, once found or created on the platform.
    lineitem_url: Mapped[str | None] = mapped_column(String(URL_LENGTH))
    roster_synced_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class LtiUsedNonce(Base):
    """A launch's nonce, kept until its id_token expires: each works once."""

    __tablename__ = "lti_used_nonces"

    issuer: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    nonce: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    used_at: Mapped[datetime]
    expires_at: Mapped[datetime] = mapped_column(index=True)


class LtiRosterMember(Base):
    """A course member as the platform's roster (NRPS) listed them at the last sync."""

    __tablename__ = "lti_roster_members"
    __table_args__ = (
        UniqueConstraint("context_id", "sub"),
        CheckConstraint(check_in("role", ("learner", "teacher")), name="role"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    context_id: Mapped[int] = mapped_column(
        ForeignKey("lti_contexts.id", ondelete="CASCADE")
    )
    sub: Mapped[str] = mapped_column(String(ID_LENGTH))
    name: Mapped[str | None] = mapped_column(String(255))
    email: Mapped[str | None] = mapped_column(String(320))
    # lis_person_sourcedid: the school's id for the person (often 学号).
    student_number: Mapped[str | None] = mapped_column(String(64))
    role: Mapped[str] = mapped_column(String(16))
    active: Mapped[bool] = mapped_column(default=True)
    synced_at: Mapped[datetime]


class LtiGradePush(Base):
    """One push of a class's scores to its LMS line item: the log's heading."""

    __tablename__ = "lti_grade_pushes"
    __table_args__ = (
        CheckConstraint(check_in("rule", PUSH_RULES), name="rule"),
        CheckConstraint(check_in("status", PUSH_STATES), name="status"),
        Index(None, "context_id", "started_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    context_id: Mapped[int] = mapped_column(
        ForeignKey("lti_contexts.id", ondelete="CASCADE")
    )
    rule: Mapped[str] = mapped_column(String(16))
    # Who asked: a teacher on the dashboard, or None for the command line.
    started_by: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL")
    )
    started_at: Mapped[datetime]
    # Updated with each score, so a push whose process died shows as stalled.
    updated_at: Mapped[datetime]
    finished_at: Mapped[datetime | None]
    status: Mapped[str] = mapped_column(String(16), default="running")
    total: Mapped[int] = mapped_column(default=0)
    done: Mapped[int] = mapped_column(default=0)
    sent: Mapped[int] = mapped_column(default=0)
    unchanged: Mapped[int] = mapped_column(default=0)
    failed: Mapped[int] = mapped_column(default=0)
    retried: Mapped[int] = mapped_column(default=0)
    # Learners in the class who never launched from the LMS (no LTI user id).
    skipped: Mapped[int] = mapped_column(default=0)
    message: Mapped[str | None] = mapped_column(Text)

    sends: Mapped[list[LtiScoreSend]] = relationship(
        back_populates="push", cascade="all, delete-orphan", order_by="LtiScoreSend.id"
    )


class LtiScoreSend(Base):
    """One score sent (or that could not be sent) in a push: the log's lines."""

    __tablename__ = "lti_score_sends"
    __table_args__ = (CheckConstraint(check_in("status", SEND_STATES), name="status"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    push_id: Mapped[int] = mapped_column(
        ForeignKey("lti_grade_pushes.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    sub: Mapped[str] = mapped_column(String(ID_LENGTH))
    score: Mapped[float] = mapped_column(Float)
    status: Mapped[str] = mapped_column(String(8))
    attempts: Mapped[int] = mapped_column(SmallInteger)
    # The platform's last HTTP status (None: no answer, e.g. a timeout).
    http_status: Mapped[int | None] = mapped_column(SmallInteger)
    detail: Mapped[str | None] = mapped_column(String(500))
    at: Mapped[datetime]

    push: Mapped[LtiGradePush] = relationship(back_populates="sends")


class LtiScore(Base):
    """The score the platform last acknowledged for a learner: what is unchanged."""

    __tablename__ = "lti_scores"

    context_id: Mapped[int] = mapped_column(
        ForeignKey("lti_contexts.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    score: Mapped[float] = mapped_column(Float)
    acknowledged_at: Mapped[datetime]


def json_list(value: Any) -> list[str]:
    """A JSON column's list of strings (an older row may hold None)."""
    return [str(item) for item in value or []]
