"""Generated problems: deterministic, well-formed, right, and diagnosable."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quizsvc.cli import main
from quizsvc.engine import attention, attention_steps, causal_mask
from quizsvc.problems import (
    KINDS,
    LEVELS,
    MISCONCEPTION_NAMES,
    ProblemError,
    generate,
)
from quizsvc.problems.kinds import QKV_MISTAKES
from quizsvc.problems.pipelines import qkv_pipelines

ISSUE_KINDS = {
    "scores",
    "softmax_row",
    "weights",
    "output",
    "attention",
    "causal",
    "padding_mask",
    "shapes",
    "scale",
    "temperature",
    "shift_invariance",
    "uniform",
    "lesson_example",
}

kinds = st.sampled_from(sorted(KINDS))
levels = st.sampled_from(LEVELS)
seeds = st.integers(min_value=0, max_value=2**40)
problem_settings = settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def test_every_kind_from_the_issue_exists_with_a_description():
    """Does KINDS name every kind the issue lists, each described in one line?"""
    assert set(KINDS) == ISSUE_KINDS
    assert all(text and "\n" not in text for text in KINDS.values())
    assert LEVELS == (1, 2, 3)


@problem_settings
@given(kinds, levels, seeds)
def test_the_same_kind_seed_and_level_give_the_same_problem(kind, level, seed):
    """Is generation a pure function of (kind, seed, level)?"""
    first, second = generate(kind, seed, level), generate(kind, seed, level)
    assert first == second
    assert json.dumps(first.to_dict(), sort_keys=True) == json.dumps(
        second.to_dict(), sort_keys=True
    )


@problem_settings
@given(kinds, levels, seeds)
def test_a_problem_dict_has_every_documented_field(kind, level, seed):
    """Is to_dict() strict JSON with kind, seed, level, given, ask, precision,
    prompt and answer, and public_dict() the same without the answer?"""
    problem = generate(kind, seed, level)
    data = problem.to_dict()
    text = json.dumps(data, allow_nan=False, ensure_ascii=False)
    assert json.loads(text) == data
    assert {
        "kind",
        "seed",
        "level",
        "given",
        "ask",
        "precision",
        "prompt",
        "answer",
    } <= set(data)
    assert (data["kind"], data["seed"], data["level"]) == (kind, seed, level)
    assert set(data["prompt"]) == {"zh-CN", "en"}
    assert all(data["prompt"].values())
    assert [a["name"] for a in data["ask"]] == list(data["answer"])
    public = problem.public_dict()
    assert "answer" not in public
    assert public == {k: v for k, v in data.items() if k != "answer"}
    for ask in data["ask"]:
        assert ask["format"] in {
            "matrix",
            "number",
            "choice",
            "shape",
            "boolean_matrix",
        }
        assert set(ask["label"]) == {"zh-CN", "en"}
        if ask["format"] == "choice":
            assert data["answer"][ask["name"]] in [c["value"] for c in ask["choices"]]
        if ask["format"] in ("matrix", "boolean_matrix"):
            rows, cols = ask["shape"]
            answer = data["answer"][ask["name"]]
            assert len(answer) == rows and all(len(r) == cols for r in answer)


def test_a_public_dict_in_one_language_has_plain_strings():
    """Does public_dict(lang) pick the prompt and labels in that language?"""
    data = generate("temperature", 3, 1).public_dict("en")
    assert isinstance(data["prompt"], str) and "temperature" in data["prompt"]
    assert all(isinstance(a["label"], str) for a in data["ask"])
    assert data["ask"][-1]["choices"][0]["label"] == "A1 is sharper"


# Recorded draws. They pin the random stream across machines and NumPy
# versions; a deliberate change to a builder's draws must update them (and
# changes every stored problem of that kind).
GOLDEN_GIVENS = {
    ("scores", 1, 1): {
        "Q": [[0, 1, 1, 2], [2, -1, -1, 1]],
        "K": [[1, -1, 2, 1], [-1, 1, 0, -1]],
        "d": 4,
    },
    ("attention", 7, 2): {
        "Q": [[0, 1, -2], [0, 1, -1], [-2, -1, -2]],
        "K": [[1, 2, 2], [0, -2, -1]],
        "V": [[2, -1], [0, -1]],
        "d": 3,
        "M": [["-inf", 0], [0, 0], [0, 0]],
    },
    ("shapes", 2, 2): {"batch": 4, "heads": 5, "Tq": 2, "Tk": 10, "d": 6, "dv": 14},
    ("temperature", 5, 1): {"s": [[0, -1]], "tau1": 2, "tau2": 0.5},
}


@pytest.mark.parametrize(
    ("key", "expected"),
    GOLDEN_GIVENS.items(),
    ids=lambda x: "-".join(map(str, x)) if isinstance(x, tuple) else "",
)
def test_recorded_problems_come_out_the_same(key, expected):
    """Does a recorded (kind, seed, level) still give the recorded numbers?"""
    kind, seed, level = key
    assert generate(kind, seed, level).public_dict()["given"] == expected


@pytest.mark.parametrize(
    ("kind", "seed", "level", "fragment"),
    [
        ("nope", 1, 1, "unknown problem kind"),
        ("scores", 1, 4, "level must be"),
        ("scores", -1, 1, "seed must be ≥ 0"),
        ("scores", 1.5, 1, "seed must be an"),
        ("scores", 1, True, "level must be"),
    ],
)
def test_bad_arguments_are_problem_errors(kind, seed, level, fragment):
    """Are an unknown kind, a bad level or a negative seed refused clearly?"""
    with pytest.raises(ProblemError, match=fragment):
        generate(kind, seed, level)


def _values(given, name):
    value = given[name]
    return np.asarray(value, dtype=np.float64)


@problem_settings
@given(levels, seeds)
def test_level_sizes_and_entries(level, seed):
    """Does each level keep to its sizes and entries (T, d, integers/decimals)?"""
    for kind in ("scores", "attention", "causal", "padding_mask"):
        given_ = generate(kind, seed, level).given
        q, k = _values(given_, "Q"), _values(given_, "K")
        tq, d = q.shape
        tk = k.shape[0]
        entries = np.concatenate([q.ravel(), k.ravel()])
        if level == 1:
            assert max(tq, tk) <= 2 and d in (1, 4)
            assert np.all(entries == np.round(entries)) and np.abs(entries).max() <= 2
        elif level == 2:
            assert max(tq, tk) <= 3 and d <= 4
            assert np.all(entries == np.round(entries)) and np.abs(entries).max() <= 2
        else:
            assert max(tq, tk) <= 4 and d <= 8
            assert np.allclose(entries * 10, np.round(entries * 10))


def _engine_trace(problem):
    given_ = problem.given
    mask = None
    if "M" in given_:
        mask = given_["M"]
    if "key_valid" in given_:
        mask = np.broadcast_to(
            given_["key_valid"].astype(bool),
            (given_["Q"].shape[0], given_["K"].shape[0]),
        )
    return attention(
        given_["Q"],
        given_["K"],
        given_["V"] if "V" in given_ else np.zeros((given_["K"].shape[0], 1)),
        mask=mask,
        causal=bool(given_.get("causal", False)),
    )


def _row_by_hand(scores: list[float]) -> tuple[list[float], list[float]]:
    """exp(s − m) and the weights of one score row, cell by cell with math.exp.

    The independent oracle for the engine's arithmetic: a row whose every key
    is hidden (all -inf) has exp 0 and no weights (NaN).
    """
    peak = max(scores)
    if peak == -math.inf:
        return [0.0] * len(scores), [math.nan] * len(scores)
    exps = [math.exp(s - peak) for s in scores]
    total = sum(exps)
    return exps, [e / total for e in exps]


def _attention_by_hand(q, k, v, additive, factor) -> dict[str, list]:
    """S, exp(S − m), A and O for 2-D q, k, v, one loop per row and cell."""
    tq, d = len(q), len(q[0])
    tk = len(k)
    out = {"S": [], "exp": [], "A": [], "O": []}
    for i in range(tq):
        row = [
            sum(q[i][t] * k[j][t] for t in range(d)) * factor
            + (0.0 if additive is None else additive[i][j])
            for j in range(tk)
        ]
        exps, weights = _row_by_hand(row)
        out["S"].append(row)
        out["exp"].append(exps)
        out["A"].append(weights)
        if v is not None:
            out["O"].append(
                [sum(weights[j] * v[j][c] for j in range(tk)) for c in range(len(v[0]))]
            )
    return out


def _assert_close_by_hand(actual, expected) -> None:
    """Equal to float rounding; ±inf and NaN in the same places."""
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=1e-12, atol=1e-12)


@problem_settings
@given(
    st.sampled_from(
        ["scores", "attention", "causal", "padding_mask", "lesson_example"]
    ),
    levels,
    seeds,
)
def test_answers_are_the_engines_results(kind, level, seed):
    """Are S, A and O what attention gives, computed by hand and by the engine?"""
    problem = generate(kind, seed, level)
    trace = _engine_trace(problem)
    given_ = problem.given
    q, k = given_["Q"], given_["K"]
    tq, tk = q.shape[0], k.shape[0]
    # The mask the givens state: M as written, padded keys, the causal rule.
    additive = given_["M"].tolist() if "M" in given_ else [[0.0] * tk] * tq
    key_valid = given_["key_valid"].ravel() if "key_valid" in given_ else [1] * tk
    causal = bool(given_.get("causal", False))
    additive = [
        [
            -math.inf if not key_valid[j] or (causal and j > i + tk - tq) else m
            for j, m in enumerate(row)
        ]
        for i, row in enumerate(additive)
    ]
    by_hand = _attention_by_hand(
        q.tolist(),
        k.tolist(),
        given_["V"].tolist() if "V" in given_ else None,
        additive,
        1 / math.sqrt(q.shape[1]),
    )
    _assert_close_by_hand(problem.answer["S"], by_hand["S"])
    if "A" in problem.answer:
        _assert_close_by_hand(problem.answer["A"], by_hand["A"])
        _assert_close_by_hand(problem.answer["O"], by_hand["O"])
    if kind == "lesson_example":  # the lesson's worked example, to 4 decimals
        assert np.round(problem.answer["S"], 4).tolist() == [[0.7071, 0.0]]
        assert np.round(problem.answer["A"], 4).tolist() == [[0.6698, 0.3302]]
        assert np.round(problem.answer["O"], 4).tolist() == [[0.6698, 0.6605]]
    np.testing.assert_array_equal(problem.answer["S"], trace.scores)
    if "A" in problem.answer:
        np.testing.assert_array_equal(problem.answer["A"], trace.weights)
        np.testing.assert_array_equal(problem.answer["O"], trace.output)
    if "visible" in problem.answer:
        n = problem.answer["visible"].shape[0]
        np.testing.assert_array_equal(problem.answer["visible"], causal_mask(n, n))


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 4),
    st.integers(1, 4),
    st.integers(1, 6),
    st.integers(1, 3),
    st.integers(1, 5),
    st.integers(0, 2**32),
    st.booleans(),
)
def test_the_batched_fast_path_is_the_engine_bit_for_bit(
    p, tq, tk, d, dv, seed, masked
):
    """Does the unchecked batch path compute attention as by hand and as the engine?"""
    rng = np.random.default_rng(seed)
    q = rng.integers(-20, 21, (p, tq, d)) / 10
    k = rng.integers(-20, 21, (tk, d)) / 10
    v = rng.integers(-20, 21, (tk, dv)) / 10
    mask = np.where(rng.random((p, tq, tk)) < 0.4, -np.inf, 0.0) if masked else None
    fast = attention_steps(q, k, v, mask)
    for b in range(p):
        by_hand = _attention_by_hand(
            q[b].tolist(),
            k.tolist(),
            v.tolist(),
            None if mask is None else mask[b].tolist(),
            1.0,
        )
        _assert_close_by_hand(fast.scores[b], by_hand["S"])
        _assert_close_by_hand(fast.exp[b], by_hand["exp"])
        _assert_close_by_hand(fast.weights[b], by_hand["A"])
        _assert_close_by_hand(fast.output[b], by_hand["O"])
        undefined = [max(row) == -math.inf for row in by_hand["S"]]
        assert fast.undefined_rows[b].tolist() == undefined
    # The checked wrapper adds checks and broadcasting, not arithmetic.
    trace = attention(q, k, v, mask=mask, scale=1.0)
    for name in ("scores", "exp", "weights", "output", "undefined_rows"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(trace, name))


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 3), st.integers(1, 4), st.integers(1, 5), st.integers(0, 2**32))
def test_given_scores_skip_the_product_and_match_the_engine(b, tq, tk, seed):
    """Do steps from given scores softmax them as by hand and as the engine does?"""
    rng = np.random.default_rng(seed)
    scores = rng.integers(-20, 21, (b, tq, tk)) / 10
    hidden = rng.random((b, tq, tk)) < 0.3
    given_scores = np.where(hidden, -np.inf, scores)
    fast = attention_steps(given_scores, None, None)
    assert fast.output is None
    for batch, rows in enumerate(given_scores.tolist()):
        for i, row in enumerate(rows):
            exps, weights = _row_by_hand(row)
            _assert_close_by_hand(fast.scores[batch, i], row)
            _assert_close_by_hand(fast.exp[batch, i], exps)
            _assert_close_by_hand(fast.weights[batch, i], weights)
            assert fast.undefined_rows[batch, i] == (max(row) == -math.inf)
    trace = attention(
        np.where(hidden, 0.0, scores), np.eye(tk), np.eye(tk), mask=~hidden, scale=1.0
    )
    for name in ("scores", "exp", "weights", "undefined_rows"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(trace, name))


def test_every_buggy_pipeline_is_the_engine_run_the_buggy_way():
    """Does each engine-level mistake equal engine.attention with that change?"""
    q = np.array([[1.0, 2, 0, -1], [2, -1, 1, 0], [0, 1, 2, 2]])
    k = np.array([[1.0, 0, -2, 1], [2, 1, 0, 0], [-1, 1, 1, 2], [0, 2, -1, 1]])
    v = np.array([[1.0, 2], [0, -1], [2, 1], [1, 1]])
    visible = np.array([[1, 1, 0, 1], [1, 0, 1, 1], [1, 1, 1, 0]], dtype=bool)
    runs = qkv_pipelines(
        q, k, v, visible=visible, causal=False, candidates=QKV_MISTAKES
    )
    by_name = {n: i for i, n in enumerate(runs.names)}
    expected = {
        "correct": attention(q, k, v, mask=visible),
        "no_scale": attention(q, k, v, mask=visible, scale=1.0),
        "scale_by_d": attention(q, k, v, mask=visible, scale=1 / 4),
        "scale_multiplied": attention(q, k, v, mask=visible, scale=2.0),
        "k_not_transposed": attention(q, k.T, v, mask=visible),
        "mask_ignored": attention(q, k, v),
    }
    for name, trace in expected.items():
        row = by_name[name]
        np.testing.assert_allclose(runs.values["scores"][row], trace.scores)
        np.testing.assert_allclose(runs.values["weights"][row], trace.weights)
        np.testing.assert_allclose(runs.values["output"][row], trace.output)
    correct = expected["correct"]
    unmasked = expected["mask_ignored"]
    derived = {
        "no_softmax": np.where(visible, correct.scores, 0.0),
        "unnormalized_exp": correct.exp,
        "mask_after_softmax": unmasked.weights * visible,
        "softmax_over_queries": np.exp(correct.scores) / np.exp(correct.scores).sum(0),
        "hard_argmax": np.eye(4)[correct.scores.argmax(axis=1)],
    }
    for name, weights in derived.items():
        np.testing.assert_allclose(runs.values["weights"][by_name[name]], weights)
        np.testing.assert_allclose(runs.values["output"][by_name[name]], weights @ v)


def test_the_lesson_example_is_the_lessons_numbers():
    """Is lesson_example q=[1,0], K=I, V=diag(1,2) with the lesson's results?"""
    problem = generate("lesson_example", 0, 1)
    assert problem.given["Q"].tolist() == [[1, 0]]
    answer = problem.to_dict()["answer"]
    assert answer["S"][0] == pytest.approx([0.7071, 0.0], abs=5e-5)
    assert answer["A"][0] == pytest.approx([0.6698, 0.3302], abs=5e-5)
    assert answer["O"][0] == pytest.approx([0.6698, 0.6605], abs=5e-5)
    other = generate("lesson_example", 99, 3).to_dict()
    assert (other["given"], other["answer"]) == (problem.to_dict()["given"], answer)


