"""Recording what learners do in the drill: answers, explanations, the open item.

`store_answer` is the heart of it: it appends the review and moves the card to
its next FSRS state. Its one caller in the app is the drill's `submit_answer`,
which opens, grades, honours the client's idempotency key (a retry gets the
first result and stores nothing new) and then stores.

Concurrency: everything that changes a learner's drill (answers, the open item,
explanations) first takes that learner's lock (`lock_learner`), held until the
transaction ends. Requests of one learner (a phone and a laptop, a retry and its
original) therefore run one after the other: the second sees what the first
stored, so a key is looked up once, an open item takes one answer, and review
times follow the order in which cards were updated.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from quizsvc import item_types, problems, scheduling
from quizsvc.models import (
    STATE_NEW,
    Card,
    Explanation,
    Item,
    OpenItem,
    Review,
    User,
)
from quizsvc.services import resolve_now
from quizsvc.services.errors import N_, InvalidInput, NotFound
from quizsvc.services.parameters import current_parameters
from quizsvc.services.settings import load_settings

if TYPE_CHECKING:
    from quizsvc.models import LearnerSettings

MAX_ANSWER_CHARS = 10_000
# An explanation of a wrong answer: a sentence at least, a page at most.
MIN_EXPLANATION_CHARS = 5
MAX_EXPLANATION_CHARS = 4_000
MAX_KEY_CHARS = 128
# The longest time on one item a review stores (a day); the edges clamp or
# refuse longer ones with this bound.
MAX_DURATION_MS = 24 * 60 * 60 * 1000
# The learner's "usual" time on an item type: the median of this many of their
# latest right answers of that type.
TYPICAL_DURATION_WINDOW = 50
# The first key of PostgreSQL's two-key advisory locks that serialize one
# learner's drill ("drll"); the second key is the user id.
LEARNER_LOCK_SPACE = 0x64726C6C


def lock_learner(session: Session, user: User) -> None:
    """Hold the learner's drill lock until this transaction ends (re-entrant).

    On SQLite every transaction already holds the database's write lock from
    its BEGIN IMMEDIATE; on PostgreSQL a transaction-scoped advisory lock per
    learner makes that learner's requests wait for each other, and nobody else.
    """
    connection = session.connection()
    transaction = session.get_transaction()
    held = session.info.get("learner_lock")
    if held is not None and held[0] is transaction and held[1] == user.id:
        return
    if connection.dialect.name == "postgresql":
        session.execute(select(func.pg_advisory_xact_lock(LEARNER_LOCK_SPACE, user.id)))
    session.info["learner_lock"] = (transaction, user.id)


# Built once: every answer looks its key up.
_ANSWER_UNDER_KEY = select(Review).where(
    Review.user_id == bindparam("user_id"), Review.idempotency_key == bindparam("key")
)


def find_answer(session: Session, user: User, key: str) -> Review | None:
    """The learner's review stored under an idempotency key (hold their lock)."""
    return session.scalar(_ANSWER_UNDER_KEY, {"user_id": user.id, "key": key})


def store_answer(
    session: Session,
    user: User,
    item: Item,
    *,
    graded: scheduling.GradedAnswer | None = None,
    self_rating: str | scheduling.Rating | None = None,
    duration_ms: int | None = None,
    answer_text: str | None = None,
    problem_kind: str | None = None,
    problem_seed: int | None = None,
    problem_level: int | None = None,
    misconception: str | None = None,
    idempotency_key: str | None = None,
    verdict: dict[str, Any] | None = None,
    settings: LearnerSettings | None = None,
    now: datetime | None = None,
) -> Review:
    """Append a new answer and reschedule its card.

    The caller holds the learner's lock (`lock_learner`) and has found no review
    under the key (`find_answer`); `settings` saves reading them again.
    """
    _check_fields(
        duration_ms,
        answer_text,
        problem_kind,
        problem_seed,
        problem_level,
        misconception,
    )
    if settings is None:
        settings = load_settings(session, user)
    rating, source, correct, score, hint_used = _rate(
        session, user, item, graded, self_rating, duration_ms, settings.two_button_mode
    )
    # The time is taken under the learner's lock, so review times follow the
    # order in which cards are updated.
    moment = resolve_now(now)
    card = _lock_card(session, user, item.id, moment)
    if now is None and card.last_review is not None and card.last_review > moment:
        # Another machine's clock ran ahead of this one: keep the log in order.
        moment = card.last_review
    now = moment
    before = _card_state(card)
    after = scheduling.review_card(
        before,
        rating,
        now,
        parameters=current_parameters(session, user),
        desired_retention=settings.desired_retention,
        seed=scheduling.fuzz_seed(card.id, card.reps),
    )
    _apply(card, after, now)
    review = Review(
        user_id=user.id,
        item_id=item.id,
        card_id=card.id,
        reviewed_at=now,
        rating=int(rating),
        rating_source=source,
        correct=correct,
        score=score,
        duration_ms=duration_ms,
        answer_text=answer_text,
        hint_used=hint_used,
        problem_kind=problem_kind,
        problem_seed=problem_seed,
        problem_level=problem_level,
        misconception=misconception,
        idempotency_key=idempotency_key,
        state_before=before.state,
        state_after=after.state,
        stability_after=after.stability,
        difficulty_after=after.difficulty,
        due_after=after.due,
        verdict=verdict,
        # A new review has no explanation; saying so spares a lazy load.
        explanation=None,
    )
    session.add(review)
    _close_if_open(session, user, item.id)
    return review


