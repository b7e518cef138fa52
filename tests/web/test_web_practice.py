"""The practice pages: choosing a problem, its permalink, checking it step by step."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quizsvc import create_app, grading, problems
from quizsvc.engine import jsonable
from quizsvc.web.charts import visibility_svg
from quizsvc.web.practice import KIND_TEXT, is_weights
from tests.factories import csrf_token


@pytest.fixture
def app(tmp_path):
    """Practice needs no database rows: any app will do, CSRF checks off."""
    return create_app(
        {
            "TESTING": True,
            "SECRET_KEY": "test-secret",
            "DATABASE_URL": f"sqlite:///{tmp_path / 'practice.sqlite3'}",
            "WTF_CSRF_ENABLED": False,
        }
    )


@pytest.fixture
def client(app):
    return app.test_client()


def url(problem: problems.Problem) -> str:
    return f"/practice/{problem.kind}/{problem.level}/{problem.seed}?lang=en"


def typed(value: Any) -> str:
    """Write one answer entry as a learner could type it."""
    if value is None:
        return "undefined"
    if isinstance(value, str):
        return value
    return repr(float(value))


def form_for(problem: problems.Problem, answers: dict[str, Any]) -> dict[str, str]:
    """The grid form a learner fills in to give these answers (JSON values)."""
    form: dict[str, str] = {}
    for ask in problem.ask:
        value = answers.get(ask.name)
        if value is None:
            continue
        if ask.format == "matrix":
            for i, row in enumerate(value):
                for j, entry in enumerate(row):
                    form[f"cell-{ask.name}-{i}-{j}"] = typed(entry)
        elif ask.format == "boolean_matrix":
            for i, row in enumerate(value):
                for j, entry in enumerate(row):
                    if entry:
                        form[f"cell-{ask.name}-{i}-{j}"] = "1"
        elif ask.format == "shape":
            form[f"answer-{ask.name}"] = str(value)
        else:
            form[f"answer-{ask.name}"] = typed(value)
    return form


def right_answers(problem: problems.Problem) -> dict[str, Any]:
    return {ask.name: problem.answer_json(ask.name) for ask in problem.ask}


def pipeline_answers(problem: problems.Problem, name: str) -> dict[str, Any]:
    values = problem.pipelines[name]
    return {ask.name: jsonable(np.asarray(values[ask.name])) for ask in problem.ask}


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


# --- choosing -----------------------------------------------------------------


def test_every_problem_kind_has_an_interface_name():
    assert set(KIND_TEXT) == set(problems.KINDS)


def test_chooser_lists_every_kind_for_anyone(client):
    html = client.get("/practice?lang=en").get_data(as_text=True)
    assert 'id="choose-form"' in html
    for kind in problems.KINDS:
        assert f'id="kind-{kind}"' in html and f'value="{kind}"' in html
    assert str(KIND_TEXT["causal"][0]) in html


def test_choosing_kind_and_level_opens_a_fresh_permalink(client):
    first = client.get("/practice?kind=attention&level=2")
    second = client.get("/practice?kind=attention&level=2")
    assert first.status_code == second.status_code == 302
    match = re.fullmatch(r"/practice/attention/2/(\d+)", first.location)
    assert match, first.location
    assert first.location != second.location  # a new seed each time


@pytest.mark.parametrize(
    "query",
    [
        "kind=nope&level=1",
        "kind=scores&level=4",
        "kind=scores&level=x",
        "kind=&level=",
        "level=2",
    ],
)
def test_bad_choice_explains_itself(client, query):
    response = client.get(f"/practice?{query}&lang=en")
    assert response.status_code == 400
    html = response.get_data(as_text=True)
    assert 'role="alert"' in html and 'id="choose-form"' in html


# --- one problem --------------------------------------------------------------


def test_permalink_shows_the_same_problem_every_time(client):
    problem = problems.generate("attention", 12345, 2)
    first = client.get(url(problem)).get_data(as_text=True)
    second = client.get(url(problem)).get_data(as_text=True)
    strip = re.compile(r'name="csrf_token" value="[^"]*"')
    assert strip.sub("", first) == strip.sub("", second)
    assert problem.public_dict("en")["prompt"] in first
    # One text input per cell of every asked matrix, and nothing checked yet.
    cells = sum(int(np.prod(ask.shape)) for ask in problem.ask)
    assert len(re.findall(r'name="cell-[SAO]-\d+-\d+"', first)) == cells
    assert 'id="verdict"' not in first and "<svg" not in first
    assert "http://localhost/practice/attention/2/12345" in first


@pytest.mark.parametrize(
    "path",
    [
        "/practice/nope/1/5",
        "/practice/attention/0/5",
        "/practice/attention/4/5",
        f"/practice/attention/1/{2**63}",
        "/practice/attention/1/-5",
        "/practice/attention/one/5",
    ],
)
def test_a_permalink_to_no_problem_is_a_readable_404(client, path):
    response = client.get(path)
    assert response.status_code == 404
    assert "<html" in response.get_data(as_text=True)
    assert client.post(path, data={"cell-S-0-0": "1"}).status_code == 404


def test_right_answers_get_a_tick_in_every_cell(client):
    problem = problems.generate("attention", 7, 2)
    response = client.post(url(problem), data=form_for(problem, right_answers(problem)))
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    assert "All steps are right." in html
    cells = sum(int(np.prod(ask.shape)) for ask in problem.ask)
    assert html.count('<td class="ok">') == cells and '<td class="bad">' not in html


def test_a_wrong_cell_is_marked_and_later_steps_carry_credit_forward(client):
    """Is one wrong score marked ✗ alone, and A, O built on it credited?"""
    problem = problems.generate("lesson_example", 0, 1)
    answers = right_answers(problem)
    answers["S"] = [[0.5, 0.0]]  # the lesson's S is [0.7071, 0]
    s = np.array([[0.5, 0.0]])
    a = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
    answers["A"] = a.tolist()
    answers["O"] = (a @ np.asarray(problem.given["V"], dtype=float)).tolist()
    html = client.post(url(problem), data=form_for(problem, answers)).get_data(
        as_text=True
    )
    wrong = re.search(r'<td class="bad">\s*<input[^>]*name="cell-S-0-0"[^>]*>', html)
    right = re.search(r'<td class="ok">\s*<input[^>]*name="cell-S-0-1"[^>]*>', html)
    # The verdict is the cell's description in words; the glyph is for the eye.
    assert 'aria-describedby="ask-S-wrong"' in wrong.group(0)
    assert 'aria-invalid="true"' in wrong.group(0)
    assert 'aria-describedby="ask-S-right"' in right.group(0)
    assert "aria-invalid" not in right.group(0)
    assert '<span id="ask-S-wrong" hidden>wrong</span>' in html
    assert '<span class="mark" aria-hidden="true">✗</span>' in html
    assert re.search(r'id="step-S">\s*<span aria-hidden="true">✗</span> wrong', html)
    assert 'class="step-result ecf" id="step-A"' in html
    assert "credit carried forward" in html


def test_a_classic_mistake_is_named_and_explained(client):
    problem = problems.generate("lesson_example", 0, 1)
    assert "no_scale" in problem.misconceptions
    response = client.post(
        url(problem), data=form_for(problem, pipeline_answers(problem, "no_scale"))
    )
    html = response.get_data(as_text=True)
    assert 'id="misconception"' in html and "no_scale" not in html
    assert grading.MISCONCEPTION_TITLES["no_scale"]["en"] in html
    # The explanation is said once (in the feedback), not twice.
    sentence = grading.MISCONCEPTIONS["no_scale"]["en"]
    assert text_of(html).replace("&#39;", "'").count(sentence) == 1


def test_weights_are_drawn_true_next_to_yours(client):
    problem = problems.generate("attention", 3, 1)
    answers = right_answers(problem)
    answers["A"] = [[round(1 / len(row), 4)] * len(row) for row in answers["A"]]
    html = client.post(url(problem), data=form_for(problem, answers)).get_data(
        as_text=True
    )
    assert html.count('<svg class="heatmap"') == 2
    assert "<title>Correct A</title>" in html and "<title>Your A</title>" in html


def test_the_visibility_grid_appears_only_after_checking_a_masked_problem(client):
    """For a causal problem, visibility is itself asked: not shown before checking."""
    problem = problems.generate("causal", 3, 1)
    before = client.get(url(problem)).get_data(as_text=True)
    assert 'class="visibility"' not in before
    after = client.post(url(problem), data=form_for(problem, right_answers(problem)))
    html = after.get_data(as_text=True)
    assert after.status_code == 200 and '<svg class="visibility"' in html
    visible = np.asarray(problem.context["visible"])
    assert html.count('class="seen"') == int(visible.sum())
    assert html.count('class="hidden"') == int((~visible).sum())


def test_unmasked_problems_show_no_visibility_grid(client):
    problem = problems.generate("lesson_example", 0, 1)
    html = client.post(url(problem), data=form_for(problem, right_answers(problem)))
    assert 'class="visibility"' not in html.get_data(as_text=True)


def test_a_format_error_is_shown_at_its_field_and_keeps_the_typing(client):
    problem = problems.generate("attention", 7, 1)
    form = form_for(problem, right_answers(problem))
    form["cell-A-0-1"] = "zero point five"
    response = client.post(url(problem), data=form)
    html = response.get_data(as_text=True)
    assert response.status_code == 400
    assert re.search(r'id="error-A" role="alert">[^<]*row 1, column 2', html)
    assert 'value="zero point five"' in html
    assert 'id="verdict"' not in html  # not counted as an attempt


def test_checking_nothing_asks_for_an_answer(client):
    problem = problems.generate("attention", 7, 1)
    response = client.post(url(problem), data={})
    assert response.status_code == 400
    assert "Fill in at least one step" in response.get_data(as_text=True)


def test_a_pasted_matrix_is_graded_and_shown_in_the_grid(client):
    problem = problems.generate("lesson_example", 0, 1)
    response = client.post(
        url(problem),
        data={
            "paste-S": "[0.7071, 0]",
            "paste-A": "0.6698 0.3302",
            "paste-O": "[[0.6698 0.6604]]",
        },
    )
    html = response.get_data(as_text=True)
    assert response.status_code == 200 and "All steps are right." in html
    assert re.search(r'name="cell-S-0-0" value="0.7071"', html)
    assert "[0.7071, 0]</textarea>" not in html  # moved into the grid


def test_a_transposed_paste_stays_in_the_paste_box(client):
    problem = problems.generate("attention", 7, 2)
    s = np.asarray(problem.answer["S"])
    if s.shape[0] == s.shape[1]:
        pytest.skip("needs a non-square S")
    pasted = "; ".join(" ".join(typed(x) for x in row) for row in jsonable(s.T))
    html = client.post(url(problem), data={"paste-S": pasted}).get_data(as_text=True)
    assert "transposed" in text_of(html)
    assert f"{pasted}</textarea>" in html
    assert 'name="cell-S-0-0" value=""' in html


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    kind=st.sampled_from(sorted(problems.KINDS)),
    level=st.sampled_from(problems.LEVELS),
    seed=st.integers(0, 2**40),
)
def test_the_exact_answers_typed_in_the_form_are_always_right(
    client, kind, level, seed
):
    """Whatever the problem, do the exact answers typed in the grid get full marks?"""
    problem = problems.generate(kind, seed, level)
    response = client.post(url(problem), data=form_for(problem, right_answers(problem)))
    assert response.status_code == 200
    assert "All steps are right." in response.get_data(as_text=True)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "cell-S-0-0",
                "cell-A-0-1",
                "paste-S",
                "paste-O",
                "answer-S",
                "cell-O-9-9",
                "paste-A",
            ]
        ),
        st.text(max_size=60),
    )
)
def test_whatever_is_typed_the_page_answers_without_a_server_error(client, form):
    problem = problems.generate("lesson_example", 0, 1)
    assert client.post(url(problem), data=form).status_code in (200, 400)


def test_an_oversized_form_is_refused(client):
    problem = problems.generate("lesson_example", 0, 1)
    response = client.post(url(problem), data={"paste-S": "1 " * 200_000})
    assert response.status_code == 413


def test_checking_needs_the_form_csrf_token(tmp_path):
    app = create_app(
        {
            "TESTING": True,
            "SECRET_KEY": "test-secret",
            "DATABASE_URL": f"sqlite:///{tmp_path / 'csrf.sqlite3'}",
        }
    )
    client = app.test_client()
    problem = problems.generate("lesson_example", 0, 1)
    form = form_for(problem, right_answers(problem))
    assert client.post(url(problem), data=form).status_code == 400
    forged = client.post(url(problem), data={**form, "csrf_token": "forged"})
    assert forged.status_code == 400
    token = csrf_token(client.get(url(problem)).get_data(as_text=True))
    assert (
        client.post(url(problem), data={**form, "csrf_token": token}).status_code == 200
    )


# --- helpers ------------------------------------------------------------------


def test_weights_are_recognised_by_their_name():
    problem = problems.generate("temperature", 1, 1)
    assert [a.name for a in problem.ask if is_weights(a)] == ["A1", "A2"]
    shapes = problems.generate("shapes", 1, 1)
    assert not any(is_weights(a) for a in shapes.ask)


def test_visibility_grid_describes_every_cell():
    svg = str(
        visibility_svg(
            np.array([[True, False], [True, True]]),
            title="Seen",
            visible_text="visible",
            hidden_text="hidden",
        )
    )
    assert "<title>Seen</title>" in svg
    assert "<desc>q0: k0 visible, k1 hidden; q1: k0 visible, k1 visible</desc>" in svg
    assert svg.count("✓") == 3 and svg.count("×") == 1