@problem_settings
@given(
    st.sampled_from(["attention", "causal", "padding_mask", "output", "uniform"]),
    levels,
    seeds,
)
def test_the_output_depends_on_the_weights(kind, level, seed):
    """Does V always have two different rows, so that O tells weights apart?"""
    v = generate(kind, seed, level).given["V"]
    assert (v != v[0]).any()


@problem_settings
@given(levels, seeds)
def test_uniform_scores_give_the_mean_of_the_value_rows(level, seed):
    """With equal scores, are the weights 1/Tk and the output V's mean row?"""
    problem = generate("uniform", seed, level)
    v = problem.given["V"]
    tq, tk = problem.given["S"].shape
    np.testing.assert_allclose(problem.answer["A"], np.full((tq, tk), 1 / tk))
    np.testing.assert_allclose(
        problem.answer["O"],
        np.broadcast_to(v.mean(axis=0), (tq, v.shape[1])),
        atol=1e-12,
    )
    if level == 1:
        assert np.all(problem.given["S"] == 0)  # the lesson's exercise


@problem_settings
@given(levels, seeds)
def test_temperature_the_colder_distribution_is_sharper(level, seed):
    """Is the lower temperature's distribution the sharper one, as answered?"""
    problem = generate("temperature", seed, level)
    colder = "A1" if problem.given["tau1"] < problem.given["tau2"] else "A2"
    assert problem.answer_json("sharper") == colder
    assert (
        problem.answer[colder].max()
        > problem.answer[{"A1": "A2", "A2": "A1"}[colder]].max()
    )


