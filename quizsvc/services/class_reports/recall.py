"""Predicted recall of a class's cards at a moment, and its learners × skills heatmap.

Pages show recall RECALL_HORIZON_DAYS ahead (services.progress): minutes after a
review, recall "now" is close to 1 whatever was learned, which reads as mastery.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from datetime import datetime

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
    Skill,
)
from quizsvc.services.class_reports.common import class_learner_ids, epoch_seconds

_NO_TIME = np.iinfo(np.int64).min  # NumPy's NaT


@dataclass(frozen=True)
class CardRecall:
    """Parallel arrays, one entry per started card of a class's learners.

    `recall` is the predicted recall at the moment asked for; `at` gives the
    same cards at another moment without reading them again.
    """

    user_id: np.ndarray
    item_id: np.ndarray
    recall: np.ndarray
    stability: np.ndarray
    last_review: np.ndarray  # datetime64[us], NaT for none
    decay: np.ndarray

    def at(self, moment: datetime) -> CardRecall:
        """The same cards' predicted recall at `moment`."""
        recall = scheduling.retrievability_at(
            self.stability, self.last_review, moment, self.decay
        )
        return replace(self, recall=recall)


def class_recall(session: Session, class_id: int, at: datetime) -> CardRecall:
    """Predicted recall at `at` of every started card of the class's learners.

    The same FSRS forgetting curve as `services.progress.card_retrievability`
    (each learner's adopted decay), but read as integers and strings only, so
    a class's tens of thousands of cards cost one light query.
    """
    rows = session.execute(
        select(
            Card.user_id,
            Card.item_id,
            Card.stability,
            epoch_seconds(Card.last_review),
        ).where(Card.user_id.in_(class_learner_ids(class_id)), Card.state != STATE_NEW)
    ).all()
    decays: dict[int, float] = {}
    for user_id, parameters in session.execute(
        select(FsrsParameters.user_id, FsrsParameters.parameters)
        .where(
            FsrsParameters.user_id.in_(class_learner_ids(class_id)),
            FsrsParameters.adopted.is_(True),
        )
        .order_by(FsrsParameters.fitted_at, FsrsParameters.id)
    ):
        decays[user_id] = scheduling.decay_of(parameters)  # the latest one wins
    users = np.array([row[0] for row in rows], dtype=np.int64)
    stability = np.array(
        [np.nan if row[2] is None else row[2] for row in rows], dtype=float
    )
    seconds = np.array(
        [_NO_TIME if row[3] is None else row[3] for row in rows], dtype=np.int64
    )
    last = np.where(seconds == _NO_TIME, _NO_TIME, seconds * 1_000_000)
    default = scheduling.DEFAULT_PARAMETERS[20]
    decay = np.array([decays.get(int(u), default) for u in users], dtype=float)
    last_review = last.view("datetime64[us]")
    recall = scheduling.retrievability_at(stability, last_review, at, decay)
    return CardRecall(
        users,
        np.array([row[1] for row in rows], dtype=object),
        recall,
        stability,
        last_review,
        decay,
    )


@dataclass(frozen=True)
class SkillHeatmap:
    """Mean predicted recall per learner (rows) and skill (columns); NaN = no card."""

    user_ids: tuple[int, ...]
    skills: tuple[Skill, ...]
    recall: np.ndarray
    cards: np.ndarray


def skills_in_order(session: Session) -> list[Skill]:
    """The bank's live skills in lesson and skill order."""
    return list(
        session.scalars(
            select(Skill)
            .join(Lesson, Lesson.id == Skill.lesson_id)
            .where(Skill.retired_at.is_(None))
            .order_by(Lesson.position, Skill.position)
        )
    )


def skill_heatmap(
    session: Session, user_ids: list[int], cards: CardRecall
) -> SkillHeatmap:
    """Mean predicted recall of each learner's cards, per skill they exercise."""
    skills = skills_in_order(session)
    column = {skill.id: j for j, skill in enumerate(skills)}
    row = {user_id: i for i, user_id in enumerate(user_ids)}
    items = {item_id: k for k, item_id in enumerate(dict.fromkeys(cards.item_id))}
    # links[k, slot]: the skill columns item k exercises (-1 fills the slots).
    per_item: dict[int, list[int]] = defaultdict(list)
    if items:
        for item_id, skill_id in session.execute(
            select(ItemSkill.item_id, ItemSkill.skill_id).where(
                ItemSkill.item_id.in_(list(items))
            )
        ):
            if skill_id in column:
                per_item[items[item_id]].append(column[skill_id])
    slots = max((len(c) for c in per_item.values()), default=0)
    links = np.full((len(items), slots), -1, dtype=np.int64)
    for k, columns in per_item.items():
        links[k, : len(columns)] = columns
    item_index = np.array([items[i] for i in cards.item_id], dtype=np.int64)
    row_index = np.array([row[int(u)] for u in cards.user_id], dtype=np.int64)
    size = len(user_ids) * len(skills)
    counts = np.zeros(size)
    sums = np.zeros(size)
    for slot in range(slots):
        skill_column = links[item_index, slot]
        keep = skill_column >= 0
        cell = row_index[keep] * len(skills) + skill_column[keep]
        counts += np.bincount(cell, minlength=size)
        sums += np.bincount(cell, weights=cards.recall[keep], minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    shape = (len(user_ids), len(skills))
    return SkillHeatmap(
        tuple(user_ids),
        tuple(skills),
        means.reshape(shape),
        counts.reshape(shape).astype(np.int64),
    )
