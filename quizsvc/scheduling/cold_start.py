"""Cold start: does a class's pooled prior predict a new learner better than the
FSRS-6 defaults over their first N reviews?

Two sources, reported apart:

- simulated (`simulate_class`): learners whose true FSRS-6 parameters are drawn
  around a class mean (each parameter times exp(N(0, SPREAD²)), clipped to
  FSRS-6's bounds). fsrs-rs-python's `simulate` returns only daily totals and
  final card states, not a review log, so the log is built from its parts:
  each learner's memory follows their own parameters through fsrs-rs's
  `FSRS.next_states`, each review's recall is drawn from that memory's
  retrievability, the grade of a success from the simulator's default review
  rating probabilities (and of a first answer from its first-rating ones), and
  the app schedules with the defaults at 90% desired retention.
- real proxy (`split_cards`): one real log's cards split in two at random, one
  part pooled as "the class", the other predicted as "the new learner".

`cold_start` leaves each learner out in turn, fits the prior (mean of the
seeds' fits) on the others' pooled reviews, and scores prior and defaults on
the learner's first N reviews.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
from fsrs.scheduler import LOWER_BOUNDS_PARAMETERS, UPPER_BOUNDS_PARAMETERS

from quizsvc.scheduling.cards import DEFAULT_PARAMETERS, check_parameters
from quizsvc.scheduling.comparison import predict
from quizsvc.scheduling.evaluation import Histories, LoggedReview
from quizsvc.scheduling.fitting import SEEDS, fit_averaged
from quizsvc.scheduling.metrics import log_losses
from quizsvc.scheduling.retrievability import decay_of, retrievability_many

FIRST_REVIEWS = (50, 100, 200, 400)
# Learners of one class drilling the same skills are more alike than
# srs-benchmark's ~10k users, whose fitted parameters often differ by a factor
# of two or more: a log-normal spread of 0.25 (about ±25% per parameter for
# one standard deviation) keeps members recognisably one class while each
# still needs their own fit in the long run.
SPREAD = 0.25
# The class mean: a real learner's memory, not the global average. These are
# the parameters fsrs-rs fits (mean of SEEDS) on ../shared/data's dev log,
# rounded; a class is a group the defaults were not fitted to.
CLASS_MEAN: tuple[float, ...] = (
    0.15, 0.77, 2.41, 6.4, 6.54, 0.69, 3.06, 0.03, 1.71, 0.2, 0.65,
    1.54, 0.06, 0.32, 1.78, 0.6, 1.87, 0.63, 0.16, 0.15, 0.29,
)  # fmt: skip


def draw_learner_parameters(
    rng: np.random.Generator, mean: Sequence[float] = CLASS_MEAN, spread: float = SPREAD
) -> tuple[float, ...]:
    """Draw one learner's true parameters around the class mean."""
    values = np.asarray(mean, dtype=float) * np.exp(rng.normal(0.0, spread, len(mean)))
    return check_parameters(
        np.clip(values, LOWER_BOUNDS_PARAMETERS, UPPER_BOUNDS_PARAMETERS)
    )


def simulate_learner(
    parameters: Sequence[float],
    *,
    seed: int,
    reviews: int = 600,
    new_per_day: int = 8,
    retention: float = 0.9,
    start: datetime = datetime(2026, 3, 2, tzinfo=UTC),
    prefix: str = "",
) -> list[LoggedReview]:
    """Simulate one learner's log until it holds `reviews` reviews (see the module)."""
    from fsrs_rs_python import FSRS, default_simulator_config

    config = default_simulator_config()
    first = np.asarray(config.first_rating_prob, dtype=float)
    success = np.asarray(config.review_rating_prob, dtype=float)
    truth, app = FSRS(list(parameters)), FSRS(list(DEFAULT_PARAMETERS))
    decay = decay_of(parameters)
    rng = np.random.default_rng(seed)
    # card → (true memory, app memory, last day, due day)
    cards: dict[int, tuple] = {}
    log: list[LoggedReview] = []
    day, next_card = 0, 0
    while len(log) < reviews:
        due = sorted(c for c, state in cards.items() if state[3] <= day)
        for _ in range(new_per_day):
            cards[next_card] = (None, None, day, day)
            due.append(next_card)
            next_card += 1
        for card in due:
            true_memory, app_memory, last, _ = cards[card]
            elapsed = day - last
            if true_memory is None:
                rating = int(rng.choice(4, p=first / first.sum())) + 1
            else:
                recall = retrievability_many([true_memory.stability], [elapsed], decay)[
                    0
                ]
                if rng.random() < recall:
                    rating = int(rng.choice(3, p=success / success.sum())) + 2
                else:
                    rating = 1
            name = ("again", "hard", "good", "easy")[rating - 1]
            true_next = getattr(
                truth.next_states(true_memory, retention, elapsed), name
            )
            app_next = getattr(app.next_states(app_memory, retention, elapsed), name)
            interval = max(1, round(app_next.interval))
            cards[card] = (true_next.memory, app_next.memory, day, day + interval)
            moment = start + timedelta(days=day, minutes=int(rng.integers(0, 600)))
            log.append(LoggedReview(f"{prefix}{card}", moment, rating))
            if len(log) >= reviews:
                break
        day += 1
    return log


