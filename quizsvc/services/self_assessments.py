"""Self-assessments: a learner rates themselves on a skill; every rating is kept."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.orm import Session

from quizsvc.models import SelfAssessment, Skill, User
from quizsvc.services import resolve_now
from quizsvc.services.errors import N_, InvalidInput, NotFound

MAX_NOTE_CHARS = 2_000


def record_self_assessment(
    session: Session,
    user: User,
    skill_id: str,
    level: int,
    *,
    note: str | None = None,
    now: datetime | None = None,
) -> SelfAssessment:
    """Append a self-assessment of a skill (level 0-3, quizsvc.bank's scale)."""
    if not _is_int(level) or not 0 <= level <= 3:
        raise InvalidInput(N_("The level must be 0, 1, 2 or 3."), field="level")
    if session.get(Skill, skill_id) is None:
        raise NotFound(
            N_("There is no skill '%(skill)s'."), field="skill_id", skill=skill_id
        )
    note = (note or "").strip() or None
    if note is not None and len(note) > MAX_NOTE_CHARS:
        raise InvalidInput(
            N_("Keep the note under %(n)d characters."), field="note", n=MAX_NOTE_CHARS
        )
    assessment = SelfAssessment(
        user_id=user.id,
        skill_id=skill_id,
        level=level,
        note=note,
        assessed_at=resolve_now(now),
    )
    session.add(assessment)
    session.flush()
    return assessment


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
