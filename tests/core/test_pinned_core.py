"""Rules of the engine, grader, generator and scheduler that nothing else pins.

Each test here was written for a mutant of the test audit of 2026-12-01 that
the rest of the suite let through (the id is in the test's comment); each
fails when that rule is broken. `scripts/mutation.py` reruns the mutants.
"""

from __future__ import annotations

import math
from datetime import timedelta
from unittest import mock

import fsrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from quizsvc import scheduling
from quizsvc.engine import attention, causal_mask, shifted_exp, shifted_softmax
from quizsvc.grading import grade
from quizsvc.problems import generate
from quizsvc.problems.model import tolerance_for
from quizsvc.problems.pipelines import peak_tied, softmax_rows


def typed(problem, value: np.ndarray) -> str:
    """A matrix as a learner types it, rounded to the problem's precision."""

    def cell(x: float) -> str:
        if math.isnan(x):
            return "undefined"
        if math.isinf(x):
            return "-inf" if x < 0 else "inf"
        return f"{x:.{problem.precision}f}"

    return "[" + "; ".join(" ".join(cell(x) for x in row) for row in value) + "]"


def step(verdict, name: str):
    """The verdict's result for one asked quantity."""
    return next(s for s in verdict.steps if s.name == name)


def pipeline(problem, quantity: str, name: str) -> np.ndarray:
    """What the named (buggy) pipeline gives for one quantity."""
    return problem.stacks[quantity][problem.names.index(name)]


# --- engine -----------------------------------------------------------------


def test_value_batch_axes_reach_every_intermediate():
    """With V batched and Q, K not, does every intermediate carry the batch axes?"""
    # E6: without the broadcast, scores and weights stayed [Tq, Tk].
    q = np.array([[1.0, 0.0], [0.0, 1.0]])
    k = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    v = np.arange(2 * 3 * 2, dtype=float).reshape(2, 3, 2)
    trace = attention(q, k, v)
    assert trace.scores.shape == trace.exp.shape == trace.weights.shape == (2, 2, 3)
    assert trace.row_max.shape == trace.denom.shape == (2, 2)
    assert trace.undefined_rows.shape == (2, 2)
    single = attention(q, k, v[1])
    np.testing.assert_array_equal(trace.weights[1], single.weights)
    np.testing.assert_array_equal(trace.output[1], single.output)


cells = st.one_of(st.floats(-30, 30, allow_nan=False, width=64), st.just(-math.inf))


@settings(max_examples=300, deadline=None)
@given(
    hnp.arrays(
        np.float64, hnp.array_shapes(min_dims=2, max_dims=3, max_side=4), elements=cells
    ),
    st.sampled_from([-1, -2]),
    st.sampled_from([math.nan, 0.0]),
)
def test_the_shared_softmax_is_the_definition_slice_by_slice(x, axis, empty_weight):
    """Is each slice exp(x − m) / Σ exp(x − m), an all -inf slice `empty_weight`?"""
    out = shifted_softmax(x, axis, empty_weight=empty_weight)
    slices = np.moveaxis(x, axis, -1).reshape(-1, x.shape[axis])
    got = np.moveaxis(out, axis, -1).reshape(-1, x.shape[axis])
    for row, weights in zip(slices.tolist(), got.tolist(), strict=True):
        peak = max(row)
        if peak == -math.inf:
            expected = [empty_weight] * len(row)
        else:
            exps = [math.exp(v - peak) for v in row]
            expected = [e / sum(exps) for e in exps]
        np.testing.assert_allclose(weights, expected, rtol=1e-12, atol=1e-15)


def test_an_empty_slice_exp_stays_zero_beside_infinite_or_nan_peaks():
    """Is exp 0 across a row of only -inf even when another row holds +inf or NaN?"""
    # E19: with such a neighbour, the empty row was shifted by -inf (NaN).
    x = np.array([[-math.inf, -math.inf], [math.inf, 1.0], [math.nan, 0.0]])
    exp, empty = shifted_exp(x)
    assert exp[0].tolist() == [0.0, 0.0]
    assert empty.ravel().tolist() == [True, False, False]


# --- grading ----------------------------------------------------------------


def test_ties_between_misconceptions_go_to_catalogue_order():
    """When two mistakes explain the same steps, is the earlier one named?"""
    # G6: attention level 2, seed 1 has a mask; its S with the mask ignored is
    # also the S of "mask applied after the softmax", which comes later.
    problem = generate("attention", 1, 2)
    assert {"mask_ignored", "mask_after_softmax"} <= set(problem.names)
    wrong_s = pipeline(problem, "S", "mask_ignored")
    verdict = grade(problem, {"S": typed(problem, wrong_s)})
    assert verdict.misconception == "mask_ignored"
    assert verdict.misconception_step == "S"


