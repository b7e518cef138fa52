"""Per-learner FSRS parameters: which set schedules a learner, and rescheduling.

A learner is scheduled by, in order: their latest adopted parameters (their
own fit, or their class's prior adopted for them by `quizsvc fsrs optimize`,
see quizsvc.services.optimization), else the prior of a class they learn in
(quizsvc.services.class_priors), else the FSRS-6 defaults. `scheduled_by` says
which, since when and on how many reviews, with the measured gain.
`reschedule_learner` replays every card of a learner with new parameters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import groupby
from typing import Literal

from sqlalchemy import bindparam, literal, select, union_all, update
from sqlalchemy.orm import Session

from quizsvc import scheduling
from quizsvc.db.transactions import phase_cache
from quizsvc.models import (
    Card,
    ClassParameters,
    FsrsParameters,
    Membership,
    Review,
    User,
)
from quizsvc.services import resolve_now
from quizsvc.services.class_priors import learner_class_prior
from quizsvc.services.settings import load_settings

_PARAMETERS_CACHE = "fsrs_parameters"


# Built once: every drill step runs it, and building a statement (and its
# cache key) costs several times what SQLite takes to run it. One statement
# for both sources, so a learner without parameters of their own costs no
# second round trip: their adopted rows first, then their classes' priors.
_OWN = select(
    FsrsParameters.parameters.label("parameters"),
    literal(0).label("source"),
    FsrsParameters.fitted_at.label("fitted_at"),
    FsrsParameters.id.label("id"),
).where(
    FsrsParameters.user_id == bindparam("user_id"),
    FsrsParameters.adopted.is_(True),
)
_PRIOR = select(
    ClassParameters.parameters.label("parameters"),
    literal(1).label("source"),
    ClassParameters.fitted_at.label("fitted_at"),
    ClassParameters.id.label("id"),
).join(
    Membership,
    (Membership.class_id == ClassParameters.class_id)
    & (Membership.user_id == bindparam("user_id"))
    & (Membership.role == "learner"),
)
_SCHEDULING_PARAMETERS = union_all(_OWN, _PRIOR).subquery()
_CURRENT_PARAMETERS = (
    select(_SCHEDULING_PARAMETERS.c.parameters)
    .order_by(
        _SCHEDULING_PARAMETERS.c.source,
        _SCHEDULING_PARAMETERS.c.fitted_at.desc(),
        _SCHEDULING_PARAMETERS.c.id.desc(),
    )
    .limit(1)
)


def current_parameters(session: Session, user: User) -> tuple[float, ...]:
    """Return the parameters that schedule the learner (see the module docstring)."""
    # Read once per transaction (and its read phase): an answer that opens the
    # next item needs them twice, for the card's schedule and the queue's decay.
    known = phase_cache(session, _PARAMETERS_CACHE)
    if user.id not in known:
        stored = session.scalar(_CURRENT_PARAMETERS, {"user_id": user.id})
        known[user.id] = tuple(stored) if stored else scheduling.DEFAULT_PARAMETERS
    return known[user.id]


def forget_current_parameters(session: Session, user: User) -> None:
    """Drop what current_parameters read in this transaction (new ones adopted)."""
    phase_cache(session, _PARAMETERS_CACHE).pop(user.id, None)


@dataclass(frozen=True)
class ScheduledBy:
    """Which parameters schedule a learner, and what they were measured to gain."""

    kind: Literal["default", "class_prior", "own_fit"]
    # When the parameters were fitted, and on how many reviews.
    since: datetime | None = None
    review_count: int | None = None
    class_name: str | None = None
    # The rolling log loss minus the defaults' (negative is better), with its
    # 95% interval; None when not measured on this learner's own reviews.
    gain: float | None = None
    gain_low: float | None = None
    gain_high: float | None = None
    method: str | None = None


def scheduled_by(session: Session, user: User) -> ScheduledBy:
    """Say which parameters schedule the learner, since when, and the gain."""
    adopted = session.scalar(
        select(FsrsParameters)
        .where(FsrsParameters.user_id == user.id, FsrsParameters.adopted.is_(True))
        .order_by(FsrsParameters.fitted_at.desc(), FsrsParameters.id.desc())
        .limit(1)
    )
    if adopted is not None:
        gain = None
        if adopted.log_loss_fitted is not None and adopted.log_loss_current is not None:
            gain = adopted.log_loss_fitted - adopted.log_loss_current
        return ScheduledBy(
            "class_prior" if adopted.method == "class_prior" else "own_fit",
            adopted.fitted_at,
            adopted.review_count,
            None,
            gain,
            adopted.delta_log_loss_low,
            adopted.delta_log_loss_high,
            adopted.method,
        )
    prior = learner_class_prior(session, user)
    if prior is not None:
        stored, classroom = prior
        return ScheduledBy(
            "class_prior", stored.fitted_at, stored.review_count, classroom.name
        )
    return ScheduledBy("default")


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