@problem_settings
@given(levels, seeds)
def test_shift_invariance_the_weights_do_not_move(level, seed):
    """Do S and S + c give the same softmax, and is the answer "same"?"""
    problem = generate("shift_invariance", seed, level)
    np.testing.assert_allclose(problem.answer["A"], problem.answer["A_shifted"])
    assert problem.answer_json("same") == "same"
    np.testing.assert_allclose(
        problem.answer["S_shifted"], problem.given["S"] + problem.given["c"]
    )


@problem_settings
@given(levels, seeds)
def test_scale_factor_and_spread(level, seed):
    """Is the factor head_dim**-0.5 and the dot product's spread √head_dim?"""
    problem = generate("scale", seed, level)
    d = problem.given["head_dim"]
    assert float(problem.answer["factor"]) == pytest.approx(d**-0.5)
    assert float(problem.answer["std"]) == pytest.approx(math.sqrt(d))


@problem_settings
@given(levels, seeds)
def test_shapes_and_contracted_axes(level, seed):
    """Are S, A [B,H,Tq,Tk], O [B,H,Tq,dv], and the contracted axes d and Tk?"""
    problem = generate("shapes", seed, level)
    g = problem.given
    data = problem.to_dict()["answer"]
    assert (
        data["S_shape"] == data["A_shape"] == [g["batch"], g["heads"], g["Tq"], g["Tk"]]
    )
    assert data["O_shape"] == [g["batch"], g["heads"], g["Tq"], g["dv"]]
    assert (data["QK_contracts"], data["AV_contracts"]) == ("d", "Tk")
    assert len(set(g.values())) == 6  # every size distinct: no answer is ambiguous


