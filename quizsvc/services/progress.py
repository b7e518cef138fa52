"""Progress: how well learners remember their cards and skills right now.

Retrievability comes from `scheduling.retrievability_many`, vectorized, so a
teacher's whole class (or an export) costs one query and one NumPy pass.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from quizsvc import scheduling
from quizsvc.models import (
    STATE_NEW,
    Card,
    FsrsParameters,
    ItemSkill,
    Lesson,
    SelfAssessment,
    Skill,
    User,
)
from quizsvc.services import resolve_now

# Learner pages show the recall predicted this far ahead, not "now": minutes
# after a review every card reads about 100 %, which tells nothing. A week is
# the shortest gap after which a right answer says the item was learned.
RECALL_HORIZON_DAYS = 7
RECALL_HORIZON = timedelta(days=RECALL_HORIZON_DAYS)


@dataclass(frozen=True)
class CardRetrievability:
    """Parallel arrays: one entry per started card of the learners asked about."""

    user_id: np.ndarray
    card_id: np.ndarray
    item_id: list[str]
    retrievability: np.ndarray


def card_retrievability(
    session: Session, user_ids: Iterable[int], now: datetime | None = None
) -> CardRetrievability:
    """Return the current recall probability of every started card of these users."""
    now = resolve_now(now)
    ids = sorted(set(user_ids))
    rows = (
        session.execute(
            select(
                Card.user_id, Card.id, Card.item_id, Card.stability, Card.last_review
            )
            .where(Card.user_id.in_(ids), Card.state != STATE_NEW)
            .order_by(Card.user_id, Card.id)
        ).all()
        if ids
        else []
    )
    decays = _decays(session, ids)
    user = np.array([r.user_id for r in rows], dtype=np.int64)
    stability = np.array(
        [r.stability if r.stability is not None else np.nan for r in rows], dtype=float
    )
    last = scheduling.to_datetime64(r.last_review for r in rows)
    decay = np.array(
        [decays.get(int(u), scheduling.DEFAULT_PARAMETERS[20]) for u in user],
        dtype=float,
    )
    recall = scheduling.retrievability_at(stability, last, now, decay)
    return CardRetrievability(
        user,
        np.array([r.id for r in rows], dtype=np.int64),
        [r.item_id for r in rows],
        recall,
    )


def _decays(session: Session, user_ids: list[int]) -> dict[int, float]:
    """Each learner's adopted forgetting-curve decay (latest adopted fit)."""
    if not user_ids:
        return {}
    rows = session.execute(
        select(FsrsParameters.user_id, FsrsParameters.parameters)
        .where(FsrsParameters.user_id.in_(user_ids), FsrsParameters.adopted.is_(True))
        .order_by(FsrsParameters.user_id, FsrsParameters.fitted_at, FsrsParameters.id)
    )
    # Later rows overwrite earlier ones: the latest adoption wins.
    return {user_id: scheduling.decay_of(params) for user_id, params in rows}


@dataclass(frozen=True)
class SkillProgress:
    """A skill: cards that exercise it, their mean recall now and at the
    horizon (RECALL_HORIZON from now, with no review in between), the latest
    self-rating."""

    skill_id: str
    title: dict
    cards: int
    mean_retrievability: float | None
    self_assessment: int | None
    recall_at_horizon: float | None = None


def skill_progress(
    session: Session, user: User, now: datetime | None = None
) -> list[SkillProgress]:
    """Return the learner's progress per skill, in lesson and skill order."""
    now = resolve_now(now)
    recall = card_retrievability(session, [user.id], now)
    by_item = dict(zip(recall.item_id, recall.retrievability, strict=True))
    ahead = card_retrievability(session, [user.id], now + RECALL_HORIZON)
    ahead_by_item = dict(zip(ahead.item_id, ahead.retrievability, strict=True))
    per_skill: dict[str, list[float]] = defaultdict(list)
    ahead_per_skill: dict[str, list[float]] = defaultdict(list)
    if by_item:
        for item_id, skill_id in session.execute(
            select(ItemSkill.item_id, ItemSkill.skill_id).where(
                ItemSkill.item_id.in_(list(by_item))
            )
        ):
            per_skill[skill_id].append(float(by_item[item_id]))
            ahead_per_skill[skill_id].append(float(ahead_by_item[item_id]))
    latest: dict[str, int] = {}
    for skill_id, level in session.execute(
        select(SelfAssessment.skill_id, SelfAssessment.level)
        .where(SelfAssessment.user_id == user.id)
        .order_by(SelfAssessment.assessed_at, SelfAssessment.id)
    ):
        latest[skill_id] = level
    skills = session.scalars(
        select(Skill)
        .join(Lesson, Lesson.id == Skill.lesson_id)
        .where(Skill.retired_at.is_(None))
        .order_by(Lesson.position, Skill.position)
    )
    return [
        SkillProgress(
            skill.id,
            skill.title,
            len(per_skill[skill.id]),
            float(np.mean(per_skill[skill.id])) if per_skill[skill.id] else None,
            latest.get(skill.id),
            float(np.mean(ahead_per_skill[skill.id]))
            if ahead_per_skill[skill.id]
            else None,
        )
        for skill in skills
    ]
