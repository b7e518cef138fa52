"""After an answer: the learner's explanation of a wrong one, a recall item's
model answer, and the closed-book lock derived from stored rows."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from sqlalchemy.orm import Session, joinedload

from quizsvc.models import Explanation, Item, Review, User
from quizsvc.services.drill.opening import pending_explanation
from quizsvc.services.drill.presentation import question_of
from quizsvc.services.errors import N_, Conflict, InvalidInput, NotFound
from quizsvc.services.reviews import (
    get_open_item,
    lock_learner,
    record_explanation,
)


def review_of(session: Session, user: User, review_id: int) -> Review:
    """The learner's own review (someone else's is NotFound)."""
    review = session.get(Review, review_id, options=[joinedload(Review.explanation)])
    if review is None or review.user_id != user.id:
        raise NotFound(N_("You have no answer %(id)s."), id=review_id)
    return review


def explain(
    session: Session,
    user: User,
    review_id: int,
    text: str,
    *,
    now: datetime | None = None,
) -> Explanation:
    """Store the learner's explanation of a wrong answer."""
    lock_learner(session, user)
    review = review_of(session, user, review_id)
    if review.correct:
        raise Conflict(N_("This answer was right; there is nothing to explain."))
    return record_explanation(session, user, review.id, text, now=now)


def reveal_model_answer(session: Session, user: User, item_id: str) -> dict[str, Any]:
    """Show a recall item's model answer (the item must be open)."""
    opened = get_open_item(session, user)
    if opened is None or opened.item_id != item_id:
        raise Conflict(N_("Item %(item)s is not open in your drill."), item=item_id)
    question = question_of(session.get(Item, item_id))
    if question.type != "recall":
        raise InvalidInput(N_("Only recall items show a model answer before grading."))
    return {
        "item_id": item_id,
        "model_answer": question.data["model_answer"],
        "key_points": question.data["key_points"],
    }


def locked_note_ids(session: Session, user: User) -> set[str]:
    """Notes closed to the learner right now (closed-book rule)."""
    locked: set[str] = set()
    opened = get_open_item(session, user)
    if opened is not None:
        locked.add(question_of(session.get(Item, opened.item_id)).lesson_note)
    pending = pending_explanation(session, user)
    if pending is not None:
        locked.add(question_of(pending.item).lesson_note)
    return locked


def note_state(session: Session, user: User, note_id: str) -> Literal["open", "locked"]:
    """Whether this learner may read the note now."""
    return "locked" if note_id in locked_note_ids(session, user) else "open"


def closed_book(session: Session, user: User) -> bool:
    """Whether the learner has an item open or a wrong answer still to explain:
    then the tools that compute answers (the Lab, Explore) stay closed."""
    if get_open_item(session, user) is not None:
        return True
    return pending_explanation(session, user) is not None


def problem_closed(
    session: Session, user: User, kind: str, seed: int, level: int
) -> bool:
    """Whether checking this generated problem would answer the learner's drill
    item: the one open now, or a wrong answer still to be explained."""
    opened = get_open_item(session, user)
    if opened is not None and (
        opened.problem_kind,
        opened.problem_seed,
        opened.problem_level,
    ) == (kind, seed, level):
        return True
    pending = pending_explanation(session, user)
    return pending is not None and (
        pending.problem_kind,
        pending.problem_seed,
        pending.problem_level,
    ) == (kind, seed, level)
