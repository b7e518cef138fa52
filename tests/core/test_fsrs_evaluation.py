"""Honest comparison: metrics, blends, the adoption gate, determinism, cold start."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quizsvc import scheduling
from quizsvc.scheduling import cold_start, comparison, fitting, metrics
from quizsvc.scheduling.comparison import MethodScore, adoption

T0 = datetime(2026, 3, 2, tzinfo=UTC)
DEFAULTS = np.array(scheduling.DEFAULT_PARAMETERS)


# --- metrics ---------------------------------------------------------------------


def test_auc_counts_pairs_ranked_right_and_ties_as_half():
    """Is AUC the share of (remembered, forgotten) pairs ranked right, ties half?"""
    assert metrics.auc(np.array([0.9, 0.8, 0.2]), np.array([1, 1, 0])) == 1.0
    assert metrics.auc(np.array([0.1, 0.9]), np.array([1, 0])) == 0.0
    assert metrics.auc(np.array([0.5, 0.5]), np.array([1, 0])) == 0.5
    assert math.isnan(metrics.auc(np.array([0.5, 0.6]), np.array([1, 1])))


def test_rmse_bins_is_zero_when_each_bin_is_calibrated():
    """Does RMSE(bins) vanish when every bin's mean prediction matches its outcomes?"""
    recalled = np.array([1, 0, 1, 1])
    predicted = np.array([0.5, 0.5, 1.0, 1.0])
    days = np.array([1, 1, 30, 30])
    number = np.array([2, 2, 5, 5])
    lapses = np.zeros(4)
    assert metrics.rmse_bins(predicted, recalled, days, number, lapses) == 0.0
    # One bin off by 0.5 over half of the reviews: sqrt(0.5 · 0.25).
    worse = np.array([0.5, 0.5, 0.5, 0.5])
    assert metrics.rmse_bins(worse, recalled, days, number, lapses) == pytest.approx(
        math.sqrt(0.5 * 0.25)
    )


def test_bootstrap_interval_resamples_whole_cards_reproducibly():
    """Is the interval of a sure gain below 0, and the same for the same seed?"""
    rng = np.random.default_rng(1)
    reference = rng.uniform(0.2, 0.6, 400)
    better = reference - 0.01 - rng.uniform(0, 0.002, 400)
    cards = [f"c{i // 4}" for i in range(400)]
    low, high = metrics.paired_bootstrap_ci(better, reference, cards)
    # A real interval around the mean difference, below 0, not a point.
    assert low < (better - reference).mean() < high < 0
    assert metrics.paired_bootstrap_ci(better, reference, cards) == (low, high)
    same = metrics.paired_bootstrap_ci(reference, reference, cards)
    assert same == (0.0, 0.0)


# --- blends ----------------------------------------------------------------------

parameter_sets = st.lists(
    st.floats(0.5, 2.0), min_size=len(DEFAULTS), max_size=len(DEFAULTS)
).map(lambda factors: scheduling.check_parameters(DEFAULTS * np.array(factors)))


@settings(max_examples=60, deadline=None)
@given(fitted=parameter_sets, target=parameter_sets, weight=st.floats(0.0, 1.0))
def test_a_blend_lies_between_the_fit_and_its_target(fitted, target, weight):
    """Is every blended parameter between the fit's and the target's?"""
    blended = np.array(fitting.blend_parameters(fitted, target, weight))
    low = np.minimum(fitted, target) - 1e-9
    high = np.maximum(fitted, target) + 1e-9
    assert ((low <= blended) & (blended <= high)).all()


def test_blend_weights_are_the_share_of_the_fit():
    """Is weight 1 the fit, 0 the target and 0.25 a quarter of the way to the fit?"""
    fitted = scheduling.check_parameters(DEFAULTS * 1.2)
    target = scheduling.DEFAULT_PARAMETERS
    assert fitting.blend_parameters(fitted, target, 1.0) == pytest.approx(fitted)
    assert fitting.blend_parameters(fitted, target, 0.0) == pytest.approx(target)
    quarter = np.array(fitting.blend_parameters(fitted, target, 0.25))
    assert quarter == pytest.approx(DEFAULTS + 0.25 * (np.array(fitted) - DEFAULTS))
    with pytest.raises(ValueError, match="blend weight"):
        fitting.blend_parameters(fitted, target, 1.5)


# --- the adoption gate -----------------------------------------------------------


def _score(loss: float, low: float, high: float) -> MethodScore:
    return MethodScore(loss, 0.05, 0.7, (low, high))


intervals = st.tuples(st.floats(-0.05, 0.05), st.floats(0.0, 0.05)).map(
    lambda pair: (pair[0], pair[0] + pair[1])
)


@settings(max_examples=200, deadline=None)
@given(
    candidates=st.dictionaries(
        st.sampled_from(comparison.CANDIDATES),
        st.tuples(st.floats(0.2, 0.6), intervals),
        min_size=1,
    )
)
def test_adoption_never_takes_a_candidate_whose_interval_reaches_zero(candidates):
    """Is only the best candidate ever adopted, and only when surely better?"""
    scores = {"default": _score(0.4, 0.0, 0.0)}
    scores.update({name: _score(loss, *ci) for name, (loss, ci) in candidates.items()})
    adopted, reason = adoption(scores)
    # Ties go to the earlier candidate in CANDIDATES (fewer moving parts first).
    best = min(
        (name for name in comparison.CANDIDATES if name in candidates),
        key=lambda name: candidates[name][0],
    )
    if adopted == "default":
        assert reason
        assert scores[best].delta_log_loss_ci[1] >= -comparison.ADOPTION_MARGIN
    else:
        assert adopted == best
        assert scores[adopted].delta_log_loss_ci[1] < -comparison.ADOPTION_MARGIN