def test_a_transposed_later_step_that_follows_the_learners_own_keeps_its_credit():
    """Is A = softmax(Sᵀ) credited when the learner typed S transposed?"""
    # G10: the off-shape step lost its carried-forward credit.
    problem = generate("attention", 10, 3)
    s = problem.answer["S"]
    assert s.shape == (2, 3) and np.isfinite(s).all()
    a_from_own_s = softmax_rows(s.T)
    verdict = grade(
        problem, {"S": typed(problem, s.T), "A": typed(problem, a_from_own_s)}
    )
    a = step(verdict, "A")
    assert a.answered and not a.correct
    assert a.consistent_with_previous is True
    assert a.score == 1.0


def test_weights_carried_forward_keep_a_row_that_sees_no_key():
    """With a slip in S, does A from the learner's S (undefined row too) count?"""
    # G11: NaN on both sides (the undefined row) must agree.
    problem = generate("padding_mask", 2, 2)
    s = problem.answer["S"].copy()
    assert np.isnan(problem.answer["A"]).any()
    finite = np.argwhere(np.isfinite(s))
    r, c = finite[0]
    s[r, c] += 1.0  # the slip
    verdict = grade(
        problem, {"S": typed(problem, s), "A": typed(problem, softmax_rows(s))}
    )
    assert not step(verdict, "S").correct
    a = step(verdict, "A")
    assert a.consistent_with_previous is True and a.score == 1.0


@pytest.mark.parametrize("blank", ["   ", "\n", " \t "])
def test_a_whitespace_only_answer_counts_as_unanswered(blank):
    """Is a step left blank with spaces unanswered, not a format error?"""
    # G13: "   " was read as an answer, and the submission became no attempt.
    problem = generate("lesson_example", 0, 1)
    verdict = grade(problem, {"S": typed(problem, problem.answer["S"]), "A": blank})
    assert verdict.attempt and not verdict.format_errors
    assert step(verdict, "S").correct
    assert not step(verdict, "A").answered


def test_the_tolerance_is_pinned_and_an_answer_a_thousandth_off_is_wrong():
    """Is the tolerance 2.5 units of the last decimal, so 0.001 off is wrong?"""
    # PR7: a tolerance ten times too loose accepted 0.7081 for 0.7071.
    assert tolerance_for(4) == pytest.approx(2.5e-4)
    assert tolerance_for(2) == pytest.approx(2.5e-2)
    problem = generate("lesson_example", 0, 1)
    assert problem.tolerance == pytest.approx(2.5e-4)
    s = problem.answer["S"]
    near = grade(problem, {"S": typed(problem, s + 2e-4)})
    assert step(near, "S").correct
    off = grade(problem, {"S": typed(problem, s + np.array([[0.001, 0.0]]))})
    assert not step(off, "S").correct
    assert step(off, "S").ok == [[False, True]]


# --- problems ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("row", "tied"),
    [
        ([1.0, 1.0], True),
        ([2.0, 2.0, 0.5], True),
        ([1.0, 1.0, 1.0], True),
        ([1.0, 1.0 - 1e-12, 0.0], True),
        ([1.0, 0.5], False),
        ([3.0], False),
        ([-math.inf, 2.0, -math.inf], False),
        ([-math.inf, -math.inf], False),
    ],
)
def test_a_row_peak_is_tied_when_its_largest_entry_occurs_twice(row, tied):
    """Does peak_tied find a largest entry shared by two or more cells?"""
    # PR4: "> 2" let a peak shared by exactly two cells through.
    assert peak_tied(row) is tied


def test_hard_argmax_weights_are_one_hot_in_every_generated_problem():
    """Does the hard-argmax mistake always put one 1 per row (no tied peaks)?"""
    # PR4: with ties let through, some rows got two 1s.
    seen = 0
    for kind in ("softmax_row", "weights", "attention", "causal", "lesson_example"):
        for level in (1, 2, 3):
            for seed in range(60):
                problem = generate(kind, seed, level)
                if "hard_argmax" not in problem.names:
                    continue
                quantity = "a" if kind == "softmax_row" else "A"
                weights = pipeline(problem, quantity, "hard_argmax")
                for row in weights.reshape(-1, weights.shape[-1]):
                    if not np.isnan(row).all():
                        seen += 1
                        assert set(row.tolist()) <= {0.0, 1.0} and row.sum() == 1.0
    assert seen > 500


def test_output_problems_offering_the_argmax_mistake_have_no_tied_weights():
    """When A is given and hard argmax is a candidate, is every row's peak unique?"""
    # A tie would make the mistake's answer ambiguous (the kinds redraw such
    # rows; mutant PR15, the pipelines' backstop check, is equivalent).
    checked = 0
    for level in (1, 2, 3):
        for seed in range(120):
            problem = generate("output", seed, level)
            if "hard_argmax" in problem.names:
                checked += 1
                rows = problem.given["A"].tolist()
                assert not any(map(peak_tied, rows)), f"output:{level}:{seed}"
    assert checked > 20


