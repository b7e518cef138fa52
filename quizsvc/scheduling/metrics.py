"""Scoring recall predictions: log loss, RMSE(bins), AUC and a paired bootstrap.

RMSE(bins) is srs-benchmark's: reviews are grouped by elapsed days, review
number and lapse count, each bucketed on a geometric scale, and the root mean
squared gap between mean predicted and mean observed recall is weighted by the
bucket sizes. AUC is the Mann-Whitney probability that a remembered review was
predicted higher than a forgotten one (ties count half). The interval of a
difference in log loss resamples whole cards, since reviews of one card are
not independent of each other.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

EPSILON = 1e-6
BOOTSTRAP_DRAWS = 2000


def log_losses(predicted: np.ndarray, recalled: np.ndarray) -> np.ndarray:
    """Return the log loss of each prediction (probabilities clipped to 1e-6)."""
    p = np.clip(np.asarray(predicted, dtype=float), EPSILON, 1 - EPSILON)
    y = np.asarray(recalled, dtype=float)
    if p.shape != y.shape:
        raise ValueError("need as many predictions as outcomes")
    return -(y * np.log(p) + (1 - y) * np.log(1 - p))


def _geometric_bucket(values: np.ndarray, scale: float, base: float) -> np.ndarray:
    """srs-benchmark's bucket: scale·base^⌊log_base(x)⌋, rounded (0 stays 0)."""
    values = np.asarray(values, dtype=float)
    out = np.zeros_like(values)
    positive = values > 0
    out[positive] = scale * np.power(
        base, np.floor(np.log(values[positive]) / np.log(base))
    )
    return np.round(out, 2)


def rmse_bins(
    predicted: np.ndarray,
    recalled: np.ndarray,
    elapsed_days: np.ndarray,
    review_number: np.ndarray,
    lapses: np.ndarray,
) -> float:
    """RMSE(bins) as srs-benchmark computes it (see the module docstring)."""
    p = np.asarray(predicted, dtype=float)
    y = np.asarray(recalled, dtype=float)
    if p.size == 0:
        return float("nan")
    keys = np.stack(
        [
            _geometric_bucket(np.maximum(elapsed_days, EPSILON), 2.48, 3.62),
            np.round(_geometric_bucket(review_number, 1.99, 1.89)),
            np.round(_geometric_bucket(lapses, 1.65, 1.73)),
        ],
        axis=1,
    )
    _, group = np.unique(keys, axis=0, return_inverse=True)
    group = group.ravel()
    counts = np.bincount(group).astype(float)
    gap = (
        np.bincount(group, weights=p) / counts - np.bincount(group, weights=y) / counts
    )
    return float(np.sqrt(np.sum(counts * gap**2) / np.sum(counts)))


def auc(predicted: np.ndarray, recalled: np.ndarray) -> float:
    """Area under the ROC curve (NaN when only one outcome occurs)."""
    p = np.asarray(predicted, dtype=float)
    y = np.asarray(recalled, dtype=bool)
    positives, negatives = int(y.sum()), int((~y).sum())
    if positives == 0 or negatives == 0:
        return float("nan")
    # Average ranks, so tied predictions count half.
    values, inverse, counts = np.unique(p, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    average_rank = ends - (counts - 1) / 2.0
    ranks = average_rank[inverse.ravel()]
    rank_sum = ranks[y].sum()
    return float((rank_sum - positives * (positives + 1) / 2) / (positives * negatives))


def paired_bootstrap_ci(
    losses: np.ndarray,
    reference: np.ndarray,
    clusters: Sequence,
    *,
    draws: int = BOOTSTRAP_DRAWS,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float]:
    """95% interval of mean(losses − reference), resampling whole clusters (cards).

    Both loss arrays score the same reviews in the same order; a seeded
    generator makes the interval reproducible.
    """
    diff = np.asarray(losses, dtype=float) - np.asarray(reference, dtype=float)
    if diff.size == 0:
        return (float("nan"), float("nan"))
    _, cluster = np.unique(np.asarray(clusters, dtype=str), return_inverse=True)
    cluster = cluster.ravel()
    sums = np.bincount(cluster, weights=diff)
    sizes = np.bincount(cluster).astype(float)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, sums.size, size=(draws, sums.size))
    means = sums[picks].sum(axis=1) / sizes[picks].sum(axis=1)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return (float(low), float(high))
