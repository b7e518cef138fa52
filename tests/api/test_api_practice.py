"""POST /api/v1/problems and /api/v1/problems/<id>/check: practice over JSON."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quizsvc import create_app, grading, problems
from quizsvc.engine import jsonable


@pytest.fixture
def app(tmp_path):
    return create_app(
        {
            "TESTING": True,
            "SECRET_KEY": "test-secret",
            "DATABASE_URL": f"sqlite:///{tmp_path / 'api.sqlite3'}",
        }
    )


@pytest.fixture
def client(app):
    return app.test_client()


def keys_anywhere(value) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in keys_anywhere(v)}
    if isinstance(value, list):
        return {k for v in value for k in keys_anywhere(v)}
    return set()


def right_answers(problem: problems.Problem) -> dict:
    return {ask.name: problem.answer_json(ask.name) for ask in problem.ask}


def test_a_new_problem_is_public_and_has_a_stateless_id(client):
    response = client.post(
        "/api/v1/problems?lang=en", json={"kind": "attention", "level": 2, "seed": 99}
    )
    assert response.status_code == 201
    body = response.json
    assert body["id"] == "attention:2:99"
    assert (body["kind"], body["level"], body["seed"]) == ("attention", 2, 99)
    assert [ask["name"] for ask in body["ask"]] == ["S", "A", "O"]
    assert isinstance(body["prompt"], str) and "Q" in body["given"]
    assert not keys_anywhere(body) & {"answer", "answers", "pipelines", "expected"}
    assert body["permalink"].endswith("/practice/attention/2/99")
    assert body["check_url"] == "/api/v1/problems/attention:2:99/check"
    again = client.post(
        "/api/v1/problems?lang=en", json={"kind": "attention", "level": 2, "seed": 99}
    )
    assert again.json == body


def test_without_a_seed_the_problem_is_fresh(client):
    first = client.post("/api/v1/problems", json={"kind": "scores"}).json
    second = client.post("/api/v1/problems", json={"kind": "scores"}).json
    assert first["level"] == 1 and first["id"] == f"scores:1:{first['seed']}"
    assert first["seed"] != second["seed"]


@pytest.mark.parametrize(
    "body",
    [
        {"kind": "nope"},
        {"kind": 3},
        {"kind": "scores", "level": 4},
        {"kind": "scores", "level": "2"},
        {"kind": "scores", "level": True},
        {"kind": "scores", "seed": -1},
        {"kind": "scores", "seed": 2**63},
        {"kind": "scores", "seed": 1.5},
        {"kind": "scores", "seed": False},
        {},
    ],
)
def test_bad_requests_for_a_problem_name_the_field(client, body):
    response = client.post("/api/v1/problems", json=body)
    assert response.status_code == 400
    assert response.json["error"] in {"invalid_input", "missing_field"}
    assert any(name in response.json["message"] for name in ("kind", "level", "seed"))


def test_the_body_must_be_json(client):
    assert client.post("/api/v1/problems", data="kind=scores").status_code == 415
    malformed = client.post(
        "/api/v1/problems", data="{kind:", content_type="application/json"
    )
    assert malformed.status_code == 400 and malformed.json["error"] == "malformed_json"


def test_right_answers_score_full_marks(client):
    problem = problems.generate("attention", 5, 2)
    response = client.post(
        "/api/v1/problems/attention:2:5/check", json={"answers": right_answers(problem)}
    )
    assert response.status_code == 200
    body = response.json
    assert body["correct"] is True and body["score"] == 1.0
    assert [step["correct"] for step in body["steps"]] == [True, True, True]
    assert body["misconception"] is None and body["expected"] == right_answers(problem)


def test_typed_text_is_accepted_like_nested_lists(client):
    response = client.post(
        "/api/v1/problems/lesson_example:1:0/check",
        json={
            "answers": {
                "S": "[0.7071, 0]",
                "A": "0.6698 0.3302",
                "O": [[0.6698, 0.6604]],
            }
        },
    )
    assert response.status_code == 200 and response.json["correct"] is True


def test_a_classic_mistake_is_named_with_its_explanation(client):
    problem = problems.generate("lesson_example", 0, 1)
    wrong = {
        ask.name: jsonable(np.asarray(problem.pipelines["no_scale"][ask.name]))
        for ask in problem.ask
    }
    body = client.post(
        "/api/v1/problems/lesson_example:1:0/check", json={"answers": wrong}
    ).json
    assert body["correct"] is False and body["misconception"] == "no_scale"
    assert body["misconception_explanation"] == grading.MISCONCEPTIONS["no_scale"]
    assert body["steps"][0]["ok"] == [[False, True]]


def test_a_format_error_is_a_400_that_says_where(client):
    response = client.post(
        "/api/v1/problems/lesson_example:1:0/check?lang=en",
        json={"answers": {"S": "[0.7, oops]"}},
    )
    assert response.status_code == 400
    body = response.json
    assert body["error"] == "format_error" and "column 2" in body["message"]
    assert body["format_errors"][0]["quantity"] == "S"
    assert body["format_errors"][0]["col"] == 2


@pytest.mark.parametrize("answers", [[1, 2], "S=1", None, 5])
def test_answers_must_be_an_object(client, answers):
    response = client.post(
        "/api/v1/problems/lesson_example:1:0/check", json={"answers": answers}
    )
    assert response.status_code == 400


@pytest.mark.parametrize(
    "ident",
    [
        "nope",
        "attention",
        "attention:1",
        "attention:9:1",
        "attention:1:-1",
        "attention:x:1",
        "nope:1:1",
        "attention:1:" + "9" * 40,
        "attention:1:١٢",
        "attention:١:5",
        "attention:01:5",
        "attention:1:05",
        "attention:1:5:6",
    ],
)
def test_an_id_that_names_no_problem_is_404(client, ident):
    check = client.post(f"/api/v1/problems/{ident}/check", json={"answers": {}})
    assert check.status_code == 404 and check.json["error"] == "not_found"


def test_practice_needs_no_account(client):
    """Can an anonymous client practise (no session, no token) and get a verdict?"""
    created = client.post("/api/v1/problems", json={"kind": "uniform", "seed": 1})
    assert created.status_code == 201
    # uniform:1:1 has S = [0 0] and V = [1 0; -1 -1]: equal weights, O the mean row.
    checked = client.post(
        created.json["check_url"], json={"answers": {"A": "[0.5 0.5]", "O": "[0 -0.5]"}}
    )
    assert checked.status_code == 200
    body = checked.json
    assert body["correct"] is True and body["score"] == 1.0 and body["attempt"] is True
    assert [(s["name"], s["correct"]) for s in body["steps"]] == [
        ("A", True),
        ("O", True),
    ]
    wrong = client.post(
        created.json["check_url"], json={"answers": {"A": "[1 0]", "O": "[1 0]"}}
    )
    assert wrong.status_code == 200 and wrong.json["correct"] is False
    assert wrong.json["score"] < 1.0 and wrong.json["attempt"] is True


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=20,
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(st.dictionaries(st.sampled_from(["S", "A", "O", "x"]), json_values, max_size=4))
def test_any_json_answers_get_a_verdict_or_a_400_never_a_500(client, answers):
    response = client.post(
        "/api/v1/problems/attention:1:3/check",
        data=json.dumps({"answers": answers}),
        content_type="application/json",
    )
    assert response.status_code in (200, 400), response.json


def test_an_oversized_body_is_refused(client):
    answers = {"S": "1 " * 200_000}
    response = client.post(
        "/api/v1/problems/attention:1:3/check", json={"answers": answers}
    )
    assert response.status_code == 413 and response.json["error"]
