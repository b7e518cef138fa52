"""The queries every class export shares: its learners, its items, its reviews.

Rows are streamed (a server-side cursor, a batch at a time), so a million
reviews never sit in memory at once; they come only when iterated, from the
session given, which must stay open until then.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import DateTime, Select, case, func, select, type_coerce
from sqlalchemy.orm import Session

from quizsvc import item_types
from quizsvc.bank import Question
from quizsvc.models import (
    Classroom,
    Explanation,
    Item,
    ItemSkill,
    Membership,
    Review,
    SelfAssessment,
    User,
)
from quizsvc.services.sharing import (
    answer_for_teachers,
    review_shared,
    shared_since,
)

YIELD_PER = 2000
Bounds = tuple[datetime | None, datetime | None]


@dataclass(frozen=True)
class ItemInfo:
    """What an export says of an item besides its id."""

    type: str
    skills: str
    lesson_id: str
    prompt: dict[str, str] | None


def items(session: Session) -> dict[str, ItemInfo]:
    """Return every item (retired ones too: old reviews point at them)."""
    skills: dict[str, list[str]] = defaultdict(list)
    for item_id, skill_id in session.execute(
        select(ItemSkill.item_id, ItemSkill.skill_id).order_by(
            ItemSkill.item_id, ItemSkill.position
        )
    ):
        skills[item_id].append(skill_id)
    return {
        item_id: ItemInfo(
            item_type, ";".join(skills[item_id]), lesson_id, content.get("prompt")
        )
        for item_id, item_type, lesson_id, content in session.execute(
            select(Item.id, Item.type, Item.lesson_id, Item.content)
        )
    }


def readable_answers(session: Session) -> Callable[[str, str | None], Any]:
    """Return how an answer to an item reads to people, in both languages:
    (item id, answer as stored) -> {"zh-CN": …, "en": …}, None for no answer.

    Through the item-type registry: option texts, step texts in order,
    matrices as [[…],[…]] rows of plain numbers. Answers repeat (the same
    option, the same blank), so each is worked out once.
    """
    questions = {
        item_id: Question.from_dict(content)
        for item_id, content in session.execute(select(Item.id, Item.content))
    }

    @lru_cache(maxsize=4096)
    def readable(item_id: str, text: str | None) -> dict[str, str] | None:
        if text is None:
            return None
        question = questions.get(item_id)
        return {
            lang: item_types.readable_answer(question, text, lang)
            for lang in ("zh-CN", "en")
        }

    return readable


def class_learners(classroom: Classroom):
    """Return the class's learners (not its teachers) as a subquery.

    The name is the one the learner gave the class, else their account's.
    """
    return (
        select(
            Membership.user_id,
            Membership.student_number,
            func.coalesce(Membership.display_name, User.display_name).label(
                "display_name"
            ),
            Membership.joined_at,
            Membership.share_history,
        )
        .join(User, User.id == Membership.user_id)
        .where(Membership.class_id == classroom.id, Membership.role == "learner")
        .subquery("learners")
    )


def learner_count(session: Session, classroom: Classroom) -> int:
    """Return how many learners the class has."""
    return session.scalar(select(func.count()).select_from(class_learners(classroom)))


def in_range(query: Select, bounds: Bounds) -> Select:
    """Keep the reviews of `query` that fall in [start, end)."""
    start, end = bounds
    if start is not None:
        query = query.where(Review.reviewed_at >= start)
    if end is not None:
        query = query.where(Review.reviewed_at < end)
    return query


def count(session: Session, query: Select) -> int:
    """Return how many rows a query returns."""
    return session.scalar(
        select(func.count()).select_from(query.order_by(None).subquery())
    )


def reviews_query(learners: Any, bounds: Bounds, *, own: bool = False) -> Select:
    """Select the reviews of the learners in `learners`, oldest first per learner.

    For a class (`own` False), `learners` is `class_learners`: only the answers
    each learner shares with the class, and no recall self-notes
    (quizsvc.services.sharing). A learner's `own` export has everything.
    Ordered by learner, then time: the (user_id, reviewed_at) index gives that
    order without sorting.
    """
    query = (
        select(
            Review.id,
            Review.user_id,
            learners.c.student_number,
            learners.c.display_name,
            User.username,
            Review.item_id,
            # Plain DateTime: the UTC offset is added in review_rows, faster
            # than UTCDateTime's per-value hook.
            type_coerce(Review.reviewed_at, DateTime(timezone=True)),
            Review.rating,
            Review.correct,
            Review.score,
            Review.duration_ms,
            Review.answer_text if own else answer_for_teachers(),
            Review.misconception,
            Review.problem_kind,
            Review.problem_seed,
            Review.problem_level,
            Explanation.body,
        )
        .join(learners, learners.c.user_id == Review.user_id)
        .join(User, User.id == Review.user_id)
        .outerjoin(Explanation, Explanation.review_id == Review.id)
        .order_by(learners.c.user_id, Review.reviewed_at, Review.id)
    )
    if not own:
        query = query.where(shared_since(learners, Review.reviewed_at))
    return in_range(query, bounds)


def count_reviews(session: Session, classroom: Classroom, bounds: Bounds) -> int:
    """Return how many reviews of the class's learners fall in the bounds.

    An index's count, without the rows' joins.
    """
    learners = select(class_learners(classroom).c.user_id)
    query = select(func.count()).select_from(Review)
    query = query.where(Review.user_id.in_(learners), review_shared(classroom.id))
    return session.scalar(in_range(query, bounds))


def streamed(session: Session, query: Select) -> Iterator[tuple]:
    """Run a query with a server-side cursor; yield its rows a batch at a time.

    Core rows straight from the connection: the ORM's row handling would cost
    more than everything else an exported row needs. The cursor is closed
    when the rows run out or the reader stops early.
    """
    with session.connection().execute(
        query.execution_options(yield_per=YIELD_PER)
    ) as result:
        for batch in result.partitions(YIELD_PER):
            yield from batch


def review_rows(
    session: Session, query: Select, zone: ZoneInfo, base: str
) -> Iterator[tuple]:
    """Yield the reviews export's rows (see REVIEW_COLUMNS) of a `reviews_query`."""
    known = {
        item_id: (info.type, info.skills, info.lesson_id)
        for item_id, info in items(session).items()
    }
    readable = readable_answers(session)
    for (review_id, user_id, number, name, username, item_id, moment, rating,
         correct, score, duration, answer, misconception, kind, seed, level,
         explanation) in streamed(session, query):  # fmt: skip
        if moment.tzinfo is None:  # SQLite: stored as UTC without an offset
            moment = moment.replace(tzinfo=UTC)
        item_type, skills, lesson_id = known[item_id]
        yield (
            review_id, user_id, number, name, username, item_id, item_type,
            skills, lesson_id, moment, moment.astimezone(zone), rating,
            correct, score, duration, readable(item_id, answer), answer,
            misconception, kind, seed, level,
            f"{base}practice/{kind}/{level}/{seed}" if kind else None,
            explanation,
        )  # fmt: skip


