"""The synced bank as each worker keeps it: read once, re-read after a sync.

Every drill step needs the bank's lessons and items (their order, primary
skill and lesson) to plan the learner's day. They change
only when `quizsvc questions sync` (or anything else) writes lessons, skills,
items or their skill links, and every such write changes the token of the
one-row `bank_version` table in the same transaction (see `_note_bank_writes`).
So a request reads that token once, and the process re-reads the bank only
when it differs from the token its copy was read under.

Copies are kept per database (by URL); without a token row (a schema made by
`create_all`, not the migrations) nothing is kept and every call reads afresh.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, event, select, update
from sqlalchemy.orm import Session

from quizsvc.db.transactions import phase_cache
from quizsvc.models import BankVersion, Item, ItemSkill, Lesson, Skill, utcnow

_BANK_TABLES = (Lesson, Skill, Item, ItemSkill)


@dataclass(frozen=True)
class BankItem:
    """What the queue needs of an item (not retired)."""

    id: str
    lesson_id: str
    type: str
    position: int
    skill_id: str | None
    skill_position: int | None


@dataclass(frozen=True)
class BankSnapshot:
    """The bank's live lessons and items as one worker read them."""

    token: int | None
    # (id, position, prerequisites) of each lesson not retired.
    lessons: tuple[tuple[str, int, tuple[str, ...]], ...]
    # Every item not retired, by id.
    items: dict[str, BankItem]
    # Those of lessons not retired, in bank order: (position, id).
    ordered: tuple[BankItem, ...]


_TOKEN = select(BankVersion.token).where(BankVersion.id == 1)
_LESSONS = select(Lesson.id, Lesson.position, Lesson.prerequisites).where(
    Lesson.retired_at.is_(None)
)
_ITEMS = (
    select(
        Item.id,
        Item.lesson_id,
        Item.type,
        Item.position,
        ItemSkill.skill_id,
        Skill.position.label("skill_position"),
    )
    .outerjoin(ItemSkill, and_(ItemSkill.item_id == Item.id, ItemSkill.position == 0))
    .outerjoin(Skill, Skill.id == ItemSkill.skill_id)
    .where(Item.retired_at.is_(None))
)

# The phase cache entry holding the snapshot this transaction reads.
_SNAPSHOT_CACHE = "bank_snapshot"
_SNAPSHOTS: dict[str, BankSnapshot] = {}
_GUARD = threading.Lock()


def bank_snapshot(session: Session) -> BankSnapshot:
    """The bank as of this transaction: one token read, the rows only if new."""
    known = phase_cache(session, _SNAPSHOT_CACHE)
    snapshot = known.get("snapshot")
    if snapshot is not None:
        return snapshot
    token = session.scalar(_TOKEN)
    key = session.get_bind().url.render_as_string(hide_password=True)
    with _GUARD:
        snapshot = _SNAPSHOTS.get(key)
    if token is None or snapshot is None or snapshot.token != token:
        snapshot = _read(session, token)
        if token is not None:
            with _GUARD:
                _SNAPSHOTS[key] = snapshot
    known["snapshot"] = snapshot
    return snapshot


def _read(session: Session, token: int | None) -> BankSnapshot:
    lessons = tuple(
        (row.id, row.position, tuple(row.prerequisites or ()))
        for row in session.execute(_LESSONS)
    )
    live_lessons = {lesson[0] for lesson in lessons}
    rows = sorted(session.execute(_ITEMS), key=lambda r: (r.position, r.id))
    items = {
        r.id: BankItem(
            r.id, r.lesson_id, r.type, r.position, r.skill_id, r.skill_position
        )
        for r in rows
    }
    return BankSnapshot(
        token=token,
        lessons=lessons,
        items=items,
        # New items come only from lessons still in the bank.
        ordered=tuple(items[r.id] for r in rows if r.lesson_id in live_lessons),
    )


@event.listens_for(Session, "before_flush")
def _note_bank_writes(session: Session, _context: Any, _instances: Any) -> None:
    """Give the bank a new token in any transaction that writes its rows."""
    changed = any(isinstance(o, _BANK_TABLES) for o in session.new) or any(
        isinstance(o, _BANK_TABLES) for o in session.deleted
    )
    if not changed:
        changed = any(
            isinstance(o, _BANK_TABLES) and session.is_modified(o)
            for o in session.dirty
        )
    if changed:
        session.execute(
            update(BankVersion)
            .where(BankVersion.id == 1)
            .values(token=secrets.randbits(62), changed_at=utcnow())
        )
        # A snapshot this transaction read before the write is old now.
        session.info.pop(_SNAPSHOT_CACHE, None)
