"""The grader: right answers pass, each classic mistake is named, nothing crashes."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from quizsvc.cli import main
from quizsvc.grading import MISCONCEPTIONS, FormatError, grade, parse_answer
from quizsvc.problems import (
    KINDS,
    LEVELS,
    MISCONCEPTION_NAMES,
    answer_to_json,
    generate,
)

kinds = st.sampled_from(sorted(KINDS))
levels = st.sampled_from(LEVELS)
seeds = st.integers(min_value=0, max_value=2**32)
layouts = st.sampled_from(["json", "matlab", "chinese"])
grading_settings = settings(
    max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def _cell(x: float, decimals: int) -> str:
    if math.isnan(x):
        return "undefined"
    if math.isinf(x):
        return "-inf" if x < 0 else "inf"
    return f"{x:.{decimals}f}"


def typed(problem, values, layout: str = "matlab") -> dict[str, str]:
    """The answers as a learner types them: text rounded to the precision."""
    out = {}
    for ask in problem.ask:
        value = values[ask.name]
        if ask.format in ("choice", "shape"):
            out[ask.name] = (
                str(answer_to_json(ask, value))
                if ask.format == "shape"
                else answer_to_json(ask, value)
            )
            continue
        if ask.format == "number":
            out[ask.name] = _cell(float(value), problem.precision)
            continue
        decimals = 0 if ask.format == "boolean_matrix" else problem.precision
        rows = [[_cell(float(x), decimals) for x in row] for row in value]
        if layout == "json":
            out[ask.name] = json.dumps(rows)
        elif layout == "chinese":
            out[ask.name] = "；".join("，".join(r) for r in rows).replace("-", "−")
        else:
            out[ask.name] = "[" + "; ".join(" ".join(r) for r in rows) + "]"
    return out


def exact(problem, values) -> dict:
    """The answers as the web API posts them (JSON values)."""
    return {a.name: answer_to_json(a, values[a.name]) for a in problem.ask}


# ---------------------------------------------------------------------------
# Laws over every kind, level and many seeds.


@grading_settings
@given(kinds, levels, seeds)
def test_the_exact_answer_scores_one(kind, level, seed):
    """Does the engine's own answer, as JSON, score 1.0 with no diagnosis?"""
    problem = generate(kind, seed, level)
    verdict = grade(problem, exact(problem, problem.answer))
    assert verdict.correct and verdict.score == 1.0 and verdict.attempt
    assert verdict.misconception is None
    assert all(s.correct and s.score == 1.0 for s in verdict.steps)
    json.dumps(verdict.to_dict(), allow_nan=False)


@grading_settings
@given(kinds, levels, seeds, layouts)
def test_the_answer_rounded_to_the_precision_scores_one(kind, level, seed, layout):
    """Does the answer typed as text, rounded to the stated decimals, score 1.0?"""
    problem = generate(kind, seed, level)
    verdict = grade(problem, typed(problem, problem.answer, layout))
    assert verdict.correct and verdict.score == 1.0, verdict.to_dict()


@grading_settings
@given(kinds, levels, seeds, st.booleans(), st.data())
def test_each_misconception_is_named_and_not_marked_correct(
    kind, level, seed, as_text, data
):
    """Is a mistake's own answer diagnosed as exactly that mistake, and wrong?"""
    problem = generate(kind, seed, level)
    assume(problem.misconceptions)
    name = data.draw(st.sampled_from(problem.misconceptions))
    values = problem.pipelines[name]
    answers = typed(problem, values) if as_text else exact(problem, values)
    verdict = grade(problem, answers)
    assert not verdict.correct and verdict.score < 1.0
    assert verdict.misconception == name, (name, verdict.to_dict())
    assert verdict.feedback["en"] and verdict.feedback["zh-CN"]


