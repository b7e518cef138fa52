"""The database schema: SQLAlchemy 2 typed ORM models.

Every change to these classes needs an Alembic revision in `migrations/versions/`
(tests/services/test_migrations.py fails when the two drift apart).

Conventions:
- Timestamps are `UTCDateTime`: stored as UTC, returned timezone-aware in UTC; a
  naive datetime is refused rather than guessed at.
- Bilingual text is a JSON mapping `{"zh-CN": ..., "en": ...}`.
- Content synced from the question bank (lessons, skills, items) is keyed by the
  bank's stable string ids and is retired (`retired_at`), never deleted, so the
  review history that points at it stays whole.
- Reviews are an append-only log; cards hold the current FSRS state derived
  from it.
"""

from __future__ import annotations

import unicodedata
from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    ForeignKey,
    Index,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
    event,
    false,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

# Re-exported: the base, and the bank's content models, live in their own modules.
from quizsvc.models.base import (  # noqa: F401
    CLASS_ROLES,
    ITEM_TYPES,
    LANGUAGES,
    NAMING_CONVENTION,
    RATING_SOURCES,
    ROLES,
    Base,
    UTCDateTime,
    check_in,
    utcnow,
)
from quizsvc.models.content import (  # noqa: E402
    BankVersion,
    Item,
    ItemSkill,
    Lesson,
    Skill,
)

# Card states: py-fsrs's Learning / Review / Relearning, plus 0 for a card that
# exists but has never been answered (defined with the scheduling policy).
from quizsvc.scheduling import (
    STATE_LEARNING,
    STATE_NEW,
    STATE_RELEARNING,
    STATE_REVIEW,
)

# --- accounts ---------------------------------------------------------------


def username_key(username: str) -> str:
    """The form usernames are matched by: NFKC-normalized and case-folded."""
    # NFKC again after folding, as Unicode's NFKC_Casefold does: folding can
    # produce sequences that normalize further.
    folded = unicodedata.normalize("NFKC", username).casefold()
    return unicodedata.normalize("NFKC", folded)


def _username_key_default(context: Any) -> str:
    return username_key(context.get_current_parameters()["username"])