def check_key(key: str | None) -> str | None:
    """Return the idempotency key trimmed, refusing an empty or unprintable one."""
    if key is None:
        return None
    key = key.strip()
    if not key or len(key) > MAX_KEY_CHARS or not key.isprintable():
        raise InvalidInput(
            N_("The idempotency key must be 1-%(n)d printable characters."),
            field="idempotency_key",
            n=MAX_KEY_CHARS,
        )
    return key


def _check_fields(
    duration_ms: Any,
    answer_text: Any,
    problem_kind: Any,
    problem_seed: Any,
    problem_level: Any,
    misconception: Any,
) -> None:
    if duration_ms is not None and (
        not _is_int(duration_ms) or not 0 <= duration_ms <= MAX_DURATION_MS
    ):
        raise InvalidInput(
            N_("duration_ms must be a whole number from 0 to %(most)d (one day)."),
            field="duration_ms",
            most=MAX_DURATION_MS,
        )
    if answer_text is not None and (
        not isinstance(answer_text, str) or len(answer_text) > MAX_ANSWER_CHARS
    ):
        raise InvalidInput(
            N_("The answer must be text of at most %(n)d characters."),
            field="answer",
            n=MAX_ANSWER_CHARS,
        )
    for name, value in (
        ("problem_kind", problem_kind),
        ("misconception", misconception),
    ):
        if value is not None and (
            not isinstance(value, str) or not 0 < len(value) <= 64
        ):
            raise InvalidInput(
                N_("%(name)s must be a name of 1-64 characters."), field=name, name=name
            )
    if problem_seed is not None and not problems.is_seed(problem_seed):
        raise InvalidInput(
            N_("problem_seed must be a whole number from 0 to %(most)d."),
            field="problem_seed",
            most=problems.MAX_SEED,
        )
    if problem_level is not None and (
        not _is_int(problem_level) or not 1 <= problem_level <= 99
    ):
        raise InvalidInput(
            N_("problem_level must be a whole number from 1 to 99."),
            field="problem_level",
        )


def rating_refused(two_button: bool) -> InvalidInput:
    """Build the error for a recall rating that is not one of the learner's buttons."""
    if two_button:
        return InvalidInput(N_("Rate yourself: pass or fail."), field="rating")
    return InvalidInput(N_("Rate yourself: again, hard, good or easy."), field="rating")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _rate(
    session: Session,
    user: User,
    item: Item,
    graded: scheduling.GradedAnswer | None,
    self_rating: str | scheduling.Rating | None,
    duration_ms: int | None,
    two_button: bool,
) -> tuple[scheduling.Rating, str, bool, float | None, bool]:
    """Return (rating, source, correct, score, hint used) under the rating policy."""
    if item_types.of(item.type).self_rated:
        if self_rating is None or graded is not None:
            raise InvalidInput(
                N_("A recall item is rated by the learner (self_rating)."),
                field="self_rating",
            )
        if isinstance(self_rating, scheduling.Rating):
            rating = self_rating  # parsed by the caller already
        else:
            try:
                rating = scheduling.rate_recall(self_rating, two_button=two_button)
            except ValueError:
                raise rating_refused(two_button) from None
        return rating, "learner", rating > scheduling.Rating.AGAIN, None, False
    if graded is None or self_rating is not None:
        raise InvalidInput(
            N_("A %(type)s item is graded: pass the graded answer."), type=item.type
        )
    typical = None
    if scheduling.needs_typical_duration(graded, duration_ms):
        typical = scheduling.typical_duration_ms(
            session.scalars(
                select(Review.duration_ms)
                .join(Item, Item.id == Review.item_id)
                .where(
                    Review.user_id == user.id,
                    Review.correct.is_(True),
                    Review.rating_source == "graded",
                    Review.duration_ms.is_not(None),
                    Item.type == item.type,
                )
                .order_by(Review.reviewed_at.desc())
                .limit(TYPICAL_DURATION_WINDOW)
            )
        )
    rating = scheduling.rate_graded_answer(
        graded, duration_ms=duration_ms, typical_ms=typical
    )
    return rating, "graded", graded.correct, graded.score, graded.hint_used