@grading_settings
@given(kinds, levels, seeds, st.data())
def test_a_change_beyond_the_tolerance_is_wrong(kind, level, seed, data):
    """Does moving one cell by more than the tolerance make the answer wrong?"""
    problem = generate(kind, seed, level)
    ask = data.draw(st.sampled_from(problem.ask))
    values = {
        a.name: np.array(problem.answer[a.name], dtype=np.float64) for a in problem.ask
    }
    target = values[ask.name]
    if ask.format == "choice":
        target[...] = (target + 1) % len(ask.choices)
    else:
        finite = np.flatnonzero(np.isfinite(target.ravel()))
        assume(finite.size)
        cell = data.draw(st.sampled_from(finite.tolist()))
        if ask.exact:
            step = 1.0 if ask.format == "shape" else None
            flat = target.reshape(-1)
            flat[cell] = flat[cell] + step if step else 1.0 - flat[cell]
        else:
            size = data.draw(
                st.floats(min_value=1.2 * problem.tolerance, max_value=10.0)
            )
            sign = data.draw(st.sampled_from([-1.0, 1.0]))
            target.reshape(-1)[cell] += sign * size
    verdict = grade(problem, exact(problem, values))
    assert not verdict.correct and verdict.score < 1.0
    step = next(s for s in verdict.steps if s.name == ask.name)
    assert not step.correct


_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.floats(allow_nan=True)
    | st.integers()
    | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=3), inner, max_size=2)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kinds, levels, st.integers(0, 50), st.data())
def test_grading_never_raises_whatever_is_typed(kind, level, seed, data):
    """Does any string or JSON value for any name give a verdict, never a crash?"""
    problem = generate(kind, seed, level)
    names = [a.name for a in problem.ask]
    answers = data.draw(
        st.dictionaries(
            st.sampled_from(names) | st.text(max_size=5),
            st.text(max_size=40) | _json_values,
            max_size=len(names) + 1,
        )
    )
    verdict = grade(problem, answers)
    json.dumps(verdict.to_dict(), allow_nan=False)
    assert 0.0 <= verdict.score <= 1.0
    assert set(verdict.feedback) == {"zh-CN", "en"}


# ---------------------------------------------------------------------------
# The lesson's example and exercise.

LESSON = generate("lesson_example", 0, 1)


@pytest.mark.parametrize(
    "answers",
    [
        {"S": "[0.7071, 0]", "A": "[0.6698, 0.3302]", "O": "[0.6698, 0.6605]"},
        {"S": "√2/2 0", "A": "0.6698，0.3302", "O": "0.6698；0.6605"},
        {
            "S": "1/sqrt(2), 0",
            "A": "exp(√2/2)/(exp(√2/2)+1)  1/(exp(√2/2)+1)",
            "O": [[0.6698, 0.6605]],
        },
        {"S": [0.70711, 0.0], "A": "0.6698\n0.3302", "O": "[[0.66976, 0.66048]]"},
    ],
    ids=["json", "chinese-ime-and-sqrt", "expressions", "column-and-lists"],
)
def test_the_lessons_worked_example_in_the_ways_people_type_it(answers):
    """Is the lesson's example graded right however the numbers are typed?"""
    verdict = grade(LESSON, answers)
    assert verdict.correct, verdict.to_dict()


@pytest.mark.parametrize(
    ("answers", "misconception", "step"),
    [
        ({"S": "1 0", "A": "0.7311 0.2689", "O": "0.7311 0.5379"}, "no_scale", "S"),
        ({"S": "0.5 0", "A": "0.6225 0.3775", "O": "0.6225 0.7551"}, "scale_by_d", "S"),
        ({"S": "0.7071 0", "A": "0.7071 0", "O": "0.7071 0"}, "no_softmax", "A"),
        ({"S": "0.7071 0", "A": "2.0281 1", "O": "2.0281 2"}, None, "A"),
        ({"S": "0.7071 0", "A": "1 0.4931", "O": "1 0.9862"}, "unnormalized_exp", "A"),
        ({"S": "0.7071 0", "A": "1 0", "O": "1 0"}, "hard_argmax", "A"),
    ],
)
def test_the_lessons_example_names_the_classic_mistakes(answers, misconception, step):
    """Does the worked example name the mistake behind each wrong answer?"""
    verdict = grade(LESSON, answers)
    assert not verdict.correct
    assert verdict.misconception == misconception
    first_wrong = next(s.name for s in verdict.steps if not s.correct)
    assert first_wrong == step


