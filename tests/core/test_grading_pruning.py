"""The grader's shortcuts never change a verdict.

The misconception search leaves out candidates that cannot match the
learner's numbers (a value outside [0, 1] cannot be a row of weights; a value
with more decimals than asked cannot be a rounding), and reuses what the
grader derived from the learner's earlier steps. Each test grades the same
answers with and without the shortcuts (`grading.carried.PRUNE`) and asks for
the very same verdict, on answers built to reach every branch the shortcuts
touch: wrong numbers that match nothing, a mistake made on top of the
learner's own wrong step, roundings and cuts, rows of ones.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quizsvc.grading import carried, grade
from quizsvc.problems import KINDS, LEVELS, answer_to_json, generate
from quizsvc.problems.pipelines import (
    argmax_weights,
    scores_as_weights,
    softmax_columns,
    softmax_rows,
    unnormalized_exp,
)

kinds = st.sampled_from(sorted(KINDS))
levels = st.sampled_from(LEVELS)
seeds = st.integers(min_value=0, max_value=2**32)
same_settings = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def both_ways(problem, answers) -> tuple[dict, dict]:
    """The verdict with the shortcuts and without them, as JSON-ready dicts."""
    assert carried.PRUNE
    fast = grade(problem, answers).to_dict()
    carried.PRUNE = False
    try:
        slow = grade(problem, answers).to_dict()
    finally:
        carried.PRUNE = True
    return fast, slow


def posted(problem, values) -> dict:
    """Answers as the API posts them (JSON values)."""
    out = {a.name: answer_to_json(a, values[a.name]) for a in problem.ask}
    return json.loads(json.dumps(out))


def _weights_mistakes(problem) -> list:
    """What a learner might do to their own scores on the way to weights."""
    makers = [
        softmax_rows,
        softmax_columns,
        scores_as_weights,
        unnormalized_exp,
        argmax_weights,
    ]
    visible = problem.context.get("visible")
    if visible is not None:
        makers.append(lambda s: softmax_rows(s) * visible)
    return makers


@same_settings
@given(kinds, levels, seeds, st.data())
def test_a_generic_wrong_answer_gets_the_same_verdict(kind, level, seed, data):
    """Right shape, wrong numbers on some steps: the same verdict either way?"""
    problem = generate(kind, seed, level)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32)))
    scale = data.draw(st.sampled_from([1e-4, 3e-4, 1e-3, 0.05, 0.5, 3.0]))
    values = {}
    for ask in problem.ask:
        value = np.asarray(problem.answer[ask.name], dtype=np.float64)
        if ask.format in ("matrix", "number") and data.draw(st.booleans()):
            noise = rng.normal(0.0, scale, value.shape)
            value = np.where(np.isfinite(value), value + noise, value)
        values[ask.name] = value
    fast, slow = both_ways(problem, posted(problem, values))
    assert fast == slow


@same_settings
@given(
    st.sampled_from(["attention", "causal", "padding_mask", "lesson_example"]),
    levels,
    seeds,
    st.data(),
)
def test_a_mistake_on_the_learners_own_scores_gets_the_same_verdict(
    kind, level, seed, data
):
    """Wrong scores, then a mistake made on them (the search the shortcuts trim):
    the same verdict, and the same misconception named, either way?"""
    problem = generate(kind, seed, level)
    names = [a.name for a in problem.ask]
    s = np.asarray(problem.answer["S"], dtype=np.float64)
    shift = data.draw(st.sampled_from([0.0, 0.02, 0.3, 1.5]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32)))
    learner_s = np.where(np.isfinite(s), s + rng.normal(0, shift, s.shape), s)
    make = data.draw(st.sampled_from(_weights_mistakes(problem)))
    with np.errstate(all="ignore"):
        weights = make(learner_s)
        values = dict(problem.answer, S=learner_s, A=weights)
        if "O" in names:
            v = problem.context["V"]
            how = data.draw(st.sampled_from(["matmul", "argmax", "right"]))
            if how == "matmul":
                values["O"] = weights @ v
            elif how == "argmax":
                values["O"] = argmax_weights(weights) @ v
    fast, slow = both_ways(problem, posted(problem, values))
    assert fast == slow


@same_settings
@given(kinds, levels, seeds, st.integers(0, 3), st.booleans())
def test_a_rounded_or_cut_answer_gets_the_same_verdict(
    kind, level, seed, decimals, cut
):
    """Right but rounded (or cut) to too few decimals: the same feedback?"""
    problem = generate(kind, seed, level)
    values = {}
    for ask in problem.ask:
        value = np.asarray(problem.answer[ask.name], dtype=np.float64)
        if ask.format in ("matrix", "number"):
            with np.errstate(invalid="ignore"):
                unit = 10.0**-decimals
                short = (
                    np.trunc(value / unit) * unit if cut else np.round(value, decimals)
                )
            value = np.where(np.isfinite(value), short, value)
        values[ask.name] = value
    fast, slow = both_ways(problem, posted(problem, values))
    assert fast == slow


@pytest.mark.parametrize("level", LEVELS)
def test_a_row_of_ones_for_one_query_gets_the_same_verdict(level):
    """Ones on the visible keys of a single query (columns normalized): the same
    verdict, and softmax_over_queries named, either way?"""
    seen = 0
    for seed in range(200):
        problem = generate("softmax_row", seed, level)
        truth = np.asarray(problem.answer["a"], dtype=np.float64)
        visible = np.isfinite(truth) & (truth > 0)
        if visible.sum() < 2:
            continue
        ones = np.where(visible, 1.0, truth)
        fast, slow = both_ways(problem, posted(problem, {"a": ones}))
        assert fast == slow
        assert fast["misconception"] == "softmax_over_queries"
        seen += 1
    assert seen >= 20


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_misconception_gets_the_same_verdict(kind):
    """Each pipeline's own answers: the same verdict either way, for every kind?"""
    for level in LEVELS:
        for seed in range(15):
            problem = generate(kind, seed, level)
            for name in problem.misconceptions:
                answers = posted(problem, problem.pipeline(name))
                fast, slow = both_ways(problem, answers)
                assert fast == slow
