"""Answering the open item: reading and grading the answer, recording it
(idempotent by key), and describing the outcome."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from quizsvc import bank as bank_module
from quizsvc import item_types, problems, scheduling
from quizsvc.models import Item, Review, User
from quizsvc.services.drill.presentation import (
    problem_of_open,
    question_of,
    redacted,
    reveal,
)
from quizsvc.services.errors import N_, Conflict, InvalidInput
from quizsvc.services.reviews import (
    check_key,
    find_answer,
    get_open_item,
    lock_learner,
    store_answer,
)
from quizsvc.services.settings import load_settings


class AnswerFormatError(InvalidInput):
    """The answer could not be read; it is not an attempt and costs nothing.

    The service's form of an item type's UnreadableAnswer (quizsvc.item_types).
    """

    code = "format_error"
    field = "answer"

    # (ask, row, column) of each unreadable entry of a generated problem, so a
    # page can point at the cell at fault.
    fields: tuple[tuple[str, int | None, int | None], ...] = ()


@dataclass(frozen=True)
class Submission:
    """The outcome of one answer, and what the learner may see now."""

    review: Review
    question: bank_module.Question
    verdict: dict[str, Any]
    replayed: bool
    next_due: datetime
    problem: problems.Problem | None = None
    grading_verdict: Any = field(default=None, compare=False)

    @property
    def requires_explanation(self) -> bool:
        return not self.review.correct and self.review.explanation is None

    def to_dict(self, lang: str | None = None) -> dict[str, Any]:
        """The API view: the explanation and note only once they are unlocked."""
        data: dict[str, Any] = {
            "review_id": self.review.id,
            "item_id": self.review.item_id,
            "correct": self.review.correct,
            "score": self.review.score,
            "rating": scheduling.Rating(self.review.rating).name.lower(),
            "verdict": redacted(self.verdict, self.problem)
            if self.requires_explanation
            else self.verdict,
            "requires_explanation": self.requires_explanation,
            # A choice item's options in the order the learner saw them.
            "option_order": self.verdict.get("option_order"),
            "next_due": self.next_due.isoformat(),
            "replayed": self.replayed,
        }
        if not self.requires_explanation:
            data.update(reveal(self.question, lang))
        return data


def _service_error(refused: item_types.AnswerRefused) -> InvalidInput:
    """The service's error for an answer the item type refused."""
    if isinstance(refused, item_types.UnreadableAnswer):
        error = AnswerFormatError(refused.message, content=refused.content)
        error.fields = refused.fields
        return error
    return InvalidInput(refused.message, field=refused.field, content=refused.content)


def submit_answer(
    session: Session,
    user: User,
    item_id: str,
    *,
    answer: Any = None,
    rating: str | None = None,
    duration_ms: int | None = None,
    idempotency_key: str | None = None,
    now: datetime | None = None,
) -> Submission:
    """Grade and record an answer to the open item (a repeated key replays)."""
    key = check_key(idempotency_key)
    # One request of the learner at a time: a racing retry waits here, then
    # finds the first answer under its key; a second device finds the item closed.
    lock_learner(session, user)
    if key is not None and (first := find_answer(session, user, key)) is not None:
        if first.item_id != item_id:
            raise Conflict(
                N_("This idempotency key was used for another item."),
                field="idempotency_key",
            )
        return _replay(first)
    opened = get_open_item(session, user)
    if opened is None or opened.item_id != item_id:
        raise Conflict(
            N_("Item %(item)s is not open in your drill; ask for the next item first."),
            item=item_id,
        )
    item = session.get(Item, item_id)
    question = question_of(item)
    settings = load_settings(session, user)
    item_type = item_types.of(question)
    try:
        graded = item_type.grade(
            question,
            answer,
            problem=problem_of_open(opened),
            rating=rating,
            two_button=settings.two_button_mode,
        )
    except item_types.AnswerRefused as refused:
        raise _service_error(refused) from None
    problem = graded.problem
    verdict = graded.verdict
    if opened.option_order:
        # The order the learner saw, for the replay, the result and teachers.
        verdict = {**verdict, "option_order": list(opened.option_order)}
    review = store_answer(
        session,
        user,
        item,
        graded=graded.graded,
        self_rating=graded.self_rating,
        duration_ms=duration_ms,
        answer_text=item_type.answer_text(answer),
        problem_kind=problem.kind if problem is not None else None,
        problem_seed=problem.seed if problem is not None else None,
        problem_level=problem.level if problem is not None else None,
        misconception=graded.misconception,
        idempotency_key=key,
        verdict=verdict,
        settings=settings,
        now=now,
    )
    return Submission(
        review=review,
        question=question,
        verdict=verdict,
        replayed=False,
        next_due=review.due_after,
        problem=problem,
        grading_verdict=graded.grading_verdict,
    )


def _replay(review: Review) -> Submission:
    """Describe a stored review again, as its first answer described it."""
    question = question_of(review.item)
    return Submission(
        review=review,
        question=question,
        verdict=stored_verdict(review, question),
        replayed=True,
        next_due=review.due_after,
        problem=problem_of_open(review),
    )


def stored_verdict(review: Review, question: bank_module.Question) -> dict[str, Any]:
    """The verdict stored with a review; for a review from before verdicts were
    kept, what its row says (never a new grade of the old answer)."""
    if review.verdict is not None:
        return review.verdict
    return item_types.of(question).legacy_verdict(
        review.correct, review.score, review.rating
    )


def stored_answer(review: Review, question: bank_module.Question) -> Any:
    """The answer as the checker took it, read back from the review log."""
    return item_types.of(question).stored_answer(review.answer_text)
