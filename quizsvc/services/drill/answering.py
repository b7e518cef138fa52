"""Answering the open item: reading and grading the answer, recording it
(idempotent by key), and describing the outcome."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from quizsvc import bank as bank_module
from quizsvc import grading, problems, scheduling
from quizsvc.models import Item, OpenItem, Review, User
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
    rating_refused,
    store_answer,
)
from quizsvc.services.settings import load_settings
from quizsvc.text import LANGUAGES, Bilingual, pick


class AnswerFormatError(InvalidInput):
    """The answer could not be read; it is not an attempt and costs nothing."""

    code = "format_error"
    field = "answer"

    # (ask, row, column) of each unreadable entry of a generated problem, so a
    # page can point at the cell at fault.
    fields: tuple[tuple[str, int | None, int | None], ...] = ()

    @classmethod
    def of(
        cls,
        remarks: list[Bilingual],
        fields: list[tuple[str, int | None, int | None]] | None = None,
    ) -> AnswerFormatError:
        """Build the error from the grader's or the checker's remarks (bilingual)."""
        error = cls(
            content={
                lang: " ".join(pick(remark, lang) for remark in remarks)
                for lang in LANGUAGES
            }
        )
        error.fields = tuple(fields or ())
        return error


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
            "verdict": redacted(self.verdict)
            if self.requires_explanation
            else self.verdict,
            "requires_explanation": self.requires_explanation,
            "next_due": self.next_due.isoformat(),
            "replayed": self.replayed,
        }
        if not self.requires_explanation:
            data.update(reveal(self.question, lang))
        return data


def _verdict_for(
    question: bank_module.Question,
    opened: OpenItem,
    answer: Any,
    rating: str | None,
    two_button: bool,
):
    """Grade an answer: (GradedAnswer or None, Rating or None, verdict, extras)."""
    if question.type == "recall":
        try:
            parsed = scheduling.rate_recall(rating or "", two_button=two_button)
        except ValueError:
            raise rating_refused(two_button) from None
        return None, parsed, {"type": "recall", "self_rating": rating.lower()}, {}
    if answer is None or answer == "" or answer == {}:
        raise AnswerFormatError(N_("Type an answer first."))
    if question.type == "generated":
        problem = problem_of_open(opened)
        if not isinstance(answer, dict):
            raise InvalidInput(
                N_(
                    "A generated problem takes answers by name, e.g. "
                    '{"S": "[[0.7071, 0]]"}.'
                ),
                field="answer",
            )
        verdict = grading.grade(problem, answer)
        if verdict.format_errors:
            labels = {ask.name: ask.label for ask in problem.ask}
            raise AnswerFormatError.of(
                [labelled(e, labels.get(e.quantity)) for e in verdict.format_errors],
                [(e.quantity, e.row, e.col) for e in verdict.format_errors],
            )
        graded = scheduling.GradedAnswer(
            correct=verdict.correct, score=float(verdict.score)
        )
        return (
            graded,
            None,
            {"type": "generated", **verdict.to_dict()},
            {
                "problem": problem,
                "grading_verdict": verdict,
                "misconception": verdict.misconception,
                "problem_kind": problem.kind,
                "problem_seed": problem.seed,
                "problem_level": problem.level,
            },
        )
    if question.type == "ordering":
        _check_every_step_once(question, answer)
    check = bank_module.check_answer(question, answer)
    if check.detail.get("invalid"):
        raise AnswerFormatError.of([dict(check.detail["invalid"])])
    graded = scheduling.GradedAnswer(correct=check.correct, score=float(check.score))
    verdict = {
        "type": question.type,
        "correct": check.correct,
        "score": check.score,
        "detail": check.detail,
    }
    named = check.detail.get("misconceptions") or [None]
    return graded, None, verdict, {"misconception": named[0]}


def _check_every_step_once(question: bank_module.Question, answer: Any) -> None:
    """Refuse an ordering picked from the list with a step left out or twice,
    naming the steps as the learner sees them (never their ids)."""
    if not isinstance(answer, list) or not all(isinstance(a, str) for a in answer):
        return  # typed ids: the bank's checker reads and names them
    steps = {step["id"]: step["text"] for step in question.data["steps"]}
    picked = [a.strip() for a in answer if a.strip()]
    if any(p not in steps for p in picked):
        return
    missing = [steps[s] for s in steps if s not in picked]
    twice = [steps[s] for s in steps if picked.count(s) > 1]
    if not missing and not twice:
        return
    named = {
        "missing": [_quoted(text) for text in missing],
        "twice": [_quoted(text) for text in twice],
    }
    if missing and twice:
        raise AnswerFormatError(
            N_(
                "Use every step exactly once. Not chosen yet: %(missing)s; "
                "chosen twice: %(twice)s."
            ),
            **named,
        )
    if missing:
        raise AnswerFormatError(
            N_("Use every step exactly once. Not chosen yet: %(missing)s."), **named
        )
    raise AnswerFormatError(
        N_("Use every step exactly once. Chosen twice: %(twice)s."), **named
    )


def _quoted(text: Bilingual) -> dict[str, str]:
    """Put a step's text in quotation marks, in each language."""
    return {lang: f"“{pick(text, lang)}”" for lang in LANGUAGES}