@pytest.mark.parametrize("kind", ["scores", "attention", "weights"])
@pytest.mark.parametrize("level", [2, 3])
def test_a_drawn_mask_never_hides_a_whole_row(kind, level):
    """Does every query row of a drawn mask still see at least one key?"""
    # PR5: the redraw of a fully hidden row was skipped.
    masked = 0
    for seed in range(150):
        problem = generate(kind, seed, level)
        scores = problem.answer["S"] if "S" in problem.answer else problem.given["S"]
        hidden = np.isneginf(scores)
        masked += bool(hidden.any())
        assert not hidden.all(axis=-1).any(), f"{kind}:{level}:{seed}"
    assert masked > 10


@pytest.mark.parametrize("level", [2, 3])
def test_a_drawn_score_mask_hides_at_least_one_cell(level):
    """Does a scores problem that gives a mask M always hide something with it?"""
    # PR14: a draw that hid no cell was kept, a mask in name only.
    with_mask = 0
    for seed in range(150):
        problem = generate("scores", seed, level)
        if "M" in problem.given:
            with_mask += 1
            assert np.isneginf(problem.given["M"]).any(), f"scores:{level}:{seed}"
    assert with_mask > 10


def test_causal_flipped_is_the_transposed_visibility():
    """Does the flipped-causal mistake let query i see exactly keys j ≥ i?"""
    # PR11: the flip hid the diagonal (¬lower) instead of transposing it.
    checked = 0
    for seed in range(20):
        problem = generate("causal", seed, 3)
        if "causal_flipped" in problem.names:
            scores = pipeline(problem, "S", "causal_flipped")
            n = scores.shape[0]
            np.testing.assert_array_equal(np.isfinite(scores), causal_mask(n, n).T)
            checked += 1
    assert checked >= 5


# --- scheduling -------------------------------------------------------------


@pytest.mark.parametrize("days", [1, 2, 3, 4, 5, 6, 7, 8, 12])
@pytest.mark.parametrize("uniform", [0.0, 0.25, 0.5, 0.75, 0.999])
def test_small_intervals_are_fuzzed_as_py_fsrs_fuzzes_them(days, uniform):
    """From 3 days on, is a short interval spread exactly as py-fsrs spreads it?"""
    # S1: fuzzing started at 3.5 days instead of 2.5.
    with mock.patch.object(fsrs.scheduler, "random", lambda: uniform):
        expected = fsrs.Scheduler()._get_fuzzed_interval(interval=timedelta(days=days))
    assert scheduling.fuzz_interval_days(days, uniform) == expected.days


def test_three_days_with_a_middle_draw_become_four():
    """Does a 3-day interval with a draw of 0.5 become 4 days, as in py-fsrs?"""
    # S1, by number.
    assert scheduling.fuzz_interval_days(3, 0.5) == 4
    assert scheduling.fuzz_interval_days(2, 0.5) == 2


def test_the_sm2_baseline_ease_stops_at_its_floor():
    """Do twelve Hard answers in review leave SM-2's ease at 1.3, not below?"""
    # S13: the Hard path lost its floor.
    card = scheduling._Sm2(phase="review", ease=2.5, interval=10)
    for _ in range(12):
        card = scheduling._sm2_step(card, 2, card.interval)
    assert card.ease == pytest.approx(scheduling.SM2_MINIMUM_EASE)
    assert scheduling.SM2_MINIMUM_EASE == 1.3


def test_an_easy_review_raises_the_sm2_ease_by_fifteen_points():
    """Does Easy in review add 0.15 to the ease and lengthen by ease × 1.3?"""
    # S17: the Easy bonus to the ease was wrong.
    card = scheduling._Sm2(phase="review", ease=2.5, interval=10)
    easy = scheduling._sm2_step(card, 4, 10)
    assert easy.ease == pytest.approx(2.65)
    assert easy.interval == int(10 * 2.5 * 1.3)


def test_exp_without_normalizing_leaves_a_row_that_sees_nothing_undefined():
    """On their own (slipped) scores, a learner stops at exp(S − m) and writes
    "undefined" for the row that sees no key: is that mistake still named?"""
    # PR18: exp(S − m) of a row that sees nothing stays NaN, not zeros.
    for seed in range(200):
        problem = generate("padding_mask", seed, 2)
        undefined = np.isnan(problem.answer["A"]).all(axis=1)
        if undefined.any() and "unnormalized_exp" in problem.misconceptions:
            break
    else:
        raise AssertionError("no padding problem with an undefined row")
    s = problem.answer["S"].copy()
    r, c = np.argwhere(np.isfinite(s))[0]
    s[r, c] += 0.5  # the slip: no whole pipeline explains these scores
    with np.errstate(all="ignore"):
        peak = np.max(np.where(undefined[:, None], 0.0, s), axis=1)
        exps = np.where(np.isneginf(s), 0.0, np.exp(s - peak[:, None]))
    exps[undefined] = np.nan
    verdict = grade(problem, {"S": typed(problem, s), "A": typed(problem, exps)})
    assert not step(verdict, "S").correct
    assert verdict.misconception == "unnormalized_exp"
    assert verdict.misconception_step == "A"
