"""Content synced from the question bank: lessons, skills, items and which
skills an item exercises. Keyed by the bank's stable ids; retired, never
deleted, so the reviews that point at it keep their meaning."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, CheckConstraint, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column, relationship

from quizsvc.models.base import ITEM_TYPES, Base, check_in


class Lesson(Base):
    """A lesson of the bank, with the lessons it builds on."""

    __tablename__ = "lessons"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    number: Mapped[int]
    title: Mapped[dict[str, Any]]
    summary: Mapped[dict[str, Any]]
    # Lesson ids; a prerequisite missing from the bank cannot be checked and
    # is ignored by the queue.
    prerequisites: Mapped[list[str]] = mapped_column(JSON)
    position: Mapped[int]
    content_hash: Mapped[str] = mapped_column(String(64))
    synced_at: Mapped[datetime]
    retired_at: Mapped[datetime | None]


class Skill(Base):
    """One thing a learner can do, in its order within the lesson."""

    __tablename__ = "skills"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    lesson_id: Mapped[str] = mapped_column(ForeignKey("lessons.id"), index=True)
    position: Mapped[int]
    title: Mapped[dict[str, Any]]
    can_do: Mapped[dict[str, Any]]
    content_hash: Mapped[str] = mapped_column(String(64))
    synced_at: Mapped[datetime]
    retired_at: Mapped[datetime | None]


class Item(Base):
    """A bank question (or generated-problem template) that learners review."""

    __tablename__ = "items"
    __table_args__ = (CheckConstraint(check_in("type", ITEM_TYPES), name="type"),)

    id: Mapped[str] = mapped_column(String(128), primary_key=True)
    lesson_id: Mapped[str] = mapped_column(ForeignKey("lessons.id"), index=True)
    type: Mapped[str] = mapped_column(String(16))
    difficulty: Mapped[int | None]
    # The question's order in the bank: new items are introduced in it.
    position: Mapped[int]
    # Everything the bank knows about the question (Question.to_dict()).
    content: Mapped[dict[str, Any]]
    content_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    retired_at: Mapped[datetime | None]

    skill_links: Mapped[list[ItemSkill]] = relationship(
        back_populates="item",
        cascade="all, delete-orphan",
        order_by="ItemSkill.position",
    )

    @property
    def skill_ids(self) -> list[str]:
        """The item's skills, the primary one first."""
        return [link.skill_id for link in self.skill_links]


class ItemSkill(Base):
    """Which skills an item exercises; position 0 is its primary skill."""

    __tablename__ = "item_skills"

    item_id: Mapped[str] = mapped_column(
        ForeignKey("items.id", ondelete="CASCADE"), primary_key=True
    )
    skill_id: Mapped[str] = mapped_column(
        ForeignKey("skills.id"), primary_key=True, index=True
    )
    position: Mapped[int]

    item: Mapped[Item] = relationship(back_populates="skill_links")


class BankVersion(Base):
    """One row: a token that changes whenever the synced bank content changes.

    Workers keep the bank's rows and parsed questions in memory and read only
    this row per request to know whether theirs are still current.
    """

    __tablename__ = "bank_version"

    id: Mapped[int] = mapped_column(primary_key=True)
    # Random (not a counter), so two databases never share a token by chance.
    token: Mapped[int] = mapped_column(BigInteger)
    changed_at: Mapped[datetime]