def labelled(error: grading.FormatError, label: Any) -> dict[str, str]:
    """A format error's message with the step named as the learner sees it
    (its label, e.g. "A′ = softmax(S + c)") instead of its internal name."""
    message = dict(error.message)
    if not isinstance(label, Mapping):
        return message
    for lang, text in message.items():
        for separator in ("：", ": "):
            prefix = f"{error.quantity}{separator}"
            if text.startswith(prefix) and label.get(lang):
                message[lang] = f"{label[lang]}{separator}{text[len(prefix) :]}"
    return message


def _answer_text(answer: Any) -> str | None:
    if answer is None:
        return None
    return answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)


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
    graded, self_rating, verdict, extras = _verdict_for(
        question, opened, answer, rating, settings.two_button_mode
    )
    review = store_answer(
        session,
        user,
        item,
        graded=graded,
        self_rating=self_rating,
        duration_ms=duration_ms,
        answer_text=_answer_text(answer),
        problem_kind=extras.get("problem_kind"),
        problem_seed=extras.get("problem_seed"),
        problem_level=extras.get("problem_level"),
        misconception=extras.get("misconception"),
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
        problem=extras.get("problem"),
        grading_verdict=extras.get("grading_verdict"),
    )


def _replay(review: Review) -> Submission:
    """Describe a stored review again, as its first answer described it."""
    question = question_of(review.item)
    problem = None
    if review.problem_kind is not None:
        problem = problems.generate(
            review.problem_kind, int(review.problem_seed), int(review.problem_level)
        )
    verdict = review.verdict
    if verdict is None:  # stored before verdicts were kept: grade it again
        verdict = regraded_verdict(review, question, problem)
    return Submission(
        review=review,
        question=question,
        verdict=verdict,
        replayed=True,
        next_due=review.due_after,
        problem=problem,
    )


def stored_answer(review: Review, question: bank_module.Question) -> Any:
    """The answer as the checker took it, read back from the review log."""
    text = review.answer_text
    if text is None or question.type not in ("generated", "ordering", "choice"):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def regraded_verdict(
    review: Review,
    question: bank_module.Question,
    problem: problems.Problem | None,
) -> dict[str, Any]:
    """Grade a stored answer again (same problem, same checker)."""
    answer = stored_answer(review, question)
    if problem is not None and isinstance(answer, dict):
        return {"type": "generated", **grading.grade(problem, answer).to_dict()}
    if question.type in bank_module.CHECKABLE_TYPES and answer is not None:
        check = bank_module.check_answer(question, answer)
        return {
            "type": question.type,
            "correct": check.correct,
            "score": check.score,
            "detail": check.detail,
        }
    verdict: dict[str, Any] = {
        "type": question.type,
        "correct": review.correct,
        "score": review.score,
    }
    if question.type == "recall":
        verdict["self_rating"] = scheduling.Rating(review.rating).name.lower()
    return verdict