def test_some_padding_problems_have_an_undefined_row():
    """Do padding problems sometimes hide every key from a query, answered null?"""
    undefined = []
    for seed in range(60):
        data = generate("padding_mask", seed, 3).to_dict()
        rows = [r for r in data["answer"]["A"] if all(x is None for x in r)]
        if rows:
            undefined.append(seed)
            for row in data["answer"]["S"][: len(rows)]:
                assert set(row) == {"-inf"}
    assert len(undefined) >= 10


@settings(max_examples=60, deadline=None)
@given(kinds, levels, seeds)
def test_every_applicable_mistake_is_clearly_apart(kind, level, seed):
    """Does every pair of pipelines (and the correct one) differ by more than
    the tolerance somewhere, so a diagnosis always means something?"""
    problem = generate(kind, seed, level)
    pipelines = problem.pipelines
    names = list(pipelines)
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            assert any(
                _apart(
                    pipelines[first][a.name],
                    pipelines[second][a.name],
                    0.5 if a.exact else 4 * problem.tolerance,
                )
                for a in problem.ask
            ), (first, second)


def _apart(a, b, margin):
    if a.shape != b.shape:
        return True
    a, b = np.nan_to_num(a, nan=1e300), np.nan_to_num(b, nan=1e300)
    with np.errstate(invalid="ignore"):
        return bool((~(np.abs(a - b) <= margin) & (a != b)).any())


