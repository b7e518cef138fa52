"""Account recovery: one-time password reset codes a teacher hands a learner.

Only the SHA-256 of a code is stored (like sessions and API tokens), so a copy
of the database holds no working code.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column, relationship

from quizsvc.models import Base, User, utcnow


class ResetCode(Base):
    """A one-time code that lets `user` choose a new password until `expires_at`."""

    __tablename__ = "reset_codes"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    code_hash: Mapped[str] = mapped_column(String(64), unique=True)
    # Who issued it and for which class: kept for the record, and lost (NULL)
    # rather than the code when the teacher's account or the class goes.
    issued_by: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL")
    )
    class_id: Mapped[int | None] = mapped_column(
        ForeignKey("classes.id", ondelete="SET NULL")
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]
    # Set when used, or when a newer code for the same learner replaces it.
    used_at: Mapped[datetime | None]

    user: Mapped[User] = relationship(foreign_keys=[user_id])
