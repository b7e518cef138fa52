"""Class priors: FSRS-6 parameters pooled over a class's shared histories.

A class of learners drilling the same skills forgets in similar ways, so a new
member starts from parameters fitted on the class's pooled reviews instead of
the global defaults, and each learner's own fit is blended toward them.

Sharing rule (the one the class dashboard follows): a class pools the reviews
of its learners (teachers' own reviews are not pooled) made since each joined;
a learner who leaves stops counting at the next fit. Each fit is stored with
its date and the number of reviews and learners it saw.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from sqlalchemy import Select, bindparam, select
from sqlalchemy.orm import Session

from quizsvc import scheduling
from quizsvc.models import ClassParameters, Classroom, Membership, Review, User
from quizsvc.scheduling.fitting import SEEDS, average_parameters, fit_seeded
from quizsvc.services import resolve_now

# Pooled reviews a class needs before it gets a prior: below this the pooled
# fit is mostly seed noise (the study behind issue 25 found fits settle from a
# few thousand training items) and the defaults are the safer start.
MIN_CLASS_REVIEWS = 2000
# And at least this many learners, so the prior is not one learner's fit.
MIN_CLASS_LEARNERS = 3


def shared_reviews(class_id: int) -> Select:
    """The reviews a class may pool: its learners' reviews since they joined."""
    return (
        select(Review.card_id, Review.reviewed_at, Review.rating, Review.user_id)
        .join(
            Membership,
            (Membership.user_id == Review.user_id)
            & (Membership.class_id == class_id)
            & (Membership.role == "learner"),
        )
        .where(Review.reviewed_at >= Membership.joined_at)
        .order_by(Review.reviewed_at, Review.id)
    )


def class_histories(
    session: Session, classroom: Classroom
) -> tuple[scheduling.Histories | None, int]:
    """Return the class's pooled histories (None when empty) and its learner count."""
    rows = session.execute(shared_reviews(classroom.id)).all()
    if not rows:
        return None, 0
    learners = len({row.user_id for row in rows})
    histories = scheduling.Histories.from_log(
        scheduling.LoggedReview(card_id, at, rating) for card_id, at, rating, _ in rows
    )
    return histories, learners


@dataclass(frozen=True)
class ClassPriorResult:
    """What fitting one class's prior found and did."""

    class_id: int
    name: str
    status: Literal["fitted", "not_enough_reviews"]
    review_count: int
    learner_count: int
    parameters: tuple[float, ...] | None = None

    def line(self) -> str:
        """A one-line summary for the command line."""
        head = (
            f"class {self.class_id} ({self.name}): {self.review_count} shared reviews "
            f"of {self.learner_count} learners"
        )
        if self.status == "fitted":
            return f"{head} → class prior fitted"
        return (
            f"{head} → no class prior yet (needs {MIN_CLASS_REVIEWS} reviews of "
            f"{MIN_CLASS_LEARNERS} learners)"
        )


def fit_class_prior(
    session: Session,
    classroom: Classroom,
    *,
    now: datetime | None = None,
    seeds: Sequence[int] = SEEDS,
    fitter: Callable[[Sequence, int], tuple[float, ...]] = fit_seeded,
) -> ClassPriorResult:
    """Fit the class's pooled parameters (mean of the seeds' fits) and store them."""
    now = resolve_now(now)
    histories, learners = class_histories(session, classroom)
    count = histories.count if histories is not None else 0
    if histories is None or count < MIN_CLASS_REVIEWS or learners < MIN_CLASS_LEARNERS:
        return ClassPriorResult(
            classroom.id, classroom.name, "not_enough_reviews", count, learners
        )
    items = scheduling.fitting.training_items(histories)
    try:
        parameters = average_parameters([fitter(items, seed) for seed in seeds])
    except ValueError:
        return ClassPriorResult(
            classroom.id, classroom.name, "not_enough_reviews", count, learners
        )
    session.add(
        ClassParameters(
            class_id=classroom.id,
            parameters=list(parameters),
            fitted_at=now,
            review_count=count,
            learner_count=learners,
        )
    )
    session.flush()
    return ClassPriorResult(
        classroom.id, classroom.name, "fitted", count, learners, parameters
    )


def latest_class_prior(session: Session, class_id: int) -> ClassParameters | None:
    """Return the class's latest fitted prior, if any."""
    return session.scalar(
        select(ClassParameters)
        .where(ClassParameters.class_id == class_id)
        .order_by(ClassParameters.fitted_at.desc(), ClassParameters.id.desc())
        .limit(1)
    )


# Built once: a learner without parameters of their own runs it at every
# drill step (see quizsvc.services.parameters).
_LEARNER_PRIOR_PARAMETERS = (
    select(ClassParameters.parameters)
    .join(
        Membership,
        (Membership.class_id == ClassParameters.class_id)
        & (Membership.user_id == bindparam("user_id"))
        & (Membership.role == "learner"),
    )
    .order_by(ClassParameters.fitted_at.desc(), ClassParameters.id.desc())
    .limit(1)
)


def learner_prior_parameters(session: Session, user: User) -> tuple[float, ...] | None:
    """Return the newest prior among the user's classes (as a learner), if any."""
    stored = session.scalar(_LEARNER_PRIOR_PARAMETERS, {"user_id": user.id})
    return tuple(stored) if stored else None


def learner_class_prior(
    session: Session, user: User
) -> tuple[ClassParameters, Classroom] | None:
    """Return the newest prior among the classes the user is a learner of."""
    row = session.execute(
        select(ClassParameters, Classroom)
        .join(Classroom, Classroom.id == ClassParameters.class_id)
        .join(
            Membership,
            (Membership.class_id == ClassParameters.class_id)
            & (Membership.user_id == user.id)
            & (Membership.role == "learner"),
        )
        .order_by(ClassParameters.fitted_at.desc(), ClassParameters.id.desc())
        .limit(1)
    ).first()
    return (row[0], row[1]) if row is not None else None
