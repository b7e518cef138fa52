"""A problem's permalink: which seeds it carries, and the problem it names."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quizsvc.problems import (
    FRESH_SEED_LIMIT,
    KINDS,
    LEVELS,
    MAX_SEED,
    fresh_seed,
    generate,
    is_seed,
    load_problem,
)


@settings(max_examples=30, deadline=None)
@given(
    st.sampled_from(sorted(KINDS)),
    st.sampled_from(LEVELS),
    st.integers(min_value=0, max_value=MAX_SEED),
)
def test_every_seed_a_bigint_holds_opens_the_same_problem_as_generate(
    kind, level, seed
):
    """Does a permalink with any seed up to MAX_SEED name generate()'s problem?"""
    problem = load_problem(kind, level, seed)
    assert problem is not None
    assert problem.public_dict() == generate(kind, seed, level).public_dict()


@pytest.mark.parametrize(
    ("kind", "level", "seed"),
    [
        ("scores", 1, -1),
        ("scores", 1, MAX_SEED + 1),
        ("scores", 1, True),
        ("scores", 1, 1.0),
        ("scores", 1, "7"),
        ("scores", 0, 7),
        ("scores", max(LEVELS) + 1, 7),
        ("nonsense", 1, 7),
    ],
)
def test_a_permalink_naming_no_problem_loads_none(kind, level, seed):
    """Is a seed out of range, of the wrong type, or an unknown kind or level None?"""
    assert load_problem(kind, level, seed) is None


def test_the_seed_range_is_inclusive_at_both_ends():
    """Are 0 and MAX_SEED seeds, and one beyond either end not?"""
    assert is_seed(0) and is_seed(MAX_SEED)
    assert not is_seed(-1) and not is_seed(MAX_SEED + 1) and not is_seed(False)


def test_fresh_seeds_stay_short_enough_for_a_link():
    """Are fresh seeds below FRESH_SEED_LIMIT, which a BIGINT column holds?"""
    seeds = {fresh_seed() for _ in range(200)}
    assert all(0 <= seed < FRESH_SEED_LIMIT <= MAX_SEED for seed in seeds)
    assert len(seeds) > 150  # drawn, not fixed