def test_neither_a_single_seed_fit_nor_sm2_is_ever_adopted():
    """Even when they look best, are `fit` and `sm2` never adopted?"""
    scores = {
        "default": _score(0.4, 0.0, 0.0),
        "fit": _score(0.1, -0.3, -0.2),
        "sm2": _score(0.1, -0.3, -0.2),
        "fit_seeds": _score(0.39, -0.02, 0.01),
    }
    assert adoption(scores)[0] == "default"


# --- rolling evaluation on a simulated learner -----------------------------------


@pytest.fixture(scope="module")
def forgetful_log():
    """A simulated learner who forgets faster than the defaults assume."""
    true = scheduling.check_parameters(
        [{8: 1.0, 10: 0.3}.get(i, v) for i, v in enumerate(DEFAULTS)]
    )
    return cold_start.simulate_learner(true, seed=3, reviews=1500, new_per_day=10)


def test_rolling_segments_are_weeks_from_the_median_review(forgetful_log):
    """Are the rolling weeks 7 days apart, starting at the median review time?"""
    histories = scheduling.Histories.from_log(forgetful_log)
    segments = comparison.rolling_segments(histories)
    times = sorted(r.reviewed_at for r in forgetful_log)
    assert segments[0].cutoff == times[(len(times) - 1) // 2]
    for a, b in zip(segments, segments[1:], strict=False):
        assert (b.cutoff - a.cutoff) % timedelta(days=7) == timedelta(0)
    for segment in segments:
        assert all(
            segment.cutoff <= t.reviewed_at < segment.cutoff + timedelta(days=7)
            for t in segment.targets
        )
    start = times[0] + timedelta(days=10)
    assert comparison.rolling_segments(histories, start)[0].cutoff == start


def test_the_80_20_split_predicts_the_latest_fifth(forgetful_log):
    """Does the 80/20 split predict the latest fifth of the targets, no more?"""
    histories = scheduling.Histories.from_log(forgetful_log)
    targets = histories.targets()
    (segment,) = comparison.split_segments(histories)
    assert len(segment.targets) == pytest.approx(0.2 * len(targets), abs=2)
    latest = max(t.reviewed_at for t in targets)
    assert all(t.reviewed_at >= segment.cutoff for t in segment.targets)
    assert max(t.reviewed_at for t in segment.targets) == latest


def test_a_comparison_is_the_same_for_the_same_seeds(forgetful_log):
    """Given a seed set, are every score, interval and verdict reproduced exactly?"""
    histories = scheduling.Histories.from_log(forgetful_log)
    first = comparison.compare(histories, seeds=(1, 2, 3, 4, 5))
    again = comparison.compare(histories, seeds=(1, 2, 3, 4, 5))
    assert first.as_dict() == again.as_dict()
    assert set(first.scores) == set(comparison.METHODS) - {"class_prior"}
    assert fitting.fit_seeded(fitting.training_items(histories), 9) == (
        fitting.fit_seeded(fitting.training_items(histories), 9)
    )


def test_a_learner_far_from_the_defaults_gets_a_fit_adopted(forgetful_log):
    """When the learner's memory really differs, does the gate let a fit through?"""
    histories = scheduling.Histories.from_log(forgetful_log)
    report = comparison.compare(histories)
    assert report.adopted in comparison.CANDIDATES
    assert report.scores[report.adopted].delta_log_loss_ci[1] < 0
    assert report.scores["sm2"].log_loss > report.scores["default"].log_loss


def test_a_class_prior_is_scored_and_becomes_the_blend_target(forgetful_log):
    """With a class prior, is it scored, and is blend_0 of it the prior itself?"""
    histories = scheduling.Histories.from_log(forgetful_log)
    prior = fitting.fit_averaged(histories)
    report = comparison.compare(histories, split="80/20", class_prior=prior)
    assert "class_prior" in report.scores
    assert report.scores["class_prior"].log_loss < report.scores["default"].log_loss


# --- cold start ------------------------------------------------------------------


def test_a_simulated_class_is_reproducible_and_spread_around_its_mean():
    """Is the simulated class the same for a seed, its learners near the mean?"""
    one = cold_start.simulate_class(3, reviews=400, seed=7)
    assert one == cold_start.simulate_class(3, reviews=400, seed=7)
    assert all(len(log) == 400 for log in one.values())
    rng = np.random.default_rng(0)
    draws = np.array([cold_start.draw_learner_parameters(rng) for _ in range(200)])
    ratio = np.log(draws[:, 8] / cold_start.CLASS_MEAN[8])
    assert abs(ratio.std() - cold_start.SPREAD) < 0.05


def test_cold_start_scores_prior_and_defaults_on_first_reviews():
    """Does the leave-one-out table have a row per N with both log losses?"""
    logs = cold_start.simulate_class(4, reviews=400, seed=11)
    rows = cold_start.cold_start(logs, first_reviews=(100, 400))
    assert [row.first for row in rows] == [100, 400]
    for row in rows:
        assert row.learners == 4 and row.predicted > 0
        assert row.delta_ci[0] <= row.delta_ci[1]
        assert 0 <= row.prior_better <= 4


def test_a_real_log_split_by_cards_keeps_each_card_on_one_side():
    """Does the proxy split give each card wholly to the class or the learner?"""
    log = cold_start.simulate_learner(cold_start.CLASS_MEAN, seed=1, reviews=400)
    pool, learner = cold_start.split_cards(log, seed=0)
    assert len(pool) + len(learner) == len(log)
    assert not {r.card_id for r in pool} & {r.card_id for r in learner}
    assert cold_start.split_cards(log, seed=0) == (pool, learner)