def test_across_kinds_every_misconception_can_be_diagnosed():
    """Is each catalog name carried by some generated problem?"""
    seen = set()
    for kind in KINDS:
        for level in LEVELS:
            for seed in range(15):
                seen.update(generate(kind, seed, level).misconceptions)
    assert seen == set(MISCONCEPTION_NAMES)


# ---------------------------------------------------------------------------
# The `quizsvc problem` command.


def test_problem_list_names_every_kind():
    """Does `quizsvc problem --list` print every kind with its description?"""
    result = CliRunner().invoke(main, ["problem", "--list"])
    assert result.exit_code == 0
    for kind, text in KINDS.items():
        assert kind in result.output and text in result.output


def test_problem_json_is_the_public_dict_unless_answers_are_asked_for():
    """Does --json print the public dict, and --with-answer add the answers?"""
    result = CliRunner().invoke(
        main, ["problem", "attention", "--seed", "7", "--level", "2", "--json"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == generate("attention", 7, 2).public_dict()
    result = CliRunner().invoke(
        main,
        [
            "problem",
            "attention",
            "--seed",
            "7",
            "--level",
            "2",
            "--json",
            "--with-answer",
        ],
    )
    assert json.loads(result.output) == generate("attention", 7, 2).to_dict()


def test_problem_text_shows_prompt_givens_asks_and_answers():
    """Does the text output show the prompt, the givens, the asks and answers?"""
    result = CliRunner().invoke(
        main, ["problem", "lesson_example", "--with-answer", "--lang", "en"]
    )
    assert result.exit_code == 0, result.output
    assert "The lesson's worked example" in result.output
    assert "[0.7071  0.0000]" in result.output
    assert "[0.6698  0.6605]" in result.output
    zh = CliRunner().invoke(
        main,
        ["problem", "padding_mask", "--seed", "3", "--level", "3", "--with-answer"],
    )
    assert "已知" in zh.output and "undefined" in zh.output


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["problem"], "give a problem KIND"),
        (["problem", "nope"], "KIND"),
        (["problem", "scores", "--level", "4"], "--level"),
        (["problem", "scores", "--seed", "-1"], "--seed"),
    ],
)
def test_problem_bad_input_exits_2(args, fragment):
    """Is bad input a one-line usage error with exit code 2?"""
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert fragment in result.output and "Traceback" not in result.output


