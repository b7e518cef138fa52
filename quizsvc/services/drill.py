"""The daily closed-book drill, shared by the web pages and the JSON API.

One item is open at a time. While it is open, its lesson note stays closed;
after a wrong answer the learner first writes why, and only then are the
explanation and the note link shown (the lesson's rule: "不要回看正文。答错后先
解释原因,再重新打开这一课。"). The lock is derived from stored rows, not kept
as extra state: the open item's note, and the note of any wrong review that
has no explanation yet, are locked.

- `preview_step(session, user, now=None)`: the open item, a pending
  explanation, done, or the `PlannedOpening` of the next item (reads only);
  `open_planned(session, user, planned)` then opens it (a write). The edges
  call both through quizsvc.http.drill.current_drill_step; `current_step`
  does the two at once.
- `submit_answer(session, user, item_id, *, answer=None, rating=None, ...)
  -> Submission`: grade, rate, record (idempotent by key), say what to show.
- `reveal_model_answer(session, user, item_id)`: a recall item's model answer.
- `explain(session, user, review_id, text)`: store why, unlock the explanation.
- `locked_note_ids(session, user) -> set[str]`: notes the learner may not open.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import Session, joinedload

from quizsvc import bank as bank_module
from quizsvc import grading, problems, scheduling
from quizsvc.models import Card, Explanation, Item, OpenItem, Review, User
from quizsvc.services import resolve_now
from quizsvc.services.errors import N_, Conflict, InvalidInput, NotFound
from quizsvc.services.queue import daily_plan
from quizsvc.services.reviews import (
    check_key,
    find_answer,
    get_open_item,
    lock_learner,
    open_item,
    rating_refused,
    record_explanation,
    store_answer,
)
from quizsvc.services.settings import load_settings
from quizsvc.text import LANGUAGES, Bilingual, pick

# Streaks are counted over at most this many past days (one query, bounded).
STREAK_HORIZON_DAYS = 400


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


def question_of(item: Item) -> bank_module.Question:
    """Rebuild the bank question stored (at sync time) in an item row."""
    content = item.content
    return bank_module.Question(
        id=content["id"],
        lesson_id=content["lesson_id"],
        type=content["type"],
        skills=tuple(content["skills"]),
        prompt=content["prompt"],
        explanation=content["explanation"],
        lesson_note=content["lesson_note"],
        difficulty=content.get("difficulty"),
        data=content["data"],
        content_hash=content["content_hash"],
    )


@dataclass(frozen=True)
class OpenDrillItem:
    """The item the learner is answering, as they may see it."""

    item: Item
    question: bank_module.Question
    problem: problems.Problem | None
    position: int
    total: int
    # A learning-step repeat of an item answered earlier today: it does not
    # move the day's position.
    repeat: bool = False

    def public_dict(self, lang: str | None = None) -> dict[str, Any]:
        """What the client may show: never the answer, never the note."""
        public = self.question.public_dict(lang)
        public.pop("id", None)
        data: dict[str, Any] = {
            "item_id": self.item.id,
            **public,
            "note_id": self.question.lesson_note,
            "position": self.position,
            "total": self.total,
            "repeat": self.repeat,
        }
        if self.problem is not None:
            # Without its seed the problem cannot be named to the practice
            # checker (which would answer it) from outside the learner's session.
            problem = self.problem.public_dict(lang)
            problem.pop("seed", None)
            data["problem"] = problem
        return data


@dataclass(frozen=True)
class PendingExplanation:
    """A wrong answer the learner has not yet explained."""

    review: Review

    def public_dict(self) -> dict[str, Any]:
        return {
            "requires_explanation": True,
            "review_id": self.review.id,
            "item_id": self.review.item_id,
        }


@dataclass(frozen=True)
class Done:
    """Nothing is due: when the next review comes due."""

    next_due: datetime | None
    reviewed_today: int

    def public_dict(self) -> dict[str, Any]:
        return {
            "done": True,
            "reviewed_today": self.reviewed_today,
            "next_due": self.next_due.isoformat() if self.next_due else None,
        }


DrillStep = OpenDrillItem | PendingExplanation | Done


def _day_bounds(
    session: Session, user: User, now: datetime
) -> tuple[datetime, datetime]:
    settings = load_settings(session, user)
    return scheduling.learner_day(now, settings.timezone, settings.rollover_hour)


def reviewed_today(session: Session, user: User, now: datetime | None = None) -> int:
    """How many answers the learner recorded since their day began."""
    now = resolve_now(now)
    start, _end = _day_bounds(session, user, now)
    return (
        session.scalar(
            select(func.count())
            .select_from(Review)
            .where(Review.user_id == user.id, Review.reviewed_at >= start)
        )
        or 0
    )


def learning_streak(session: Session, user: User, now: datetime | None = None) -> int:
    """Consecutive learner days with at least one answer, up to today.

    A streak still counts while today has no answer yet: it ends only when a
    whole day passes without one.
    """
    now = resolve_now(now)
    settings = load_settings(session, user)
    start, _end = scheduling.learner_day(now, settings.timezone, settings.rollover_hour)
    horizon = start - timedelta(days=STREAK_HORIZON_DAYS)
    times = session.scalars(
        select(Review.reviewed_at).where(
            Review.user_id == user.id, Review.reviewed_at >= horizon
        )
    )
    days = {(start - moment).days if moment < start else -1 for moment in times}
    # `days` holds how many whole days before today's start each answer was:
    # -1 is today, 0 yesterday, 1 the day before, ...
    streak = 1 if -1 in days else 0
    offset = 0
    while offset in days:
        streak += 1
        offset += 1
    return streak


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


def _problem_of(opened: OpenItem) -> problems.Problem | None:
    if opened.problem_kind is None:
        return None
    return problems.generate(
        opened.problem_kind, int(opened.problem_seed), int(opened.problem_level)
    )


def _describe(
    session: Session, opened: OpenItem, place: dict[str, int | None] | None = None
) -> OpenDrillItem:
    item = session.get(Item, opened.item_id)
    if place is None:
        place = {"day_total": opened.day_total, "day_position": opened.day_position}
    total = max(place["day_total"] or 1, 1)
    return OpenDrillItem(
        item=item,
        question=question_of(item),
        problem=_problem_of(opened),
        position=min(max(place["day_position"] or total, 1), total),
        total=total,
        repeat=place["day_position"] is None,
    )


def _place_in_day(item_id: str, plan) -> dict[str, int | None]:
    """Where an item stands in the day, stored with it so showing it reads no queue."""
    return {
        "day_total": plan.total,
        "day_position": None
        if plan.is_repeat(item_id)
        else len(plan.answered_items) + 1,
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
    plan = daily_plan(session, user, now)
    if not plan.queue:
        return Done(next_due=_next_due(session, user), reviewed_today=plan.answers)
    entry = plan.queue[0]
    item = session.get(Item, entry.item_id)
    question = question_of(item)
    problem_ref: dict[str, Any] = {}
    if question.type == "generated":
        problem_ref = {
            "problem_kind": question.data["kind"],
            "problem_seed": problems.fresh_seed(),
            "problem_level": int(question.data["level"]),
        }
    return PlannedOpening(
        item=item,
        problem_ref=problem_ref,
        place=_place_in_day(entry.item_id, plan),
        latest_review_id=latest.id if latest is not None else None,
        now=now,
    )


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


# What a generated problem's step may say before the explanation: whether it
# was right, never the cells (a boolean matrix marked cell by cell is its answer).
_STEP_BEFORE_EXPLANATION = ("name", "answered", "correct", "score")
# What the learner gave, kept from a bank check's detail.
_OWN_ANSWER = ("chosen", "order", "value", "normalized")


def redacted(verdict: dict[str, Any]) -> dict[str, Any]:
    """A verdict before the explanation: what the learner gave and which parts
    were wrong, but not the right answer, the misconception or why."""
    kept: dict[str, Any] = {
        key: verdict[key]
        for key in ("type", "correct", "score", "self_rating")
        if key in verdict
    }
    detail = verdict.get("detail")
    if isinstance(detail, dict):
        kept.update({key: detail[key] for key in _OWN_ANSWER if key in detail})
    if isinstance(verdict.get("steps"), list):
        kept["steps"] = [
            {key: step.get(key) for key in _STEP_BEFORE_EXPLANATION}
            for step in verdict["steps"]
        ]
    return kept


def reveal(question: bank_module.Question, lang: str | None = None) -> dict[str, Any]:
    """The explanation, the model answer and the note id, for after an answer."""
    pick = (
        (lambda text: text)
        if lang is None
        else (lambda text: text.get(lang) or text.get("zh-CN"))
    )
    data: dict[str, Any] = {
        "explanation": pick(question.explanation),
        "note_id": question.lesson_note,
    }
    if question.type == "recall":
        data["model_answer"] = pick(question.data["model_answer"])
        data["key_points"] = [pick(point) for point in question.data["key_points"]]
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
        problem = _problem_of(opened)
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
