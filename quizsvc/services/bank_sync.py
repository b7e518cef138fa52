"""Load the question bank into the database: `sync_bank(session, bank)`.

Lessons, skills and items are matched by the bank's stable ids. A new id is
added; a changed one (its content hash or its place in the bank) is updated; an
id that left the bank is retired, never deleted, so reviews that point at it
keep their meaning; an id that comes back is restored. Syncing the same bank
twice changes nothing the second time. A sync that changes anything gives the
bank a new version token (quizsvc.services.bank_cache), so running workers
re-read it on their next request.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from quizsvc.models import Item, ItemSkill, Lesson, Skill

# Imported for its flush hook: any write to the bank's rows (this sync's
# among them) gives the bank a new version token, so workers re-read it.
from quizsvc.services import (
    bank_cache,  # noqa: F401
    resolve_now,
)

if TYPE_CHECKING:
    from quizsvc.bank import Bank

KINDS = ("lessons", "skills", "items")


@dataclass(frozen=True)
class SyncReport:
    """What a sync did, by kind ("lessons", "skills", "items")."""

    added: dict[str, list[str]] = field(default_factory=lambda: _by_kind())
    updated: dict[str, list[str]] = field(default_factory=lambda: _by_kind())
    retired: dict[str, list[str]] = field(default_factory=lambda: _by_kind())
    restored: dict[str, list[str]] = field(default_factory=lambda: _by_kind())
    unchanged: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))

    @property
    def changed(self) -> bool:
        """Whether the sync wrote anything."""
        return any(
            ids
            for report in (self.added, self.updated, self.retired, self.restored)
            for ids in report.values()
        )

    def lines(self) -> list[str]:
        """One human-readable line per kind."""
        return [
            f"{kind}: {len(self.added[kind])} added, {len(self.updated[kind])} "
            f"updated, {len(self.retired[kind])} retired, "
            f"{len(self.restored[kind])} restored, {self.unchanged[kind]} unchanged"
            for kind in KINDS
        ]


def _by_kind() -> dict[str, list[str]]:
    return {kind: [] for kind in KINDS}


def _digest(fields: dict[str, Any]) -> str:
    text = json.dumps(fields, sort_keys=True, ensure_ascii=False, default=list)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sync_bank(
    session: Session, bank: Bank, *, now: datetime | None = None
) -> SyncReport:
    """Make the database's lessons, skills and items match the bank."""
    now = resolve_now(now)
    report = SyncReport()
    _sync_lessons(session, bank, now, report)
    _sync_skills(session, bank, now, report)
    _sync_items(session, bank, now, report)
    session.flush()
    return report


def _note(report: SyncReport, kind: str, row: Any, ident: str, changed: bool) -> None:
    restored = row.retired_at is not None
    if restored:
        row.retired_at = None
        report.restored[kind].append(ident)
    if changed:
        report.updated[kind].append(ident)
    elif not restored:
        report.unchanged[kind] += 1


def _retire(
    report: SyncReport, kind: str, rows: dict[str, Any], keep: Any, now: datetime
) -> None:
    for ident, row in rows.items():
        if ident not in keep and row.retired_at is None:
            row.retired_at = now
            report.retired[kind].append(ident)


def _upsert(
    session: Session,
    model: type[Lesson] | type[Skill],
    kind: str,
    wanted: dict[str, dict[str, Any]],
    now: datetime,
    report: SyncReport,
) -> None:
    """Add, update in place, or retire rows of `model` to match `wanted` by id."""
    rows = {row.id: row for row in session.scalars(select(model))}
    for ident, values in wanted.items():
        digest = _digest(values)
        row = rows.get(ident)
        if row is None:
            session.add(model(id=ident, content_hash=digest, synced_at=now, **values))
            report.added[kind].append(ident)
            continue
        changed = row.content_hash != digest
        if changed:
            for name, value in values.items():
                setattr(row, name, value)
            row.content_hash, row.synced_at = digest, now
        _note(report, kind, row, ident, changed)
    _retire(report, kind, rows, wanted, now)
    session.flush()


def _sync_lessons(session: Session, bank: Bank, now: datetime, report: SyncReport):
    wanted = {
        lesson.id: {
            "number": lesson.number,
            "title": dict(lesson.title),
            "summary": dict(lesson.summary),
            "prerequisites": list(lesson.prerequisites),
            "position": position,
        }
        for position, lesson in enumerate(bank.lessons.values())
    }
    _upsert(session, Lesson, "lessons", wanted, now, report)


def _sync_skills(session: Session, bank: Bank, now: datetime, report: SyncReport):
    wanted = {
        skill.id: {
            "lesson_id": skill.lesson_id,
            "position": skill.order,
            "title": dict(skill.title),
            "can_do": dict(skill.can_do),
        }
        for skill in bank.skills.values()
    }
    _upsert(session, Skill, "skills", wanted, now, report)


def _sync_items(session: Session, bank: Bank, now: datetime, report: SyncReport):
    rows = {
        row.id: row
        for row in session.scalars(select(Item).options(selectinload(Item.skill_links)))
    }
    for position, question in enumerate(bank.questions.values()):
        row = rows.get(question.id)
        if row is None:
            row = Item(id=question.id, created_at=now)
            session.add(row)
            report.added["items"].append(question.id)
            _fill_item(row, question, position, now)
            continue
        changed = row.content_hash != question.content_hash or row.position != position
        if changed:
            _fill_item(row, question, position, now)
        _note(report, "items", row, question.id, changed)
    _retire(report, "items", rows, bank.questions, now)


def _fill_item(row: Item, question: Any, position: int, now: datetime) -> None:
    row.lesson_id = question.lesson_id
    row.type = question.type
    row.difficulty = question.difficulty
    row.position = position
    row.content = question.to_dict()
    row.content_hash = question.content_hash
    row.updated_at = now
    # Update links in place: deleting and re-adding one (item, skill) pair in a
    # single flush would collide on its primary key.
    wanted = list(dict.fromkeys(question.skills))
    links = {link.skill_id: link for link in row.skill_links}
    for skill_id in set(links) - set(wanted):
        row.skill_links.remove(links[skill_id])
    for index, skill_id in enumerate(wanted):
        if skill_id in links:
            links[skill_id].position = index
        else:
            row.skill_links.append(ItemSkill(skill_id=skill_id, position=index))