def _the_exercise():
    # The lesson's exercise: both scores 0, V unchanged from the example.
    for seed in range(3000):
        problem = generate("uniform", seed, 1)
        if problem.given["V"].tolist() == [[1, 0], [0, 2]]:
            return problem
    raise AssertionError("no uniform problem with the lesson's V")


def test_the_lessons_exercise():
    """Equal scores 0 with the lesson's V: weights 0.5 each, output [0.5, 1.0]?"""
    problem = _the_exercise()
    assert problem.given["S"].tolist() == [[0, 0]]
    assert grade(problem, {"A": "0.5 0.5", "O": "0.5 1.0"}).correct
    summed = grade(problem, {"A": "1 1", "O": "1 2"})
    assert summed.misconception == "unnormalized_exp"
    assert "exp(S − m)" in summed.feedback["en"]


# ---------------------------------------------------------------------------
# Error carried forward, partial credit, shapes, formats.


def test_a_slip_carried_forward_earns_the_later_steps():
    """When S has a slip, do A = softmax(own S) and O = own A·V earn full credit?"""
    verdict = grade(LESSON, {"S": "0.6 0", "A": "0.6457 0.3543", "O": "0.6457 0.7086"})
    s, a, o = verdict.steps
    assert not s.correct and s.ok == [[False, True]] and s.score == 0.5
    assert not a.correct and a.consistent_with_previous and a.score == 1.0
    assert not o.correct and o.consistent_with_previous and o.score == 1.0
    assert verdict.score == pytest.approx(2.5 / 3)
    assert verdict.misconception is None
    assert "follow correctly from your own scores S" in verdict.feedback["en"]


def test_a_later_step_wrong_on_its_own_terms_is_not_praised():
    """If A follows from the learner's S but O does not, is O still called wrong?"""
    verdict = grade(LESSON, {"S": "0.6 0", "A": "0.6457 0.3543", "O": "0.9 0.1"})
    _s, a, o = verdict.steps
    assert a.consistent_with_previous and not o.consistent_with_previous
    assert "follow correctly" not in verdict.feedback["en"]
    assert "后面的步骤" not in verdict.feedback["zh-CN"]


def test_a_mistake_made_on_top_of_an_earlier_slip_is_still_named():
    """If S has a slip and A forgets to normalize it, is the mistake named at A?"""
    verdict = grade(LESSON, {"S": "0.6 0", "A": "1 0.5488", "O": "1 1.0976"})
    assert verdict.misconception == "unnormalized_exp"
    assert verdict.misconception_step == "A"
    assert verdict.feedback["en"].startswith("The first wrong step is the scores S")


def test_partial_credit_counts_cells():
    """Does one wrong cell of four cost a quarter of that step?"""
    problem = generate("weights", 4, 2)
    values = {"A": np.array(problem.answer["A"])}
    values["A"].reshape(-1)[0] += 0.5
    step = grade(problem, exact(problem, values)).steps[0]
    assert step.score == pytest.approx(1 - 1 / values["A"].size)


def _a_non_square_scores_problem():
    for seed in range(200):
        problem = generate("attention", seed, 3)
        if problem.answer["S"].shape[0] != problem.answer["S"].shape[1]:
            return problem
    raise AssertionError("no non-square attention problem")


def test_a_transposed_matrix_is_reported_as_such():
    """Is an S typed transposed reported "expected 2×3, got 3×2 — transposed?"."""
    problem = _a_non_square_scores_problem()
    rows, cols = problem.answer["S"].shape
    values = dict(problem.answer)
    values["S"] = problem.answer["S"].T
    verdict = grade(problem, exact(problem, values))
    step = verdict.steps[0]
    assert step.shape_error["en"].endswith(
        f"expected {rows}×{cols}, got {cols}×{rows} — transposed?"
    )
    assert verdict.misconception == "transposed"
    assert verdict.attempt


