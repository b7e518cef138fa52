"""An honest comparison of schedulers on a review log, and the adoption rule.

Two ways to split a log by time:

- rolling (`rolling_segments`): from a start (the median review time unless
  given) the log is cut into weeks; each week is predicted by parameters
  fitted only on the reviews before it, refitted every week on the whole
  history so far (an expanding window), as `quizsvc fsrs optimize` would have.
- 80/20 (`split_segments`): one fit on the earlier part, scored on the latest
  fifth.

Methods (names kept by the JSON report): `default` (FSRS-6 defaults), `sm2`
(Anki's SM-2), `fit` (one fsrs-rs seed; scores averaged over the seeds),
`fit_seeds` (the mean of the seeds' fits), `blend_0.25` / `blend_0.5` /
`blend_0.75` (that share of `fit_seeds`, the rest the blend target: the
defaults, or the class prior when there is one) and `class_prior` (the class's
pooled parameters, when given). Every method is scored on the same reviews by
log loss, RMSE(bins) and AUC, with a card-clustered paired bootstrap 95%
interval of its log loss minus the defaults'.

`adoption` is the rule `optimize` follows: of `fit_seeds`, the blends and the
class prior, take the lowest log loss, and adopt it only if its interval lies
wholly below zero (by more than ADOPTION_MARGIN); otherwise keep the defaults.
A single-seed fit is never a candidate: its seed is noise.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

import numpy as np

from quizsvc.scheduling.cards import DEFAULT_PARAMETERS
from quizsvc.scheduling.evaluation import Histories, _Target, sm2_predictions
from quizsvc.scheduling.fitting import (
    BLEND_WEIGHTS,
    SEEDS,
    average_parameters,
    blend_parameters,
    fit_seeded,
    training_items,
)
from quizsvc.scheduling.metrics import (
    BOOTSTRAP_DRAWS,
    auc,
    log_losses,
    paired_bootstrap_ci,
    rmse_bins,
)
from quizsvc.scheduling.retrievability import decay_of, retrievability_many

METHODS = (
    "default",
    "sm2",
    "fit",
    "fit_seeds",
    "blend_0.25",
    "blend_0.5",
    "blend_0.75",
    "class_prior",
)
# What optimize may adopt; `default` is what it keeps otherwise.
CANDIDATES = ("fit_seeds", "blend_0.25", "blend_0.5", "blend_0.75", "class_prior")
# The weight of the fit in each candidate (the rest is the blend target).
FIT_WEIGHT = {"fit_seeds": 1.0, **{f"blend_{w:g}": w for w in BLEND_WEIGHTS}}
WEEK = timedelta(days=7)
# A gain smaller than this is no gain worth moving a learner's cards for; it
# also keeps a fit that fell back to its blend target (identical predictions,
# rounding aside) from counting as "below 0".
ADOPTION_MARGIN = 1e-4

Split = Literal["rolling", "80/20"]
Fitter = Callable[[Sequence, int], tuple[float, ...]]


@dataclass(frozen=True)
class Segment:
    """Reviews to predict with parameters fitted on the targets before `cutoff`."""

    cutoff: datetime
    targets: tuple[_Target, ...]


def rolling_segments(
    histories: Histories, start: datetime | None = None, step: timedelta = WEEK
) -> list[Segment]:
    """Cut the targets from `start` (default: the median review time) into weeks."""
    targets = sorted(histories.targets(), key=lambda t: t.reviewed_at)
    if len(targets) < 2:
        raise ValueError("the log has too few reviews a day or more apart to split")
    if start is None:
        times = sorted(
            r.reviewed_at for rows in histories.reviews.values() for r in rows
        )
        start = times[(len(times) - 1) // 2]
    if start > targets[-1].reviewed_at:
        raise ValueError(f"no review a day or more apart after {start:%Y-%m-%d}")
    segments, cutoff = [], start
    while cutoff <= targets[-1].reviewed_at:
        week = tuple(t for t in targets if cutoff <= t.reviewed_at < cutoff + step)
        if week:
            segments.append(Segment(cutoff, week))
        cutoff += step
    return segments


def split_segments(histories: Histories, test_fraction: float = 0.2) -> list[Segment]:
    """One segment: the latest `test_fraction` of targets, fitted on the rest."""
    cutoff = histories.cutoff(test_fraction)
    test = tuple(t for t in histories.targets() if t.reviewed_at >= cutoff)
    return [Segment(cutoff, test)]


def predict(
    histories: Histories, targets: Sequence[_Target], parameters: Sequence[float]
) -> np.ndarray:
    """Predict recall of each target from the FSRS-6 memory state before it."""
    from fsrs_rs_python import FSRS, FSRSItem, FSRSReview

    cards = sorted({t.card_id for t in targets}, key=str)
    items = [
        FSRSItem(
            [
                FSRSReview(r.rating, gap)
                for r, gap in zip(histories.reviews[c], histories.days[c], strict=True)
            ]
        )
        for c in cards
    ]
    states = FSRS(list(parameters)).historical_memory_state_batch(items)
    stability_of = dict(zip(cards, states, strict=True))
    stability = np.array(
        [stability_of[t.card_id][t.index - 1].stability for t in targets]
    )
    days = np.array([t.days for t in targets], dtype=float)
    return retrievability_many(stability, days, decay_of(parameters))


@dataclass(frozen=True)
class MethodScore:
    """One method's scores on the predicted reviews."""

    log_loss: float
    rmse_bins: float
    auc: float
    # 95% interval of its log loss minus the defaults' (card-clustered bootstrap).
    delta_log_loss_ci: tuple[float, float]

    def as_dict(self) -> dict:
        """The JSON form of the report's `methods` entries."""
        return {
            "log_loss": round(self.log_loss, 6),
            "rmse_bins": round(self.rmse_bins, 6),
            "auc": round(self.auc, 6),
            "delta_log_loss_ci": [round(v, 6) for v in self.delta_log_loss_ci],
        }