def test_integers_redraw_rejected_words_in_order():
    """Do rejected raw words get redrawn in index order, as the NumPy version did?"""
    from numpy.random import PCG64

    from quizsvc.problems.draws import Draws

    def reference(bits, low, high, count):
        span = high - low + 1
        limit = np.uint64((1 << 64) - (1 << 64) % span)
        words = bits.random_raw(count)
        bad = words >= limit
        while bad.any():
            words[bad] = bits.random_raw(int(bad.sum()))
            bad = words >= limit
        return ((words % np.uint64(span)).astype(np.int64) + low).tolist()

    # A span of 2**63 + 2**61 rejects about 3 words in 8.
    low, high = -(2**62), 2**62 + 2**61 - 1
    for seed in range(50):
        draws, bits = Draws(seed), PCG64(seed)
        for shape in [(5,), (3, 4), (1,)]:
            expected = reference(bits, low, high, math.prod(shape))
            assert draws.integers(low, high, shape).ravel().tolist() == expected


@pytest.mark.parametrize(
    ("low", "high"),
    [(-2, 2), (-20, 20), (-(2**62), 2**62 + 2**61 - 1)],  # the last rejects 3 in 8
)
def test_skipping_redraws_takes_the_words_they_would_take(low, high):
    """Does giving up early on a hopeless redraw leave the stream where it was?"""
    from quizsvc.problems.draws import Draws

    for seed in range(40):
        skipped, drawn = Draws(seed), Draws(seed)
        skipped.skip_integer_lists(low, high, 6, 7)
        for _ in range(7):
            drawn.integer_list(low, high, 6)
        assert skipped.integer_list(low, high, 5) == drawn.integer_list(low, high, 5)


