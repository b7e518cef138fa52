"""Optimizing a learner's FSRS parameters: fit, measure, adopt only a sure gain.

`plan_learner` only reads: it takes the learner's whole history (in time
order), replays the rolling weekly evaluation of quizsvc.scheduling.comparison
(multi-seed fits, blends toward the defaults or the learner's class prior, the
class prior itself), and picks what the adoption rule picks. If that is a fit,
the final parameters are the mean of the seeds' fits on the whole history,
blended by the chosen weight. `apply_plan` then writes, briefly: one
`fsrs_parameters` row (adopted or not, with the measured interval and the
reason) and, when adopted, the learner's cards replayed under the learner's
lock. The command runs the two in separate transactions, so the minutes of
fitting never hold a write lock while the service serves.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from quizsvc import scheduling
from quizsvc.models import FsrsParameters, Review, User
from quizsvc.scheduling.comparison import FIT_WEIGHT, Comparison, Fitter, compare
from quizsvc.scheduling.fitting import (
    SEEDS,
    average_parameters,
    blend_parameters,
    fit_seeded,
    training_items,
)
from quizsvc.services import resolve_now
from quizsvc.services.class_priors import learner_prior_parameters
from quizsvc.services.parameters import (
    forget_current_parameters,
    learner_histories,
    reschedule_learner,
)
from quizsvc.services.reviews import lock_learner

MIN_REVIEWS_TO_OPTIMIZE = scheduling.MIN_REVIEWS_TO_OPTIMIZE

Status = Literal["adopted", "kept", "not_enough_reviews"]


@dataclass(frozen=True)
class Plan:
    """What optimizing one learner would do (computed without writing)."""

    user_id: int
    username: str
    status: Status
    review_count: int
    comparison: Comparison | None = None
    parameters: tuple[float, ...] | None = None
    method: str | None = None
    blend_target: str | None = None


@dataclass(frozen=True)
class OptimizationResult:
    """What optimizing one learner's parameters found and did."""

    username: str
    status: Status
    review_count: int
    log_loss_default: float | None = None
    log_loss_candidate: float | None = None
    method: str | None = None
    interval: tuple[float, float] | None = None
    reason: str | None = None
    parameters: tuple[float, ...] | None = None
    rescheduled_cards: int = 0

    def line(self) -> str:
        """A one-line summary for the command line."""
        if self.status == "not_enough_reviews":
            return (
                f"{self.username}: {self.review_count} reviews, fewer than "
                f"{MIN_REVIEWS_TO_OPTIMIZE}: scheduled by the class prior or the "
                "defaults, not fitted yet"
            )
        low, high = self.interval or (float("nan"), float("nan"))
        measured = (
            f"{self.username}: {self.review_count} reviews; rolling log loss: "
            f"default {self.log_loss_default:.4f}, {self.method} "
            f"{self.log_loss_candidate:.4f} (difference {low:+.4f} to {high:+.4f})"
        )
        if self.status == "adopted":
            return (
                f"{measured} → adopted {self.method}, "
                f"{self.rescheduled_cards} cards rescheduled"
            )
        return f"{measured} → kept the current parameters: {self.reason}"


def plan_learner(
    session: Session,
    user: User,
    *,
    min_reviews: int = MIN_REVIEWS_TO_OPTIMIZE,
    seeds: Sequence[int] = SEEDS,
    fitter: Fitter = fit_seeded,
) -> Plan:
    """Decide, without writing, what optimizing the learner would adopt."""
    histories = learner_histories(session, user)
    count = histories.count
    if count < min_reviews:
        return Plan(user.id, user.username, "not_enough_reviews", count)
    prior = learner_prior_parameters(session, user)
    try:
        comparison = compare(histories, seeds=seeds, class_prior=prior, fitter=fitter)
    except ValueError:
        return Plan(user.id, user.username, "not_enough_reviews", count)
    target_name = "class_prior" if prior is not None else "default"
    target = prior if prior is not None else scheduling.DEFAULT_PARAMETERS
    adopted = comparison.adopted
    if adopted == "default":
        best = _best_candidate(comparison)
        return Plan(
            user.id, user.username, "kept", count, comparison, None, best, target_name
        )
    if adopted == "class_prior":
        return Plan(
            user.id, user.username, "adopted", count, comparison, prior, adopted, None
        )
    items = training_items(histories)
    try:
        fitted = average_parameters([fitter(items, seed) for seed in seeds])
    except ValueError:
        # The weekly refits fitted but the whole history did not: keep.
        return Plan(
            user.id,
            user.username,
            "kept",
            count,
            comparison,
            None,
            adopted,
            target_name,
        )
    parameters = blend_parameters(fitted, target, FIT_WEIGHT[adopted])
    return Plan(
        user.id,
        user.username,
        "adopted",
        count,
        comparison,
        parameters,
        adopted,
        target_name,
    )


