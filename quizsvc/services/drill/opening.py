"""Which item the drill shows next, and opening it.

`preview_step` reads only (the day's plan is most of the work); `open_planned`
then opens the planned item under the learner's lock; `current_step` does both.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import Session, joinedload

from quizsvc import item_types
from quizsvc.models import Card, Item, OpenItem, Review, User
from quizsvc.services import resolve_now
from quizsvc.services.drill.presentation import (
    Done,
    DrillStep,
    OpenDrillItem,
    PendingExplanation,
    problem_of_open,
    question_of,
)
from quizsvc.services.queue import DailyPlan, daily_plan
from quizsvc.services.reviews import get_open_item, lock_learner, open_item


def opened_at(session: Session, user: User) -> datetime | None:
    """When the learner opened the item they are answering."""
    opened = get_open_item(session, user)
    return opened.opened_at if opened is not None else None


# Built once (every drill step asks); the explanation is read with the review,
# not by a second query.
_LATEST_REVIEW = (
    select(Review)
    .options(joinedload(Review.explanation))
    .where(Review.user_id == bindparam("user_id"))
    .order_by(Review.reviewed_at.desc(), Review.id.desc())
    .limit(1)
)
_LATEST_REVIEW_ID = (
    select(Review.id)
    .where(Review.user_id == bindparam("user_id"))
    .order_by(Review.reviewed_at.desc(), Review.id.desc())
    .limit(1)
)


def pending_explanation(session: Session, user: User) -> Review | None:
    """The learner's latest wrong answer, if it still lacks an explanation."""
    latest = session.scalar(_LATEST_REVIEW, {"user_id": user.id})
    if latest is None or latest.correct or latest.explanation is not None:
        return None
    return latest


def _next_due(session: Session, user: User) -> datetime | None:
    return session.scalar(select(func.min(Card.due)).where(Card.user_id == user.id))


def _describe(
    session: Session, opened: OpenItem, place: dict[str, Any] | None = None
) -> OpenDrillItem:
    item = session.get(Item, opened.item_id)
    if place is None:
        place = {
            "day_total": opened.day_total,
            "day_position": opened.day_position,
            "day_repeat": opened.day_repeat,
        }
    total = max(place["day_total"] or 1, 1)
    repeat = place["day_repeat"]
    if repeat is None:  # opened before revision 0011: no position for repeats
        repeat = place["day_position"] is None
    return OpenDrillItem(
        item=item,
        question=question_of(item),
        problem=problem_of_open(opened),
        position=min(max(place["day_position"] or total, 1), total),
        total=total,
        repeat=repeat,
        option_order=opened.option_order,
    )


def _place_in_day(item_id: str, plan) -> dict[str, Any]:
    """Where an item stands in the day, stored with it so showing it reads no
    queue: the position is the answers given today + 1 and the total the
    answers planned today (learning steps included), so position <= total."""
    return {
        "day_total": plan.total,
        "day_position": plan.position,
        "day_repeat": plan.is_repeat(item_id),
    }


def open_step(
    session: Session, user: User, now: datetime | None = None
) -> OpenDrillItem | None:
    """The item already open in the learner's drill, if any (reads only)."""
    opened = get_open_item(session, user)
    return None if opened is None else _describe_open(session, user, opened, now)


def _describe_open(
    session: Session, user: User, opened: OpenItem, now: datetime | None
) -> OpenDrillItem:
    place = None
    if opened.day_total is None:  # opened before the day's place was stored
        place = _place_in_day(opened.item_id, daily_plan(session, user, now))
    return _describe(session, opened, place)


def current_step(
    session: Session, user: User, now: datetime | None = None
) -> DrillStep:
    """Return what the drill shows now, opening the next queued item if needed."""
    # Two devices asking at once must not both open an item.
    lock_learner(session, user)
    step = preview_step(session, user, now)
    if isinstance(step, PlannedOpening):
        return _open_planned(session, user, step)
    return step


@dataclass(frozen=True)
class PlannedOpening:
    """The item the drill would open next, as read; opening it writes."""

    item: Item
    problem_ref: dict[str, Any]
    place: dict[str, int | None]
    latest_review_id: int | None
    now: datetime