def test_k_for_kt_is_unseen_only_when_every_visible_score_agrees():
    """Is a draw rejected early only when K and Kᵀ really give the same scores?"""
    from quizsvc.problems.kinds import _k_for_kt_unseen

    q = np.array([[1.0, 2.0], [0.0, -1.0]])
    symmetric = np.array([[1.0, 2.0], [2.0, -1.0]])
    lopsided = np.array([[1.0, 2.0], [0.0, -1.0]])
    assert _k_for_kt_unseen(q, symmetric, None)
    assert not _k_for_kt_unseen(q, lopsided, None)
    # Hide every cell where QK and QKᵀ differ: nothing visible tells them apart.
    differs = np.abs(q @ lopsided - q @ lopsided.T) > 1e-9
    assert _k_for_kt_unseen(q, lopsided, ~differs)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(LEVELS), seeds)
def test_given_weights_lie_strictly_between_zero_and_one(level, seed):
    """Are the output kind's given weights what a softmax could give: no 0, no 1?

    A row with a weight of 1 makes the output one V row, the "pick" the lesson
    says attention is not (content review 2026-12-02, row 17).
    """
    a = generate("output", seed, level).given["A"]
    assert ((a > 0) & (a < 1)).all()
    assert np.allclose(a.sum(axis=1), 1.0)


def test_the_padding_item_draws_a_fully_masked_row_in_most_seeds():
    """Does the bank's padding item (level 2) hide every key from some query in at
    least half of its seeds, so the idea of an undefined row is really practised?"""
    undefined = sum(
        bool(np.isnan(generate("padding_mask", seed, 2).answer["A"]).all(1).any())
        for seed in range(200)
    )
    assert undefined >= 100
    assert undefined <= 180  # and not every time: the learner must still look


def _prompt_texts(problem) -> list[str]:
    texts = list(problem.prompt.values())
    for ask in problem.ask:
        texts.extend(ask.label.values())
    return texts


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("level", LEVELS)
def test_generated_prompts_write_the_banks_notation(kind, level):
    """Do generated prompts write −∞, head_dim**−0.5 and 保留四位小数 as the bank
    does, offering -inf only as the ASCII way to type it?"""
    for seed in range(12):
        for text in _prompt_texts(generate(kind, seed, level)):
            assert "**-" not in text
            if "位小数" in text:
                assert re.search(r"保留[一二三四五六七八九]位小数", text), text
            assert not re.search(r"保留 ?\d", text)
            if "-inf" in text:
                assert "−∞ 或 -inf" in text or "−∞ or -inf" in text, text


def test_the_softmax_row_asks_for_the_weights_a_by_name():
    """Does the English prompt say "the weights a", never "Give a to …"?"""
    prompt = generate("softmax_row", 3, 2).prompt["en"]
    assert "Give the weights a to 4 decimals." in prompt
    assert "Give a " not in prompt