def _best_candidate(comparison: Comparison) -> str:
    candidates = [n for n in ("fit_seeds", *FIT_WEIGHT) if n in comparison.scores]
    if "class_prior" in comparison.scores:
        candidates.append("class_prior")
    return min(candidates, key=lambda n: comparison.scores[n].log_loss)


def apply_plan(
    session: Session, user: User, plan: Plan, *, now: datetime | None = None
) -> OptimizationResult:
    """Store the attempt and, when adopted, reschedule the learner's cards."""
    now = resolve_now(now)
    if plan.status == "not_enough_reviews" or plan.comparison is None:
        return OptimizationResult(plan.username, plan.status, plan.review_count)
    comparison = plan.comparison
    method = plan.method or "default"
    score = comparison.scores.get(method)
    default = comparison.scores["default"]
    interval = score.delta_log_loss_ci if score is not None else None
    adopted = plan.status == "adopted"
    reason = comparison.reason
    if not adopted and comparison.adopted != "default":
        reason = "fsrs-rs could not fit the whole history"
    # An adopted row's parameters schedule the learner from now on; a kept
    # attempt fitted nothing on the whole history and stores none.
    parameters = plan.parameters or ()
    session.add(
        FsrsParameters(
            user_id=user.id,
            parameters=list(parameters),
            fitted_at=now,
            review_count=plan.review_count,
            log_loss_current=default.log_loss,
            log_loss_fitted=score.log_loss if score is not None else None,
            adopted=adopted,
            method=method,
            blend_target=plan.blend_target,
            delta_log_loss_low=interval[0] if interval else None,
            delta_log_loss_high=interval[1] if interval else None,
            reason=reason,
        )
    )
    session.flush()
    # What current_parameters read earlier in this transaction is old now.
    forget_current_parameters(session, user)
    rescheduled = 0
    if adopted:
        # Under the learner's lock, so an answer recorded meanwhile is either
        # in the replayed log or waits for the replay to commit.
        lock_learner(session, user)
        rescheduled = reschedule_learner(session, user, parameters, now=now)
    return OptimizationResult(
        plan.username,
        plan.status,
        plan.review_count,
        default.log_loss,
        score.log_loss if score is not None else None,
        method,
        interval,
        reason,
        parameters if adopted else None,
        rescheduled,
    )


def optimize_learner(
    session: Session,
    user: User,
    *,
    now: datetime | None = None,
    min_reviews: int = MIN_REVIEWS_TO_OPTIMIZE,
    seeds: Sequence[int] = SEEDS,
    fitter: Fitter = fit_seeded,
) -> OptimizationResult:
    """Plan and apply in one session (the command splits the two)."""
    plan = plan_learner(
        session, user, min_reviews=min_reviews, seeds=seeds, fitter=fitter
    )
    return apply_plan(session, user, plan, now=now)


def needs_optimizing(session: Session, user: User) -> bool:
    """Whether the learner has reviews newer than their latest attempt.

    A run over every learner skips those already tried on their current
    history, so an interrupted run picks up where it stopped.
    """
    last_attempt = session.scalar(
        select(func.max(FsrsParameters.fitted_at)).where(
            FsrsParameters.user_id == user.id
        )
    )
    if last_attempt is None:
        return True
    last_review = session.scalar(
        select(func.max(Review.reviewed_at)).where(Review.user_id == user.id)
    )
    return last_review is not None and last_review > last_attempt