@dataclass(frozen=True)
class Comparison:
    """Every method's scores on one split of a log, and what would be adopted."""

    split: Split
    segments: int
    first_cutoff: datetime
    predicted: int
    scores: dict[str, MethodScore]
    adopted: str
    reason: str
    seeds: tuple[int, ...]

    def as_dict(self) -> dict:
        """The `--json` report."""
        return {
            "split": self.split,
            "methods": {name: score.as_dict() for name, score in self.scores.items()},
            "adopted": self.adopted,
        }


def adoption(scores: Mapping[str, MethodScore]) -> tuple[str, str]:
    """Return the method to adopt and why (see the module docstring)."""
    present = [name for name in CANDIDATES if name in scores]
    if not present:
        return "default", "no fitted candidate to compare"
    best = min(present, key=lambda name: scores[name].log_loss)
    low, high = scores[best].delta_log_loss_ci
    if high < -ADOPTION_MARGIN:
        return best, (
            f"{best}: log loss {low:+.4f} to {high:+.4f} against the defaults "
            "(95% interval below 0)"
        )
    if not np.isfinite(high):
        return "default", "too few reviews to compare"
    return "default", (
        f"the best candidate, {best}, is not surely better: its log loss is "
        f"{low:+.4f} to {high:+.4f} against the defaults (95% interval reaches 0)"
    )


def _target_features(
    histories: Histories, targets: Sequence[_Target]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Elapsed days, review number (1-based) and earlier lapses of each target."""
    days = np.array([t.days for t in targets], dtype=float)
    number = np.array([t.index + 1 for t in targets], dtype=float)
    lapses = np.array(
        [
            sum(
                1
                for i in range(1, t.index)
                if histories.reviews[t.card_id][i].rating == 1
                and histories.days[t.card_id][i] >= 1
            )
            for t in targets
        ],
        dtype=float,
    )
    return days, number, lapses


def compare(
    histories: Histories,
    *,
    split: Split = "rolling",
    start: datetime | None = None,
    test_fraction: float = 0.2,
    seeds: Sequence[int] = SEEDS,
    class_prior: Sequence[float] | None = None,
    fitter: Fitter = fit_seeded,
    draws: int = BOOTSTRAP_DRAWS,
) -> Comparison:
    """Score every method on one split of a log (see the module docstring).

    With a class prior, the blends lean toward it instead of the defaults.
    A week whose earlier history is too short to fit is predicted by the blend
    target for the fitted methods, as optimize would leave such a learner.
    """
    seeds = tuple(seeds)
    if len(seeds) < 1:
        raise ValueError("give at least one seed")
    segments = (
        rolling_segments(histories, start)
        if split == "rolling"
        else split_segments(histories, test_fraction)
    )
    target_base = tuple(class_prior) if class_prior is not None else DEFAULT_PARAMETERS
    fixed: dict[str, tuple[float, ...]] = {"default": DEFAULT_PARAMETERS}
    if class_prior is not None:
        fixed["class_prior"] = tuple(class_prior)
    predictions: dict[str, list[np.ndarray]] = {name: [] for name in fixed}
    per_seed: list[list[np.ndarray]] = [[] for _ in seeds]
    for name in FIT_WEIGHT:
        predictions[name] = []
    targets: list[_Target] = []
    for segment in segments:
        targets.extend(segment.targets)
        for name, values in fixed.items():
            predictions[name].append(predict(histories, segment.targets, values))
        items = training_items(histories, segment.cutoff)
        try:
            fits = [fitter(items, seed) for seed in seeds]
        except ValueError:
            fits = [target_base] * len(seeds)
        for index, values in enumerate(fits):
            per_seed[index].append(predict(histories, segment.targets, values))
        mean = average_parameters(fits)
        for name, weight in FIT_WEIGHT.items():
            blended = blend_parameters(mean, target_base, weight)
            predictions[name].append(predict(histories, segment.targets, blended))
    recalled = np.array([t.recalled for t in targets], dtype=float)
    cards = [str(t.card_id) for t in targets]
    features = _target_features(histories, targets)
    joined = {name: np.concatenate(parts) for name, parts in predictions.items()}
    joined["sm2"] = sm2_predictions(histories, targets)
    seed_predictions = [np.concatenate(parts) for parts in per_seed]
    reference = log_losses(joined["default"], recalled)

    def score(runs: list[np.ndarray]) -> MethodScore:
        losses = np.mean([log_losses(p, recalled) for p in runs], axis=0)
        return MethodScore(
            float(np.mean([log_losses(p, recalled).mean() for p in runs])),
            float(np.mean([rmse_bins(p, recalled, *features) for p in runs])),
            float(np.mean([auc(p, recalled) for p in runs])),
            paired_bootstrap_ci(losses, reference, cards, draws=draws),
        )

    scores = {}
    for name in METHODS:
        if name == "fit":
            scores[name] = score(seed_predictions)
        elif name in joined:
            scores[name] = score([joined[name]])
    adopted, reason = adoption(scores)
    return Comparison(
        split,
        len(segments),
        segments[0].cutoff,
        len(targets),
        scores,
        adopted,
        reason,
        seeds,
    )