def preview_step(
    session: Session, user: User, now: datetime | None = None
) -> DrillStep | PlannedOpening:
    """What the drill shows now, found by reading only.

    An open item, a pending explanation and a finished day come back as they
    are; the next item to open comes back as a PlannedOpening for
    `open_planned`.
    Working out the day's plan is most of a step's work: reading it here lets
    it run before the write transaction (see db.begin_reading).
    """
    now = resolve_now(now)
    opened = get_open_item(session, user)
    if opened is not None:
        return _describe_open(session, user, opened, now)
    latest = session.scalar(_LATEST_REVIEW, {"user_id": user.id})
    if latest is not None and not latest.correct and latest.explanation is None:
        return PendingExplanation(latest)
    return plan_opening(session, user, daily_plan(session, user, now), latest, now)


def plan_opening(
    session: Session,
    user: User,
    plan: DailyPlan,
    latest: Review | None,
    now: datetime,
) -> Done | PlannedOpening:
    """The next item of a day's plan (or done), as an opening still to write."""
    if not plan.queue:
        if plan.next_ready is not None:
            # Learning steps wait for their spacing: come back then, today.
            return Done(
                next_due=plan.next_ready,
                reviewed_today=plan.answers,
                steps_waiting=plan.held_back,
            )
        return Done(next_due=_next_due(session, user), reviewed_today=plan.answers)
    item = _first_not_a_twin(session, plan.queue, latest)
    entry = next(e for e in plan.queue if e.item_id == item.id)
    question = question_of(item)
    problem_ref = item_types.of(question).opening(question)
    return PlannedOpening(
        item=item,
        problem_ref=problem_ref,
        place=_place_in_day(entry.item_id, plan),
        latest_review_id=latest.id if latest is not None else None,
        now=now,
    )


def _skills(item: Item) -> frozenset[str]:
    return frozenset(item.content.get("skills", ()))


def _first_not_a_twin(session: Session, queue, latest: Review | None) -> Item:
    """The queue's first item, unless it shares all its skills with the item
    just answered (a near-duplicate, whose answer the last explanation may have
    given away): then the first item that does not, if any."""
    first = session.get(Item, queue[0].item_id)
    if latest is None or len(queue) == 1:
        return first
    previous = _skills(session.get(Item, latest.item_id))
    if _skills(first) != previous:
        return first
    for entry in queue[1:]:
        other = session.get(Item, entry.item_id)
        if _skills(other) != previous:
            return other
    return first


def open_planned(session: Session, user: User, planned: PlannedOpening) -> DrillStep:
    """Open the item a preview planned, unless the drill moved on since it read.

    Under the learner's lock: when another request has since stored an answer,
    the plan is stale and the step is decided afresh; when one has opened an
    item, that item is the step.
    """
    lock_learner(session, user)
    latest_id = session.scalar(_LATEST_REVIEW_ID, {"user_id": user.id})
    if latest_id != planned.latest_review_id:
        return current_step(session, user, planned.now)
    return _open_planned(session, user, planned)


def open_next_after_answer(
    session: Session, user: User, review: Review
) -> DrillStep | None:
    """Open the item after a fresh answer, in the answer's own transaction.

    The answer just closed the open item and is the latest review, so neither
    is read again: the day's plan (which sees the answer) picks the next item.
    After a wrong answer there is none until it is explained (None).
    """
    if not review.correct:
        return None
    step = plan_opening(
        session, user, daily_plan(session, user, review.reviewed_at), review,
        review.reviewed_at,
    )  # fmt: skip
    if not isinstance(step, PlannedOpening):
        return step
    # The answer closed the open item (under the learner's lock, still held):
    # nothing is open, so the new row goes in without looking first.
    opened = OpenItem(
        user_id=user.id,
        item_id=step.item.id,
        opened_at=step.now,
        **step.problem_ref,
        **step.place,
    )
    session.add(opened)
    session.flush()
    return _describe(session, opened)


def _open_planned(session: Session, user: User, planned: PlannedOpening) -> DrillStep:
    opened = open_item(
        session,
        user,
        planned.item.id,
        now=planned.now,
        replace=False,
        **planned.problem_ref,
        **planned.place,
    )
    return _describe(session, opened)
