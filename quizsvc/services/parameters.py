"""Per-learner FSRS parameters: the current set, optimization and rescheduling.

`optimize_learner` fits FSRS-6 parameters (fsrs-rs-python) on a learner's
earlier reviews and scores them against the current parameters on the most
recent ones (a time-ordered split). Better fits are adopted, and the learner's
cards are rescheduled by replaying their review logs with the new parameters;
every attempt, adopted or not, is kept in `fsrs_parameters`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import groupby
from typing import Literal

from sqlalchemy import bindparam, select, update
from sqlalchemy.orm import Session

from quizsvc import scheduling
from quizsvc.db.transactions import phase_cache
from quizsvc.models import Card, FsrsParameters, Review, User
from quizsvc.services import resolve_now
from quizsvc.services.settings import load_settings

_PARAMETERS_CACHE = "fsrs_parameters"
# Score the fit on the learner's latest fifth of reviews, which it did not see.
TEST_FRACTION = 0.2


# Built once: every drill step runs it, and building a statement (and its
# cache key) costs several times what SQLite takes to run it.
_ADOPTED_PARAMETERS = (
    select(FsrsParameters.parameters)
    .where(
        FsrsParameters.user_id == bindparam("user_id"),
        FsrsParameters.adopted.is_(True),
    )
    .order_by(FsrsParameters.fitted_at.desc(), FsrsParameters.id.desc())
    .limit(1)
)


def current_parameters(session: Session, user: User) -> tuple[float, ...]:
    """Return the learner's adopted FSRS parameters, or the FSRS-6 defaults."""
    # Read once per transaction (and its read phase): an answer that opens the
    # next item needs them twice, for the card's schedule and the queue's decay.
    known = phase_cache(session, _PARAMETERS_CACHE)
    if user.id not in known:
        stored = session.scalar(_ADOPTED_PARAMETERS, {"user_id": user.id})
        known[user.id] = tuple(stored) if stored else scheduling.DEFAULT_PARAMETERS
    return known[user.id]


@dataclass(frozen=True)
class OptimizationResult:
    """What optimizing one learner's parameters found and did."""

    username: str
    status: Literal["adopted", "kept", "not_enough_reviews"]
    review_count: int
    log_loss_current: float | None = None
    log_loss_fitted: float | None = None
    parameters: tuple[float, ...] | None = None
    rescheduled_cards: int = 0

    def line(self) -> str:
        """A one-line summary for the command line."""
        if self.status == "not_enough_reviews":
            return (
                f"{self.username}: {self.review_count} reviews, not enough to fit "
                "parameters yet"
            )
        verdict = (
            f"adopted, {self.rescheduled_cards} cards rescheduled"
            if self.status == "adopted"
            else "kept the current parameters"
        )
        return (
            f"{self.username}: {self.review_count} reviews, log loss on the latest "
            f"reviews: current {self.log_loss_current:.4f}, fitted "
            f"{self.log_loss_fitted:.4f} → {verdict}"
        )


def learner_histories(session: Session, user: User) -> scheduling.Histories:
    """Return the learner's review log grouped by card."""
    rows = session.execute(
        select(Review.card_id, Review.reviewed_at, Review.rating)
        .where(Review.user_id == user.id)
        .order_by(Review.reviewed_at, Review.id)
    )
    return scheduling.Histories.from_log(
        scheduling.LoggedReview(card_id, reviewed_at, rating)
        for card_id, reviewed_at, rating in rows
    )


def optimize_learner(
    session: Session,
    user: User,
    *,
    now: datetime | None = None,
    min_reviews: int = scheduling.MIN_REVIEWS_TO_OPTIMIZE,
    fit: Callable[..., tuple[float, ...]] = scheduling.fit_parameters,
) -> OptimizationResult:
    """Fit parameters for one learner; adopt them only if they predict better."""
    now = resolve_now(now)
    histories = learner_histories(session, user)
    count = histories.count
    try:
        if count < min_reviews:
            raise ValueError("too few reviews")
        cutoff = histories.cutoff(TEST_FRACTION)
    except ValueError:
        return OptimizationResult(user.username, "not_enough_reviews", count)
    current = current_parameters(session, user)
    fitted = scheduling.check_parameters(fit(histories, before=cutoff))
    evaluation = scheduling.evaluate_models(
        histories,
        test_fraction=TEST_FRACTION,
        parameters={"current": current, "fitted": fitted},
        fit=False,
        sm2=False,
    )
    loss_current = evaluation.scores["current"].log_loss
    loss_fitted = evaluation.scores["fitted"].log_loss
    adopted = loss_fitted < loss_current
    session.add(
        FsrsParameters(
            user_id=user.id,
            parameters=list(fitted),
            fitted_at=now,
            review_count=histories.count_before(cutoff),
            log_loss_current=loss_current,
            log_loss_fitted=loss_fitted,
            adopted=adopted,
        )
    )
    session.flush()
    if adopted:  # what current_parameters read in this transaction is old now
        phase_cache(session, _PARAMETERS_CACHE)[user.id] = tuple(fitted)
    rescheduled = reschedule_learner(session, user, fitted, now=now) if adopted else 0
    return OptimizationResult(
        user.username,
        "adopted" if adopted else "kept",
        count,
        loss_current,
        loss_fitted,
        fitted,
        rescheduled,
    )


def reschedule_learner(
    session: Session,
    user: User,
    parameters: Sequence[float],
    *,
    now: datetime | None = None,
) -> int:
    """Replay every card of the learner with these parameters; return how many."""
    now = resolve_now(now)
    retention = load_settings(session, user).desired_retention
    rows = session.execute(
        select(Review.card_id, Review.reviewed_at, Review.rating)
        .where(Review.user_id == user.id)
        .order_by(Review.card_id, Review.reviewed_at, Review.id)
    )
    changes = []
    for card_id, reviews in groupby(rows, key=lambda row: row[0]):
        state = scheduling.replay_card(
            ((at, rating) for _, at, rating in reviews),
            card_id=card_id,
            parameters=parameters,
            desired_retention=retention,
        )
        changes.append(
            {
                "id": card_id,
                "state": state.state,
                "step": state.step,
                "stability": state.stability,
                "difficulty": state.difficulty,
                "due": state.due,
                "last_review": state.last_review,
                "reps": state.reps,
                "lapses": state.lapses,
                "updated_at": now,
            }
        )
    if changes:
        session.execute(update(Card), changes)
        # The bulk update bypasses loaded Card objects; make them reload.
        for card in [
            obj for obj in session.identity_map.values() if isinstance(obj, Card)
        ]:
            session.expire(card)
    return len(changes)