def test_any_other_shape_is_a_format_error_that_costs_nothing():
    """Is a 1×1 answer to a 1×2 question a format error, not an attempt?"""
    verdict = grade(LESSON, {"S": "0.7071", "A": "0.6698 0.3302", "O": "0.6698 0.6605"})
    assert not verdict.attempt and not verdict.correct
    assert verdict.misconception is None
    error = verdict.format_errors[0]
    assert error.quantity == "S" and "expected 1×2" in error.message["en"]
    assert "这次不算作答" in verdict.feedback["zh-CN"]


def test_a_format_error_names_the_row_and_column():
    """Does an unreadable cell give its row and column, in both languages?"""
    verdict = grade(LESSON, {"S": "[0.7071, abc]"})
    error = verdict.format_errors[0]
    assert (error.row, error.col) == (1, 2)
    assert "row 1, column 2" in error.message["en"]
    assert "第 1 行第 2 列" in error.message["zh-CN"]


def test_unknown_names_and_non_mappings_are_format_errors():
    """Are answers to quantities the problem does not ask for flagged?"""
    verdict = grade(LESSON, {"s": "1 0"})
    assert "has no quantity 's'" in verdict.format_errors[0].message["en"]
    assert grade(LESSON, ["1 0"]).format_errors[0].quantity == "answers"


def test_right_answers_with_an_unknown_name_are_not_an_attempt():
    """Do all-right steps still say so when a stray name makes it a format error?"""
    answers = {name: LESSON.answer_json(name) for name in ("S", "A", "O")}
    verdict = grade(LESSON, {**answers, "s": "1 0"})
    assert not verdict.attempt and not verdict.correct
    assert [s.correct for s in verdict.steps] == [True, True, True]
    assert verdict.misconception is None
    assert "has no quantity 's'" in verdict.feedback["en"]


def test_unanswered_steps_score_nothing_but_are_not_errors():
    """Does a partly answered submission grade what is there?"""
    verdict = grade(LESSON, {"S": "0.7071 0"})
    assert verdict.attempt and not verdict.correct
    assert verdict.score == pytest.approx(1 / 3)
    assert [s.answered for s in verdict.steps] == [True, False, False]
    assert "No answer yet for the weights A" in verdict.feedback["en"]


def test_an_undefined_row_may_be_written_as_one_word():
    """Can a fully masked row be answered "undefined" or "未定义" in one word?"""
    for seed in range(100):
        problem = generate("padding_mask", seed, 2)
        if np.isnan(problem.answer["A"]).all(axis=1).any():
            break
    else:
        raise AssertionError("no padding problem with an undefined row")
    answers = typed(problem, problem.answer)
    for name in ("A", "O"):
        rows = answers[name].strip("[]").split("; ")
        answers[name] = "\n".join("未定义" if "undefined" in r else r for r in rows)
    assert grade(problem, answers).correct


def test_the_visibility_matrix_takes_flags_in_any_spelling():
    """Is the causal visibility accepted as 1/0, true/false or 是/否?"""
    problem = generate("causal", 1, 1)
    base = exact(problem, problem.answer)
    for visible in ("1 0; 1 1", [[True, False], [True, True]], "是 否\n是 是"):
        assert grade(problem, {**base, "visible": visible}).correct


