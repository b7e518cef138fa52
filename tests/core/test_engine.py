"""The attention engine reproduces the lesson and obeys softmax attention's laws."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from quizsvc.engine import (
    AttentionInputError,
    FullyMaskedRowError,
    MaskError,
    NonFiniteInputError,
    ShapeError,
    attention,
    causal_mask,
    softmax,
)

LESSON = {
    "q": [[1.0, 0.0]],
    "k": [[1.0, 0.0], [0.0, 1.0]],
    "v": [[1.0, 0.0], [0.0, 2.0]],
}


def test_lesson_worked_example():
    """Does the engine print what the lesson prints for q=[1,0], d=2?"""
    trace = attention(LESSON["q"], LESSON["k"], LESSON["v"])
    np.testing.assert_allclose(trace.scores, [[0.7071, 0.0]], atol=5e-5)
    np.testing.assert_allclose(trace.exp_unshifted(), [[2.0281, 1.0]], atol=5e-5)
    # trace.exp is taken after the row-max shift: the same ratios as the lesson's.
    np.testing.assert_allclose(trace.exp, [[1.0, 0.4931]], atol=5e-5)
    np.testing.assert_allclose(trace.row_max, [0.7071], atol=5e-5)
    np.testing.assert_allclose(trace.weights, [[0.6698, 0.3302]], atol=5e-5)
    np.testing.assert_allclose(trace.output, [[0.6698, 0.6605]], atol=5e-5)
    assert trace.scale == pytest.approx(1 / math.sqrt(2))
    assert not trace.undefined_rows.any()


def test_lesson_exercise_equal_scores():
    """With both scores 0 the weights are [0.5, 0.5] and the output [0.5, 1.0]."""
    trace = attention([[0.0, 0.0]], LESSON["k"], LESSON["v"])
    np.testing.assert_allclose(trace.scores, [[0.0, 0.0]])
    np.testing.assert_allclose(trace.weights, [[0.5, 0.5]])
    np.testing.assert_allclose(trace.output, [[0.5, 1.0]])
    # The probabilities sum to 1; the output's components need not.
    assert trace.output.sum() == pytest.approx(1.5)


def test_trace_is_frozen_and_read_only():
    trace = attention(LESSON["q"], LESSON["k"], LESSON["v"])
    with pytest.raises(AttributeError):
        trace.weights = None  # type: ignore[misc]
    with pytest.raises(ValueError):
        trace.weights[0, 0] = 1.0


def test_fully_masked_row_is_nan_and_marked():
    """A row with every key masked has no denominator: NaN, never zeros or uniform."""
    mask = np.array([[False, False], [True, False]])
    trace = attention([[1.0, 0.0], [0.0, 1.0]], LESSON["k"], LESSON["v"], mask=mask)
    assert trace.undefined_rows.tolist() == [True, False]
    assert np.isnan(trace.weights[0]).all() and np.isnan(trace.output[0]).all()
    assert np.isfinite(trace.weights[1]).all()
    np.testing.assert_array_equal(trace.exp[0], [0.0, 0.0])
    assert trace.denom[0] == 0.0


def test_strict_mode_names_the_fully_masked_rows():
    mask = np.array([[[-np.inf, -np.inf], [0.0, 0.0]]])
    with pytest.raises(FullyMaskedRowError) as info:
        attention(
            [[1.0, 0.0], [0.0, 1.0]], LESSON["k"], LESSON["v"], mask=mask, strict=True
        )
    assert info.value.rows == [(0, 0)]
    assert "[0, 0]" in str(info.value)


def test_causal_aligns_to_the_last_query():
    """With Tq < Tk the queries are the last positions, like a decoder with a cache."""
    np.testing.assert_array_equal(
        causal_mask(2, 4), [[True, True, True, False], [True, True, True, True]]
    )
    q = np.ones((2, 2))
    k = np.arange(8.0).reshape(4, 2)
    v = np.eye(4)
    trace = attention(q, k, v, causal=True)
    assert trace.weights[0, 3] == 0.0
    assert np.isneginf(trace.scores[0, 3])


def test_large_scores_do_not_overflow():
    q = np.array([[1e4, 0.0], [1e4, 1e4]])
    k = np.array([[1e4, 0.0], [0.0, 1e4]])
    trace = attention(q, k, LESSON["v"], scale=1.0)
    assert np.isfinite(trace.weights).all() and np.isfinite(trace.output).all()
    np.testing.assert_allclose(trace.weights.sum(axis=-1), 1.0)


def test_additive_finite_bias_is_added():
    bias = np.array([[0.0, 1.0]])
    plain = attention(LESSON["q"], LESSON["k"], LESSON["v"])
    biased = attention(LESSON["q"], LESSON["k"], LESSON["v"], mask=bias)
    np.testing.assert_allclose(biased.scores, plain.scores + bias)


@pytest.mark.parametrize(
    ("kwargs", "error", "fragment"),
    [
        (
            {"q": [[1.0, 0.0]], "k": [[1.0, 0.0, 0.0]], "v": [[1.0]]},
            ShapeError,
            "k must",
        ),
        (
            {"q": [[1.0, 0.0]], "k": [[1.0, 0.0]], "v": [[1.0], [2.0]]},
            ShapeError,
            "v must",
        ),
        ({"q": [1.0, 0.0], "k": [[1.0, 0.0]], "v": [[1.0]]}, ShapeError, "q must"),
        (
            {"q": np.zeros((1, 0)), "k": np.zeros((1, 0)), "v": [[1.0]]},
            ShapeError,
            "q must",
        ),
        ({"q": np.zeros((0, 2)), "k": [[1.0, 0.0]], "v": [[1.0]]}, ShapeError, "empty"),
        (
            {"q": [[np.nan, 0.0]], "k": [[1.0, 0.0]], "v": [[1.0]]},
            NonFiniteInputError,
            "q must",
        ),
        (
            {"q": [[1.0, 0.0]], "k": [[np.inf, 0.0]], "v": [[1.0]]},
            NonFiniteInputError,
            "k must",
        ),
        (
            {"q": [[1.0, 0.0]], "k": [[1.0, 0.0]], "v": [[np.inf]]},
            NonFiniteInputError,
            "v must",
        ),
        ({"q": [[1, 0], [1]], "k": [[1.0, 0.0]], "v": [[1.0]]}, ShapeError, "q must"),
        ({"q": [["a", 0]], "k": [[1.0, 0.0]], "v": [[1.0]]}, ShapeError, "q must"),
        (
            {
                "q": np.zeros((2, 1, 2)),
                "k": np.zeros((3, 1, 2)),
                "v": np.zeros((3, 1, 1)),
            },
            ShapeError,
            "broadcast",
        ),
    ],
)
def test_bad_inputs_raise_value_errors_that_name_the_argument(kwargs, error, fragment):
    with pytest.raises(error) as info:
        attention(**kwargs)
    assert isinstance(info.value, ValueError)
    assert fragment in str(info.value)


@pytest.mark.parametrize(
    ("mask", "fragment"),
    [
        (np.zeros((3, 3)), "Tq=1, Tk=2"),
        (np.zeros(3), "Tq=1, Tk=2"),
        (np.array([[np.nan, 0.0]]), "NaN"),
        (np.array([[np.inf, 0.0]]), "+inf"),
        (np.array([["x", "y"]]), "dtype"),
    ],
)
def test_bad_masks_raise_mask_error(mask, fragment):
    with pytest.raises(MaskError) as info:
        attention(LESSON["q"], LESSON["k"], LESSON["v"], mask=mask)
    assert fragment in str(info.value) and "mask" in str(info.value)


def test_a_key_mask_of_shape_tk_pads_every_query():
    """Is the usual padding mask (Tk,) taken as NumPy broadcasts it?"""
    q = np.array([[1.0, 0.0], [0.0, 1.0]])
    k = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    v = np.array([[1.0], [2.0], [3.0]])
    keys = np.array([True, True, False])
    one_d = attention(q, k, v, mask=keys)
    full = attention(q, k, v, mask=np.broadcast_to(keys, (2, 3)))
    np.testing.assert_array_equal(one_d.weights, full.weights)
    assert (one_d.weights[:, 2] == 0).all()
    additive = attention(q, k, v, mask=np.array([0.0, 0.0, -np.inf]))
    np.testing.assert_array_equal(additive.output, full.output)


@settings(max_examples=60, deadline=None)
@given(
    tq=st.integers(1, 3),
    tk=st.integers(1, 3),
    heads=st.integers(1, 2),
    pattern=st.lists(st.booleans(), min_size=4, max_size=4),
)
def test_every_mask_shape_that_broadcasts_is_accepted(tq, tk, heads, pattern):
    """Does every mask shape broadcasting to [heads, Tq, Tk] act as the full mask?"""
    rng = np.random.default_rng(tq * 10 + tk)
    q = rng.standard_normal((heads, tq, 2))
    k = rng.standard_normal((heads, tk, 2))
    v = rng.standard_normal((heads, tk, 2))
    full = np.ones((heads, tq, tk), dtype=bool)
    shapes = [(tk,), (1, tk), (tq, 1), (tq, tk), (heads, 1, tk), (1, 1, 1), ()]
    for shape, hide in zip(shapes, pattern * 2, strict=False):
        mask = np.ones(shape, dtype=bool)
        if hide and mask.ndim and shape[-1] == tk and tk > 1:
            mask[..., -1] = False
        expected = attention(q, k, v, mask=np.broadcast_to(mask, full.shape))
        got = attention(q, k, v, mask=mask)
        np.testing.assert_array_equal(got.weights, expected.weights)


@pytest.mark.parametrize("temperature", [0.0, -1.0, math.inf, math.nan])
def test_bad_temperature_is_refused(temperature):
    with pytest.raises(AttentionInputError, match="temperature"):
        attention(LESSON["q"], LESSON["k"], LESSON["v"], temperature=temperature)


def test_overflowing_product_is_refused():
    with pytest.raises(NonFiniteInputError, match="overflow"):
        attention([[1e200, 0.0]], [[1e200, 0.0]], [[1.0]])


def test_softmax_matches_definition_and_shift():
    x = np.array([[1.0, 2.0, 3.0], [1000.0, 1000.0, -np.inf]])
    out = softmax(x)
    e = np.exp([1.0, 2.0, 3.0])
    np.testing.assert_allclose(out[0], e / e.sum())
    np.testing.assert_allclose(out[1], [0.5, 0.5, 0.0])
    assert np.isnan(softmax(np.array([[-np.inf, -np.inf]]))).all()
    np.testing.assert_allclose(softmax(x[:1].T, axis=0).T, out[:1])


# ---------------------------------------------------------------- properties

finite = st.floats(-5, 5, allow_nan=False, allow_infinity=False, width=64)


@st.composite
def attention_inputs(draw):
    """Random q, k, v with batch/head dims, an optional mask, scale and causal flag."""
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    tq, tk = draw(st.integers(1, 4)), draw(st.integers(1, 5))
    d, dv = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    q = draw(hnp.arrays(np.float64, (*batch, tq, d), elements=finite))
    k = draw(hnp.arrays(np.float64, (*batch, tk, d), elements=finite))
    v = draw(hnp.arrays(np.float64, (*batch, tk, dv), elements=finite))
    mask = None
    if draw(st.booleans()):
        mask = draw(hnp.arrays(np.bool_, (tq, tk)))
    scale = draw(st.one_of(st.none(), st.floats(0.05, 3)))
    causal = draw(st.booleans())
    return q, k, v, mask, scale, causal


@settings(max_examples=150, deadline=None)
@given(attention_inputs())
def test_defined_rows_are_probability_distributions(inputs):
    q, k, v, mask, scale, causal = inputs
    trace = attention(q, k, v, mask=mask, scale=scale, causal=causal)
    defined = ~trace.undefined_rows
    w = trace.weights[defined]
    assert ((w >= 0) & (w <= 1)).all()
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=1e-12, atol=1e-12)
    assert np.isnan(trace.weights[trace.undefined_rows]).all()
    assert np.isnan(trace.output[trace.undefined_rows]).all()
    # masked cells get weight exactly 0 in every defined row
    masked = trace.masked & defined[..., None]
    assert (trace.weights[masked] == 0.0).all()


@settings(max_examples=100, deadline=None)
@given(attention_inputs(), st.floats(-50, 50))
def test_adding_a_constant_to_a_row_leaves_weights_unchanged(inputs, shift):
    q, k, v, mask, scale, causal = inputs
    base = attention(q, k, v, mask=mask, scale=scale, causal=causal)
    tq = q.shape[-2]
    row_shift = np.zeros((tq, k.shape[-2]))
    row_shift[np.arange(tq) % 2 == 0] = shift  # shift every other row
    additive = row_shift if mask is None else np.where(mask, row_shift, -np.inf)
    shifted = attention(q, k, v, mask=additive, scale=scale, causal=causal)
    np.testing.assert_allclose(
        shifted.weights, base.weights, atol=1e-10, equal_nan=True
    )


@settings(max_examples=100, deadline=None)
@given(attention_inputs(), st.randoms())
def test_permuting_keys_with_values_leaves_output_unchanged(inputs, rnd):
    q, k, v, mask, scale, _causal = inputs
    tk = k.shape[-2]
    perm = list(range(tk))
    rnd.shuffle(perm)
    base = attention(q, k, v, mask=mask, scale=scale)
    permuted = attention(
        q,
        k[..., perm, :],
        v[..., perm, :],
        mask=None if mask is None else mask[:, perm],
        scale=scale,
    )
    np.testing.assert_allclose(permuted.output, base.output, atol=1e-10, equal_nan=True)


@settings(max_examples=100, deadline=None)
@given(attention_inputs(), st.floats(-5, 5))
def test_causal_row_never_depends_on_later_keys(inputs, noise):
    q, k, v, _mask, scale, _causal = inputs
    tq, tk = q.shape[-2], k.shape[-2]
    offset = tk - tq
    base = attention(q, k, v, causal=True, scale=scale)
    for i in range(tq):
        later = i + offset + 1
        if later >= tk:
            continue
        k2, v2 = k.copy(), v.copy()
        k2[..., later:, :] += noise
        v2[..., later:, :] -= noise
        changed = attention(q, k2, v2, causal=True, scale=scale)
        np.testing.assert_allclose(
            changed.output[..., i, :],
            base.output[..., i, :],
            atol=1e-10,
            equal_nan=True,
        )


@settings(max_examples=100, deadline=None)
@given(attention_inputs())
def test_temperature_limits_are_argmax_and_uniform(inputs):
    q, k, v, _mask, scale, _causal = inputs
    base = attention(q, k, v, scale=scale)
    scores = base.scores
    top = scores.max(axis=-1, keepdims=True)
    gap = np.sort(scores, axis=-1)
    # Only rows with a unique maximum have an argmax limit.
    unique = (
        (gap[..., -1] - gap[..., -2] > 1e-3)
        if scores.shape[-1] > 1
        else np.ones(scores.shape[:-1], bool)
    )
    cold = attention(q, k, v, scale=scale, temperature=1e-6)
    onehot = (scores == top).astype(float)
    np.testing.assert_allclose(cold.weights[unique], onehot[unique], atol=1e-6)
    hot = attention(q, k, v, scale=scale, temperature=1e9)
    np.testing.assert_allclose(hot.weights, 1.0 / k.shape[-2], atol=1e-6)


@settings(max_examples=100, deadline=None)
@given(attention_inputs())
def test_output_equals_the_explicit_weighted_sum(inputs):
    q, k, v, mask, scale, causal = inputs
    trace = attention(q, k, v, mask=mask, scale=scale, causal=causal)
    assume(not trace.undefined_rows.any())
    vb = np.broadcast_to(v, (*trace.weights.shape[:-2], *v.shape[-2:]))
    for index in np.ndindex(*trace.weights.shape[:-2]):
        a, vv = trace.weights[index], vb[index]
        for i in range(a.shape[0]):
            expected = sum(a[i, j] * vv[j] for j in range(a.shape[1]))
            np.testing.assert_allclose(trace.output[index][i], expected, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(attention_inputs())
def test_batch_dims_match_per_example_computation(inputs):
    q, k, v, mask, scale, causal = inputs
    trace = attention(q, k, v, mask=mask, scale=scale, causal=causal)
    for index in np.ndindex(*trace.weights.shape[:-2]):
        single = attention(
            q[index], k[index], v[index], mask=mask, scale=scale, causal=causal
        )
        np.testing.assert_allclose(trace.output[index], single.output, equal_nan=True)