def _lock_card(session: Session, user: User, item_id: str, now: datetime) -> Card:
    """Return the learner's card for the item, locked for update, creating it."""
    query = (
        select(Card)
        .where(Card.user_id == user.id, Card.item_id == item_id)
        .with_for_update()
        # A card already in the session may be stale once the lock is granted.
        .execution_options(populate_existing=True)
    )
    card = session.scalar(query)
    if card is None:
        # No race to lose: the learner's lock is held.
        card = Card(
            user_id=user.id,
            item_id=item_id,
            state=STATE_NEW,
            due=now,
            reps=0,
            lapses=0,
            created_at=now,
            updated_at=now,
        )
        session.add(card)
        session.flush()
    return card


def _card_state(card: Card) -> scheduling.CardState:
    return scheduling.CardState(
        state=card.state,
        step=card.step,
        stability=card.stability,
        difficulty=card.difficulty,
        due=card.due,
        last_review=card.last_review,
        reps=card.reps,
        lapses=card.lapses,
    )


def _apply(card: Card, state: scheduling.CardState, now: datetime) -> None:
    card.state = state.state
    card.step = state.step
    card.stability = state.stability
    card.difficulty = state.difficulty
    card.due = state.due
    card.last_review = state.last_review
    card.reps = state.reps
    card.lapses = state.lapses
    card.updated_at = now


def _close_if_open(session: Session, user: User, item_id: str) -> None:
    opened = session.get(OpenItem, user.id)
    if opened is not None and opened.item_id == item_id:
        session.delete(opened)
        session.flush()


def check_explanation(text: str | None) -> str:
    """Return the explanation trimmed, refusing one too short or too long to keep."""
    body = (text or "").strip()
    if len(body) < MIN_EXPLANATION_CHARS:
        raise InvalidInput(
            N_(
                "Write at least %(n)d characters about why you think the answer "
                "was wrong."
            ),
            field="text",
            n=MIN_EXPLANATION_CHARS,
        )
    if len(body) > MAX_EXPLANATION_CHARS:
        raise InvalidInput(
            N_(
                "An explanation takes at most %(most)d characters; this one has "
                "%(n)d. Please shorten it."
            ),
            field="text",
            most=MAX_EXPLANATION_CHARS,
            n=len(body),
        )
    return body


def record_explanation(
    session: Session,
    user: User,
    review_id: int,
    text: str,
    *,
    now: datetime | None = None,
) -> Explanation:
    """Store (or rewrite) the learner's explanation of one of their wrong answers."""
    now = resolve_now(now)
    lock_learner(session, user)
    review = session.get(Review, review_id)
    if review is None or review.user_id != user.id:
        raise NotFound(N_("You have no answer %(id)s."), id=review_id)
    if review.correct:
        raise InvalidInput(N_("Explanations are written about wrong answers."))
    body = check_explanation(text)
    explanation = review.explanation
    if explanation is None:
        explanation = Explanation(
            review_id=review.id,
            user_id=user.id,
            body=body,
            created_at=now,
            updated_at=now,
        )
        session.add(explanation)
        # Link it in memory too (a rewrite in this session must find it) without
        # touching the append-only review.
        set_committed_value(review, "explanation", explanation)
        set_committed_value(explanation, "review", review)
    else:
        explanation.body, explanation.updated_at = body, now
    session.flush()
    return explanation


def open_item(
    session: Session,
    user: User,
    item_id: str,
    *,
    problem_kind: str | None = None,
    problem_seed: int | None = None,
    problem_level: int | None = None,
    day_position: int | None = None,
    day_total: int | None = None,
    day_repeat: bool | None = None,
    option_order: list[str] | None = None,
    now: datetime | None = None,
    replace: bool = True,
) -> OpenItem:
    """Mark an item as open in the learner's drill, replacing any open one.

    With replace=False an item already open stays, and is returned instead.
    """
    _check_fields(None, None, problem_kind, problem_seed, problem_level, None)
    lock_learner(session, user)
    item = session.get(Item, item_id)
    if item is None or item.retired_at is not None:
        raise NotFound(N_("There is no item '%(item)s'."), item=item_id)
    opened = session.get(OpenItem, user.id)
    if opened is not None and not replace:
        return opened
    if opened is None:
        opened = OpenItem(user_id=user.id)
        session.add(opened)
    opened.item_id = item_id
    opened.opened_at = resolve_now(now)
    opened.problem_kind = problem_kind
    opened.problem_seed = problem_seed
    opened.problem_level = problem_level
    opened.day_position, opened.day_total = day_position, day_total
    opened.day_repeat = day_repeat
    opened.option_order = option_order
    session.flush()
    return opened


def get_open_item(session: Session, user: User) -> OpenItem | None:
    """Return the item the learner has open in a drill, if any."""
    # Read afresh: another request of the learner may have answered it since
    # this session last looked.
    return session.get(OpenItem, user.id, populate_existing=True)