def test_shapes_may_be_typed_with_sizes_or_axis_names():
    """Are "2×8×5×7", "(2, 8, 5, 7)" and "[batch, heads, Tq, Tk]" all read?"""
    problem = generate("shapes", 2, 2)
    g = problem.given
    base = exact(problem, problem.answer)
    variants = [
        f"{g['batch']}×{g['heads']}×{g['Tq']}×{g['Tk']}",
        f"({g['batch']}, {g['heads']}, {g['Tq']}, {g['Tk']})",
        "[batch, heads, Tq, Tk]",
    ]
    for text in variants:
        assert grade(problem, {**base, "S_shape": text}).correct, text
    assert grade(problem, {**base, "QK_contracts": "head_dim"}).correct
    wrong = grade(
        problem,
        {
            **base,
            "S_shape": "[batch, heads, Tk, Tq]",
            "A_shape": "[batch, heads, Tk, Tq]",
            "O_shape": "[batch, heads, dv, Tq]",
        },
    )
    assert wrong.misconception == "transposed"


def test_choices_by_value_or_label_in_either_language():
    """Is "相同" as good as "same" for the shift-invariance question?"""
    problem = generate("shift_invariance", 3, 1)
    base = exact(problem, problem.answer)
    assert grade(problem, {**base, "same": "相同"}).correct
    assert grade(problem, {**base, "same": "The same"}).correct
    verdict = grade(problem, {**base, "same": "不同"})
    assert not verdict.correct and verdict.steps[-1].score == 0.0
    assert grade(problem, {**base, "same": "maybe"}).format_errors


def test_scale_answers_may_be_expressions():
    """Can the scale factor be typed as 1/√d or d**-0.5?"""
    problem = generate("scale", 0, 2)
    d = problem.given["head_dim"]
    for factor in (f"1/√{d}", f"{d}**-0.5", f"1/sqrt({d})"):
        assert grade(problem, {"factor": factor, "std": f"√{d}"}).correct


# ---------------------------------------------------------------------------
# parse_answer on its own.


def test_parse_answer_returns_an_array_or_a_format_error():
    """Does parse_answer give arrays for good input and FormatError otherwise?"""
    assert parse_answer("[1 2; 3 4]", (2, 2)).tolist() == [[1, 2], [3, 4]]
    assert parse_answer([[1, 2], [3, 4]], (2, 2)).shape == (2, 2)
    assert parse_answer("1 2 3", (3, 1)).shape == (3, 1)
    assert parse_answer("[[1, 2]]", (2, 1)).shape == (2, 1)
    assert parse_answer("1/3", ()).shape == ()
    assert parse_answer("[0.25]", ()) == 0.25
    assert parse_answer("[1 2; 3 4; 5 6]", (2, 3)).shape == (3, 2)  # transposed
    assert isinstance(parse_answer("[1 2; 3 4]", (2, 3)), FormatError)
    assert isinstance(parse_answer("", (2, 3)), FormatError)
    assert isinstance(parse_answer("1 2", ()), FormatError)


# ---------------------------------------------------------------------------
# The catalog.


def test_the_catalog_names_and_explanations():
    """Are the twelve names the issue lists there, each explained in both
    languages, in one to two sentences?"""
    assert tuple(MISCONCEPTIONS) == MISCONCEPTION_NAMES
    assert set(MISCONCEPTIONS) == {
        "no_scale",
        "scale_by_d",
        "scale_multiplied",
        "softmax_over_queries",
        "no_softmax",
        "unnormalized_exp",
        "mask_ignored",
        "mask_after_softmax",
        "causal_flipped",
        "hard_argmax",
        "transposed",
        "k_not_transposed",
    }
    for text in MISCONCEPTIONS.values():
        assert set(text) == {"zh-CN", "en"}
        assert 1 <= text["en"].count(". ") + 1 <= 2 and text["zh-CN"].endswith("。")
    explanations = [t["en"] for t in MISCONCEPTIONS.values()]
    assert len(set(explanations)) == len(explanations)


# ---------------------------------------------------------------------------
# The `quizsvc check` command.


def _submission(answers, **problem):
    spec = {"kind": "lesson_example", "seed": 0, "level": 1, **problem}
    return json.dumps({"problem": spec, "answers": answers}, ensure_ascii=False)