def simulate_class(
    learners: int = 20, *, reviews: int = 600, seed: int = 25, spread: float = SPREAD
) -> dict[str, list[LoggedReview]]:
    """Simulate a class: learner name → log, parameters drawn around CLASS_MEAN."""
    rng = np.random.default_rng(seed)
    return {
        f"s{index:02d}": simulate_learner(
            draw_learner_parameters(rng, spread=spread),
            seed=seed * 1000 + index,
            reviews=reviews,
            prefix=f"s{index:02d}:",
        )
        for index in range(learners)
    }


def split_cards(
    log: Sequence[LoggedReview], seed: int
) -> tuple[list[LoggedReview], list[LoggedReview]]:
    """Split a log by card, at random: (the class's part, the new learner's part)."""
    cards = sorted({str(r.card_id) for r in log})
    random.Random(seed).shuffle(cards)
    learner = set(cards[: len(cards) // 2])
    return (
        [r for r in log if str(r.card_id) not in learner],
        [r for r in log if str(r.card_id) in learner],
    )


@dataclass(frozen=True)
class ColdStartRow:
    """Prior vs defaults on the first N reviews, over the held-out learners."""

    first: int
    learners: int
    predicted: int
    log_loss_default: float
    log_loss_prior: float
    # 95% interval of the mean difference (prior − default), over learners.
    delta_ci: tuple[float, float]
    prior_better: int


def _first_reviews_losses(
    log: Sequence[LoggedReview], first: int, prior: Sequence[float]
) -> tuple[np.ndarray, np.ndarray] | None:
    earliest = sorted(log, key=lambda r: r.reviewed_at)[:first]
    histories = Histories.from_log(earliest)
    targets = histories.targets()
    if not targets:
        return None
    recalled = np.array([t.recalled for t in targets], dtype=float)
    return (
        log_losses(predict(histories, targets, DEFAULT_PARAMETERS), recalled),
        log_losses(predict(histories, targets, prior), recalled),
    )


def cold_start(
    logs: Mapping[str, Sequence[LoggedReview]],
    *,
    pools: Mapping[str, Sequence[LoggedReview]] | None = None,
    first_reviews: Sequence[int] = FIRST_REVIEWS,
    seeds: Sequence[int] = SEEDS,
    draws: int = 2000,
) -> list[ColdStartRow]:
    """Score class prior vs defaults on each learner's first N reviews.

    The prior for a learner is fitted on `pools[learner]` when given (the real
    proxy's other half), else on every other learner's log (leave one out).
    """
    priors = {}
    for name in logs:
        pool = (
            list(pools[name])
            if pools is not None
            else [r for other, log in logs.items() if other != name for r in log]
        )
        priors[name] = fit_averaged(Histories.from_log(pool), seeds=seeds)
    rows = []
    rng = np.random.default_rng(0)
    for first in first_reviews:
        defaults, with_prior, counts = [], [], []
        for name, log in logs.items():
            losses = _first_reviews_losses(log, first, priors[name])
            if losses is None:
                continue
            defaults.append(losses[0].mean())
            with_prior.append(losses[1].mean())
            counts.append(losses[0].size)
        if not counts:
            continue
        d, p = np.array(defaults), np.array(with_prior)
        diff = p - d
        picks = rng.integers(0, diff.size, size=(draws, diff.size))
        low, high = np.quantile(diff[picks].mean(axis=1), [0.025, 0.975])
        rows.append(
            ColdStartRow(
                first,
                len(counts),
                int(sum(counts)),
                float(d.mean()),
                float(p.mean()),
                (float(low), float(high)),
                int((diff < 0).sum()),
            )
        )
    return rows