def accuracy_by_skill(
    session: Session, classroom: Classroom, start: datetime, end: datetime
) -> dict[tuple[int, str], float]:
    """Return the share of right answers per learner and skill in [start, end)."""
    learners = class_learners(classroom)
    rows = session.execute(
        select(
            Review.user_id,
            ItemSkill.skill_id,
            func.count(),
            func.sum(case((Review.correct, 1), else_=0)),
        )
        .join(learners, learners.c.user_id == Review.user_id)
        .join(ItemSkill, ItemSkill.item_id == Review.item_id)
        .where(
            Review.reviewed_at >= start,
            Review.reviewed_at < end,
            shared_since(learners, Review.reviewed_at),
        )
        .group_by(Review.user_id, ItemSkill.skill_id)
    )
    return {(user, skill): right / total for user, skill, total, right in rows}


def latest_self_ratings(
    session: Session, classroom: Classroom
) -> dict[tuple[int, str], int]:
    """Return each learner's latest self-rating per skill."""
    learners = class_learners(classroom)
    latest = {}
    for user_id, skill_id, level in session.execute(
        select(SelfAssessment.user_id, SelfAssessment.skill_id, SelfAssessment.level)
        .join(learners, learners.c.user_id == SelfAssessment.user_id)
        .where(shared_since(learners, SelfAssessment.assessed_at))
        .order_by(SelfAssessment.assessed_at, SelfAssessment.id)
    ):
        latest[(user_id, skill_id)] = level  # later rows win
    return latest