def test_check_reads_stdin_and_prints_the_verdict():
    """Does `quizsvc check` grade what arrives on stdin, in JSON with --json?"""
    result = CliRunner().invoke(
        main,
        ["check", "--json"],
        input=_submission({"S": "1 0", "A": "0.7311 0.2689", "O": "0.7311 0.5379"}),
    )
    assert result.exit_code == 0, result.output
    verdict = json.loads(result.output)
    assert verdict["misconception"] == "no_scale" and not verdict["correct"]
    text = CliRunner().invoke(
        main,
        ["check", "--lang", "en"],
        input=_submission(
            {"S": "0.7071 0", "A": "0.6698 0.3302", "O": "0.6698 0.6605"}
        ),
    )
    assert "Result: correct" in text.output


def test_check_reads_a_file(tmp_path):
    """Does `quizsvc check FILE` read the submission from a file?"""
    path = tmp_path / "answers.json"
    path.write_text(_submission({"S": "0.7071 0"}), encoding="utf-8")
    result = CliRunner().invoke(main, ["check", str(path), "--json"])
    assert result.exit_code == 0
    assert json.loads(result.output)["steps"][0]["correct"]


def test_check_regenerates_the_problem_and_ignores_a_supplied_answer():
    """Is a tampered "answer" inside the problem ignored?"""
    dump = generate("lesson_example", 0, 1).to_dict()
    dump["answer"] = {"S": [[1, 1]], "A": [[1, 1]], "O": [[1, 1]]}
    result = CliRunner().invoke(
        main,
        ["check", "--json"],
        input=json.dumps(
            {"problem": dump, "answers": {"S": "1 1", "A": "1 1", "O": "1 1"}}
        ),
    )
    assert result.exit_code == 0
    assert not json.loads(result.output)["correct"]


@pytest.mark.parametrize(
    ("stdin", "fragment"),
    [
        ("not json", "not JSON"),
        ("[]", 'expected {"problem"'),
        (json.dumps({"problem": {"kind": "nope"}}), "problem.kind must be one of"),
        (json.dumps({"problem": {"kind": "scores", "level": 7}}), "level must be"),
        (json.dumps({"problem": {"kind": "scores", "seed": "x"}}), "problem.seed"),
        (json.dumps({"problem": {"kind": "scores"}, "answers": [1]}), '"answers"'),
    ],
)
def test_check_bad_input_exits_2(stdin, fragment):
    """Is malformed input a one-line usage error with exit code 2?"""
    result = CliRunner().invoke(main, ["check"], input=stdin)
    assert result.exit_code == 2
    assert fragment in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(
    ("kind", "seed", "level"),
    [
        ("softmax_row", 0, 1),
        ("weights", 3, 1),
        ("attention", 0, 2),
        ("lesson_example", 0, 1),
    ],
)
def test_one_query_normalized_by_column_is_named(kind, seed, level):
    """With Tq = 1, are all-ones weights named softmax_over_queries?"""
    problem = generate(kind, seed, level)
    weights = next(a for a in problem.ask if a.name in ("A", "a"))
    assert weights.shape[0] == 1 < weights.shape[1]
    answers = {a.name: problem.answer_json(a.name) for a in problem.ask}
    answers[weights.name] = [[1] * weights.shape[1]]
    verdict = grade(problem, answers)
    assert verdict.misconception == "softmax_over_queries"
    assert verdict.misconception_step == weights.name


def test_rounding_too_early_is_said_to_be_only_precision():
    """Right to 2 decimals where 4 are asked: does the feedback say just that?"""
    problem = generate("lesson_example", 0, 1)
    answers = {a.name: problem.answer_json(a.name) for a in problem.ask}
    answers["S"] = [[0.71, 0]]
    verdict = grade(problem, answers)
    assert not verdict.correct and verdict.misconception is None
    feedback = verdict.feedback["en"]
    assert "2 decimals" in feedback and "4 are asked" in feedback
    assert "只保留了 2 位小数" in verdict.feedback["zh-CN"]
    # A real slip stays a wrong computation.
    answers["S"] = [[0.75, 0]]
    assert "decimals" not in grade(problem, answers).feedback["en"]