class User(Base):
    """A learner, teacher or administrator."""

    __tablename__ = "users"
    __table_args__ = (
        CheckConstraint(check_in("role", ROLES), name="role"),
        CheckConstraint(check_in("locale", LANGUAGES), name="locale"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    # As the learner typed it (shown); matched through username_key.
    username: Mapped[str] = mapped_column(String(64), unique=True)
    # None only for accounts whose key collided with an older account's when
    # revision 0005 added it: they still sign in by their exact spelling.
    username_key: Mapped[str | None] = mapped_column(
        String(64), unique=True, default=_username_key_default
    )
    display_name: Mapped[str | None] = mapped_column(String(128))
    # None: the account cannot sign in with a password (e.g. demo learners).
    password_hash: Mapped[str | None] = mapped_column(String(255))
    role: Mapped[str] = mapped_column(String(16), default="learner")
    locale: Mapped[str] = mapped_column(String(8), default="zh-CN")
    timezone: Mapped[str] = mapped_column(String(64), default="Asia/Shanghai")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    settings: Mapped[LearnerSettings | None] = relationship(
        back_populates="user", cascade="all, delete-orphan"
    )
    memberships: Mapped[list[Membership]] = relationship(
        back_populates="user", cascade="all, delete-orphan"
    )

    def __repr__(self) -> str:
        return f"<User {self.id} {self.username!r} {self.role}>"


class ApiToken(Base):
    """A personal API token; only a hash of the secret is stored."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(100))
    token_hash: Mapped[str] = mapped_column(String(128), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_used_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]

    user: Mapped[User] = relationship()


class UserSession(Base):
    """A signed-in browser or API session; ended by logout or a password change.

    The session cookie carries a random secret; only its SHA-256 is stored, so
    ending the row ends the cookie everywhere it was copied.
    """

    __tablename__ = "user_sessions"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    ended_at: Mapped[datetime | None]

    user: Mapped[User] = relationship()


class Classroom(Base):
    """A class: a group of learners and the teachers who follow them."""

    __tablename__ = "classes"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    term: Mapped[str | None] = mapped_column(String(100))
    # The class's dates (exports, dashboards) are shown in this time zone.
    timezone: Mapped[str] = mapped_column(String(64), default="Asia/Shanghai")
    join_code: Mapped[str] = mapped_column(String(16), unique=True)
    joining_open: Mapped[bool] = mapped_column(default=True)
    created_by: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL")
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    memberships: Mapped[list[Membership]] = relationship(
        back_populates="classroom", cascade="all, delete-orphan"
    )
    roster: Mapped[list[RosterEntry]] = relationship(
        back_populates="classroom", cascade="all, delete-orphan"
    )


class Membership(Base):
    """A user's place in a class, as learner or teacher.

    Leaving a class deletes the row, so the teacher's access ends at once.
    """

    __tablename__ = "memberships"
    __table_args__ = (
        UniqueConstraint("class_id", "user_id"),
        CheckConstraint(check_in("role", CLASS_ROLES), name="role"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    class_id: Mapped[int] = mapped_column(ForeignKey("classes.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    role: Mapped[str] = mapped_column(String(16), default="learner")
    # What the learner chose to show their teachers (学号 and name).
    student_number: Mapped[str | None] = mapped_column(String(64))
    display_name: Mapped[str | None] = mapped_column(String(128))
    joined_at: Mapped[datetime] = mapped_column(default=utcnow)
    # Teachers see a learner's answers from joined_at on; with this set (the
    # learner's choice), their earlier answers too.
    share_history: Mapped[bool] = mapped_column(default=False, server_default=false())
    # A teacher's: when they last marked the class's explanations read.
    explanations_read_at: Mapped[datetime | None]

    classroom: Mapped[Classroom] = relationship(back_populates="memberships")
    user: Mapped[User] = relationship(back_populates="memberships")


class RosterEntry(Base):
    """A name a teacher expects under a student number, before the learner joins."""

    __tablename__ = "roster_entries"
    __table_args__ = (UniqueConstraint("class_id", "student_number"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    class_id: Mapped[int] = mapped_column(ForeignKey("classes.id", ondelete="CASCADE"))
    student_number: Mapped[str] = mapped_column(String(64))
    name: Mapped[str] = mapped_column(String(128))

    classroom: Mapped[Classroom] = relationship(back_populates="roster")


# --- each learner's record ---------------------------------------------------


class Card(Base):
    """One learner's memory of one item: the current FSRS state."""

    __tablename__ = "cards"
    __table_args__ = (
        UniqueConstraint("user_id", "item_id"),
        CheckConstraint("state BETWEEN 0 AND 3", name="state"),
        Index(None, "user_id", "due"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    item_id: Mapped[str] = mapped_column(ForeignKey("items.id"), index=True)
    state: Mapped[int] = mapped_column(SmallInteger, default=STATE_NEW)
    # The learning or relearning step; None in the Review state.
    step: Mapped[int | None]
    stability: Mapped[float | None]
    difficulty: Mapped[float | None]
    due: Mapped[datetime]
    last_review: Mapped[datetime | None]
    reps: Mapped[int] = mapped_column(default=0)
    lapses: Mapped[int] = mapped_column(default=0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)

    item: Mapped[Item] = relationship()


class Review(Base):
    """One answer, as it happened: the append-only review log."""

    __tablename__ = "reviews"
    __table_args__ = (
        # A retried request carries the same key and must not store twice.
        UniqueConstraint("user_id", "idempotency_key"),
        CheckConstraint("rating BETWEEN 1 AND 4", name="rating"),
        CheckConstraint(
            check_in("rating_source", RATING_SOURCES), name="rating_source"
        ),
        CheckConstraint("score IS NULL OR (score >= 0 AND score <= 1)", name="score"),
        CheckConstraint("duration_ms IS NULL OR duration_ms >= 0", name="duration"),
        Index(None, "user_id", "reviewed_at"),
        Index(None, "card_id", "reviewed_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    item_id: Mapped[str] = mapped_column(ForeignKey("items.id"), index=True)
    card_id: Mapped[int] = mapped_column(ForeignKey("cards.id", ondelete="CASCADE"))
    reviewed_at: Mapped[datetime]
    rating: Mapped[int] = mapped_column(SmallInteger)
    # "graded": derived from an auto-graded answer; "learner": self-rated recall.
    rating_source: Mapped[str] = mapped_column(String(8))
    correct: Mapped[bool]
    score: Mapped[float | None]
    duration_ms: Mapped[int | None]
    answer_text: Mapped[str | None] = mapped_column(Text)
    hint_used: Mapped[bool] = mapped_column(default=False)
    problem_kind: Mapped[str | None] = mapped_column(String(64))
    problem_seed: Mapped[int | None] = mapped_column(BigInteger)
    problem_level: Mapped[int | None] = mapped_column(SmallInteger)
    misconception: Mapped[str | None] = mapped_column(String(64))
    idempotency_key: Mapped[str | None] = mapped_column(String(128))
    # What the scheduler decided, so a retried request can be answered with the
    # first result and exports show the schedule as it was.
    state_before: Mapped[int] = mapped_column(SmallInteger)
    state_after: Mapped[int] = mapped_column(SmallInteger)
    stability_after: Mapped[float | None]
    difficulty_after: Mapped[float | None]
    due_after: Mapped[datetime]
    # The verdict the learner was shown, so a retry is answered with the same body.
    verdict: Mapped[dict[str, Any] | None]

    item: Mapped[Item] = relationship()
    explanation: Mapped[Explanation | None] = relationship(back_populates="review")


@event.listens_for(Review, "before_update")
def _reviews_are_append_only(_mapper: Any, _connection: Any, review: Review) -> None:
    raise ValueError(f"review {review.id} is part of the append-only log")


class Explanation(Base):
    """What a learner wrote about a wrong closed-book answer."""

    __tablename__ = "explanations"

    id: Mapped[int] = mapped_column(primary_key=True)
    review_id: Mapped[int] = mapped_column(
        ForeignKey("reviews.id", ondelete="CASCADE"), unique=True
    )
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    body: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)

    review: Mapped[Review] = relationship(back_populates="explanation")


class SelfAssessment(Base):
    """A learner's own rating of a skill at one moment (a history, not a state)."""

    __tablename__ = "self_assessments"
    __table_args__ = (
        CheckConstraint("level BETWEEN 0 AND 3", name="level"),
        Index(None, "user_id", "skill_id", "assessed_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    skill_id: Mapped[str] = mapped_column(ForeignKey("skills.id"), index=True)
    level: Mapped[int] = mapped_column(SmallInteger)
    note: Mapped[str | None] = mapped_column(Text)
    assessed_at: Mapped[datetime]


class LearnerSettings(Base):
    """How a learner's daily queue is built and scheduled."""

    __tablename__ = "learner_settings"
    __table_args__ = (
        CheckConstraint(
            "desired_retention >= 0.7 AND desired_retention <= 0.99",
            name="desired_retention",
        ),
        CheckConstraint("new_per_day >= 0", name="new_per_day"),
        CheckConstraint("reviews_per_day >= 0", name="reviews_per_day"),
        CheckConstraint("rollover_hour BETWEEN 0 AND 23", name="rollover_hour"),
        CheckConstraint(check_in("language", LANGUAGES), name="language"),
    )

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    desired_retention: Mapped[float] = mapped_column(default=0.9)
    new_per_day: Mapped[int] = mapped_column(default=10)
    reviews_per_day: Mapped[int] = mapped_column(default=100)
    # The learner's day starts at this local hour (like Anki's "next day starts at").
    rollover_hour: Mapped[int] = mapped_column(default=4)
    # The time zone the queue uses; starts as the user's profile time zone.
    timezone: Mapped[str] = mapped_column(String(64))
    # Recall items offer Pass/Fail (Good/Again) instead of four buttons.
    two_button_mode: Mapped[bool] = mapped_column(default=False)
    language: Mapped[str] = mapped_column(String(8), default="zh-CN")
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)

    user: Mapped[User] = relationship(back_populates="settings")


class FsrsParameters(Base):
    """FSRS parameters fitted for one learner, adopted or not (a history)."""

    __tablename__ = "fsrs_parameters"
    __table_args__ = (Index(None, "user_id", "fitted_at"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    # Empty for an attempt that was not adopted (nothing was fitted to keep).
    parameters: Mapped[list[float]] = mapped_column(JSON)
    fitted_at: Mapped[datetime]
    # How many of the learner's reviews the fit saw.
    review_count: Mapped[int]
    # Log loss of the defaults and of the candidate on the learner's reviews,
    # each week predicted from the weeks before it (rolling evaluation; the
    # latest fifth of reviews in rows older than revision 0009).
    log_loss_current: Mapped[float | None]
    log_loss_fitted: Mapped[float | None]
    adopted: Mapped[bool]
    # Which procedure this is (`fit_seeds`, `blend_0.5`, `class_prior`, …; see
    # quizsvc.scheduling.comparison), what it was blended toward (`default` or
    # `class_prior`), the 95% interval of its rolling log loss minus the
    # defaults', and why it was or was not adopted. Empty for older rows.
    method: Mapped[str | None] = mapped_column(String(32))
    blend_target: Mapped[str | None] = mapped_column(String(16))
    delta_log_loss_low: Mapped[float | None]
    delta_log_loss_high: Mapped[float | None]
    reason: Mapped[str | None] = mapped_column(Text)


class ClassParameters(Base):
    """FSRS parameters pooled over a class's shared histories (a history; the
    latest is the class prior)."""

    __tablename__ = "class_parameters"
    __table_args__ = (Index(None, "class_id", "fitted_at"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    class_id: Mapped[int] = mapped_column(ForeignKey("classes.id", ondelete="CASCADE"))
    parameters: Mapped[list[float]] = mapped_column(JSON)
    fitted_at: Mapped[datetime]
    # How many reviews, of how many learners, the pooled fit saw.
    review_count: Mapped[int]
    learner_count: Mapped[int]


class OpenItem(Base):
    """The item a learner has open in a drill (for the closed-book rule)."""

    __tablename__ = "open_items"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    item_id: Mapped[str] = mapped_column(ForeignKey("items.id"), index=True)
    opened_at: Mapped[datetime]
    # For a generated item: which problem was shown, so it can be graded.
    problem_kind: Mapped[str | None] = mapped_column(String(64))
    problem_seed: Mapped[int | None] = mapped_column(BigInteger)
    problem_level: Mapped[int | None] = mapped_column(SmallInteger)
    # Where the item stands in the learner's day when it was opened: the
    # position (answers given today + 1; None when opened before revision
    # 0011 for a learning-step repeat), the answers planned for today, and
    # whether it repeats an item answered earlier today (a learning step), so
    # showing the open item needs no queue.
    day_position: Mapped[int | None]
    day_total: Mapped[int | None]
    day_repeat: Mapped[bool | None]
    # A choice item's option ids in the order this presentation shows them,
    # drawn anew each time it is opened (so a repeat cannot be answered by
    # position); the answer's stored verdict keeps it for replays and results.
    option_order: Mapped[list[str] | None] = mapped_column(JSON)


__all__ = [
    "STATE_LEARNING",
    "STATE_NEW",
    "STATE_RELEARNING",
    "STATE_REVIEW",
    "ApiToken",
    "BankVersion",
    "Base",
    "Card",
    "Classroom",
    "Explanation",
    "FsrsParameters",
    "Item",
    "ItemSkill",
    "LearnerSettings",
    "Lesson",
    "Membership",
    "OpenItem",
    "ResetCode",
    "Review",
    "SelfAssessment",
    "Skill",
    "User",
    "UTCDateTime",
    "utcnow",
]

# The LTI tables have a module of their own; importing it here puts them in
# Base.metadata wherever the schema is needed (migrations, tests).
from quizsvc.models import lti as _lti_tables  # noqa: E402, F401
from quizsvc.models.accounts import ResetCode  # noqa: E402
