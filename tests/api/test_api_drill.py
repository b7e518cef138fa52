"""The JSON API: accounts, tokens, the drill, notes, and the error contract."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from quizsvc.db import get_session
from quizsvc.models import Review
from tests.factories import PASSWORD, make_learner, open_for, sign_in, sync_real_bank

CHOICE = "l16-qkv-which-carries-content"


@pytest.fixture
def app(db_app):
    sync_real_bank(db_app)
    return db_app


@pytest.fixture
def api(learner_client):
    return learner_client


def reviews(app) -> int:
    with app.app_context():
        return get_session().scalar(select(func.count()).select_from(Review))


def test_register_then_login_then_logout(app):
    client = app.test_client()
    created = client.post(
        "/api/v1/auth/register",
        json={"username": "li", "password": PASSWORD, "locale": "en"},
    )
    assert created.status_code == 201 and created.json["user"]["locale"] == "en"
    assert client.get("/api/v1/drill/next").status_code == 200
    assert client.post("/api/v1/auth/logout").json == {"signed_out": True}
    assert client.get("/api/v1/drill/next").status_code == 401
    again = client.post(
        "/api/v1/auth/login", json={"username": "li", "password": PASSWORD}
    )
    assert again.status_code == 200


@pytest.mark.parametrize(
    ("kwargs", "status", "code"),
    [
        ({"data": "username=x"}, 415, "unsupported_media_type"),
        (
            {"data": "{not json", "content_type": "application/json"},
            400,
            "malformed_json",
        ),
        ({"json": ["a", "list"]}, 400, "malformed_json"),
        ({"json": {"username": "li"}}, 400, "missing_field"),
        ({"json": {"username": 5, "password": PASSWORD}}, 400, "invalid_input"),
        ({"json": {"username": "li", "password": "short"}}, 400, "invalid_input"),
        (
            {"json": {"username": "li", "password": PASSWORD, "locale": "fr"}},
            400,
            "invalid_input",
        ),
        (
            {"data": "x" * 300_000, "content_type": "application/json"},
            413,
            "request_entity_too_large",
        ),
    ],
)
def test_bad_registration_bodies_get_json_errors(app, kwargs, status, code):
    response = app.test_client().post("/api/v1/auth/register", **kwargs)
    assert response.status_code == status
    assert response.json["error"] == code and response.json["message"]


def test_tokens_authenticate_scripts_and_can_be_revoked(api, app):
    created = api.post("/api/v1/tokens", json={"name": "my script"})
    assert created.status_code == 201
    secret = created.json["token"]
    bearer = {"Authorization": f"Bearer {secret}"}
    script = app.test_client()
    assert script.get("/api/v1/drill/next", headers=bearer).status_code == 200
    listed = api.get("/api/v1/tokens").json["tokens"]
    assert [t["name"] for t in listed] == ["my script"] and "token" not in listed[0]
    assert api.delete(f"/api/v1/tokens/{created.json['id']}").status_code == 200
    refused = script.get("/api/v1/drill/next", headers=bearer)
    assert refused.status_code == 401 and refused.json["error"] == "invalid_token"


def test_another_learners_token_cannot_be_revoked(api, app):
    token_id = api.post("/api/v1/tokens", json={"name": "mine"}).json["id"]
    make_learner(app, "bo")
    other = app.test_client()
    sign_in(other, "bo")
    response = other.delete(f"/api/v1/tokens/{token_id}")
    assert response.status_code == 404 and response.json["error"] == "not_found"


def test_wrong_token_and_no_session_are_401(app):
    client = app.test_client()
    assert client.get("/api/v1/drill/next").json["error"] == "unauthorized"
    wrong = client.get(
        "/api/v1/drill/next", headers={"Authorization": "Bearer qz_nope"}
    )
    assert wrong.status_code == 401 and wrong.json["error"] == "invalid_token"


def test_next_item_is_public_form_without_answer(api):
    item = api.get("/api/v1/drill/next").json
    assert item["item_id"] == CHOICE and item["type"] == "choice"
    assert item["note_id"] == "l16-qkv-roles"
    assert {"position", "total", "prompt", "options"} <= item.keys()
    flat = str(item)
    assert "correct" not in flat and "why" not in flat and "explanation" not in flat


def test_wrong_answer_flow_over_the_api(api, app):
    api.get("/api/v1/drill/next")
    answered = api.post(
        "/api/v1/drill/answer",
        json={
            "item_id": CHOICE,
            "answer": "d",
            "duration_ms": 4000,
            "idempotency_key": "a1",
        },
    )
    assert answered.status_code == 201
    body = answered.json
    assert body["correct"] is False and body["requires_explanation"] is True
    assert body["rating"] == "again" and "explanation" not in body
    assert "why_wrong" not in str(body["verdict"])
    assert api.get("/api/v1/notes/l16-qkv-roles").status_code == 423
    blocked = api.get("/api/v1/drill/next")
    assert (
        blocked.status_code == 409 and blocked.json["error"] == "explanation_required"
    )
    short = api.post(
        "/api/v1/drill/explanation", json={"review_id": body["review_id"], "text": "hm"}
    )
    assert short.status_code == 400
    explained = api.post(
        "/api/v1/drill/explanation",
        json={"review_id": body["review_id"], "text": "I took S for the weights"},
    )
    assert explained.status_code == 201 and explained.json["note_id"] == "l16-qkv-roles"
    note = api.get("/api/v1/notes/l16-qkv-roles")
    assert note.status_code == 200 and note.json["body"]


def test_retry_with_the_same_key_stores_nothing_new(api, app):
    api.get("/api/v1/drill/next")
    payload = {"item_id": CHOICE, "answer": "c", "idempotency_key": "retry-1"}
    first = api.post("/api/v1/drill/answer", json=payload)
    second = api.post("/api/v1/drill/answer", json=payload)
    assert first.status_code == 201 and second.status_code == 200
    assert second.json["review_id"] == first.json["review_id"]
    assert second.json["replayed"] is True
    assert reviews(app) == 1


def test_a_right_answer_carries_the_next_item(api, app):
    """Does a right answer come back with the next item, already open, as
    drill/next would show it (so a client needs one request per item)?"""
    first = api.get("/api/v1/drill/next").json
    answered = api.post(
        "/api/v1/drill/answer",
        json={"item_id": first["item_id"], "answer": "c", "idempotency_key": "n-1"},
    )
    assert answered.status_code == 201 and answered.json["correct"] is True
    following = answered.json["next"]
    assert following["item_id"] != first["item_id"]
    assert "correct" not in str(following) and "explanation" not in str(following)
    # It is the open item now: drill/next shows the same, opens nothing new.
    assert api.get("/api/v1/drill/next").json == following
    # A retry of the answer replays it and names the same next item.
    again = api.post(
        "/api/v1/drill/answer",
        json={"item_id": first["item_id"], "answer": "c", "idempotency_key": "n-1"},
    )
    assert again.status_code == 200 and again.json["next"] == following
    assert reviews(app) == 1


def test_a_wrong_answer_opens_nothing_so_the_lesson_can_be_reread(api, app):
    """After a wrong answer is no next item opened, before or after the
    explanation, so the learner can reread the lesson (the closed-book rule)?"""
    api.get("/api/v1/drill/next")
    answered = api.post("/api/v1/drill/answer", json={"item_id": CHOICE, "answer": "d"})
    assert answered.status_code == 201 and answered.json["next"] is None
    explained = api.post(
        "/api/v1/drill/explanation",
        json={"review_id": answered.json["review_id"], "text": "I took S as weights"},
    )
    assert explained.status_code == 201 and "next" not in explained.json
    assert api.get("/api/v1/notes/l16-qkv-roles").status_code == 200
    assert api.get("/api/v1/drill/next").json["item_id"] != CHOICE


def test_next_false_leaves_the_next_item_closed(api, app):
    """Can a client that shows the note first ask for no next item, and is a
    next that is not true or false refused?"""
    api.get("/api/v1/drill/next")
    bad = api.post(
        "/api/v1/drill/answer", json={"item_id": CHOICE, "answer": "c", "next": "yes"}
    )
    assert bad.status_code == 400 and "next" in bad.json["message"]
    answered = api.post(
        "/api/v1/drill/answer", json={"item_id": CHOICE, "answer": "c", "next": False}
    )
    assert answered.status_code == 201 and answered.json["next"] is None
    assert api.get("/api/v1/notes/l16-qkv-roles").status_code == 200
    assert reviews(app) == 1


def test_format_error_is_not_an_attempt(api, app):
    api.get("/api/v1/drill/next")
    response = api.post(
        "/api/v1/drill/answer", json={"item_id": CHOICE, "answer": "zz"}
    )
    assert response.status_code == 400 and response.json["error"] == "format_error"
    assert reviews(app) == 0


def test_answer_to_an_item_that_is_not_open_is_a_conflict(api, app):
    response = api.post("/api/v1/drill/answer", json={"item_id": CHOICE, "answer": "c"})
    assert response.status_code == 409 and reviews(app) == 0


def test_answer_to_another_item_than_the_open_one_is_a_conflict(api, app, learner):
    """While one item is open, is an answer naming another refused, and not stored?"""
    open_for(app, learner, "l16-qkv-analogy-limits")
    response = api.post("/api/v1/drill/answer", json={"item_id": CHOICE, "answer": "c"})
    assert response.status_code == 409 and response.json["error"] == "conflict"
    assert reviews(app) == 0


def test_recall_reveal_and_rating(api, app, learner):
    open_for(app, learner, "l16-qkv-analogy-limits")
    revealed = api.post(
        "/api/v1/drill/reveal", json={"item_id": "l16-qkv-analogy-limits"}
    )
    assert revealed.status_code == 200 and revealed.json["model_answer"]["zh-CN"]
    bad = api.post(
        "/api/v1/drill/answer",
        json={"item_id": "l16-qkv-analogy-limits", "rating": "great"},
    )
    assert bad.status_code == 400
    rated = api.post(
        "/api/v1/drill/answer",
        json={"item_id": "l16-qkv-analogy-limits", "rating": "easy"},
    )
    assert rated.status_code == 201 and rated.json["rating"] == "easy"


def test_duration_must_be_a_whole_number(api):
    api.get("/api/v1/drill/next")
    response = api.post(
        "/api/v1/drill/answer",
        json={"item_id": CHOICE, "answer": "c", "duration_ms": "fast"},
    )
    assert response.status_code == 400


def test_unknown_note_is_404(api):
    assert api.get("/api/v1/notes/no-such-note").status_code == 404


def test_explaining_someone_elses_review_is_404(api, app):
    api.get("/api/v1/drill/next")
    review_id = api.post(
        "/api/v1/drill/answer", json={"item_id": CHOICE, "answer": "d"}
    ).json["review_id"]
    make_learner(app, "bo")
    other = app.test_client()
    sign_in(other, "bo")
    response = other.post(
        "/api/v1/drill/explanation",
        json={"review_id": review_id, "text": "not my review"},
    )
    assert response.status_code == 404


def test_generated_item_over_the_api_carries_the_problem(api, app, learner):
    open_for(
        app,
        learner,
        "l16-hand-generated-small",
        problem_kind="attention",
        problem_seed=11,
        problem_level=1,
    )
    item = api.get("/api/v1/drill/next").json
    assert item["type"] == "generated" and "seed" not in item["problem"]
    assert "answer" not in item["problem"]
    from quizsvc import problems

    problem = problems.generate("attention", 11, 1)
    answers = {ask.name: problem.answer_json(ask.name) for ask in problem.ask}
    # A wrong first step: S without the 1/√d scale.
    assert "no_scale" in problem.misconceptions
    answers["S"] = problem.pipelines["no_scale"]["S"].tolist()
    response = api.post(
        "/api/v1/drill/answer",
        json={"item_id": "l16-hand-generated-small", "answer": answers},
    )
    assert response.status_code == 201
    body = response.json
    assert body["correct"] is False and body["requires_explanation"] is True
    assert "misconception" not in body["verdict"]  # named after the explanation
    explained = api.post(
        "/api/v1/drill/explanation",
        json={"review_id": body["review_id"], "text": "forgot to divide by sqrt d"},
    )
    assert explained.status_code == 201
    assert explained.json["misconception"] == "no_scale"
    assert "√d" in explained.json["misconception_explanation"]
    with app.app_context():
        review = get_session().get(Review, body["review_id"])
        assert review.problem_seed == 11 and review.misconception == "no_scale"


def test_generated_answer_with_unreadable_cells_is_not_an_attempt(api, app, learner):
    open_for(
        app,
        learner,
        "l16-hand-generated-small",
        problem_kind="attention",
        problem_seed=11,
        problem_level=1,
    )
    response = api.post(
        "/api/v1/drill/answer",
        json={"item_id": "l16-hand-generated-small", "answer": {"S": "[[1, banana]]"}},
    )
    assert response.status_code == 400 and response.json["error"] == "format_error"
    assert reviews(app) == 0


HOSTILE = [
    None,
    5,
    1.5,
    True,
    [],
    {},
    [[[]]],
    {"S": {"x": 1}},
    {"S": [[None]]},
    "x" * 5000,
    [1] * 1000,
    {"S": "[[" * 3000},
    {"": ""},
    ["a", ["b"]],
]
ITEM_KINDS = {
    "l16-qkv-which-carries-content": {},
    "l16-hand-generated-small": {
        "problem_kind": "attention",
        "problem_seed": 3,
        "problem_level": 1,
    },
    "l16-hand-order-of-steps": {},
    "l16-hand-lesson-weight": {},
    "l16-impl-causal-flag": {},
    "l16-qkv-analogy-limits": {},
}


@pytest.mark.parametrize("item_id", ITEM_KINDS)
def test_hostile_answers_get_4xx_and_store_nothing_half_written(
    api, app, learner, item_id
):
    """Does any odd JSON answer get a 4xx (or a real grade), never a 500?"""
    for answer in HOSTILE:
        open_for(app, learner, item_id, **ITEM_KINDS[item_id])
        before = reviews(app)
        rating = answer if isinstance(answer, str) else None
        response = api.post(
            "/api/v1/drill/answer",
            json={"item_id": item_id, "answer": answer, "rating": rating},
        )
        assert response.status_code in (201, 400, 409), (answer, response.json)
        assert reviews(app) == before + (response.status_code == 201)
        if response.status_code == 201 and response.json["requires_explanation"]:
            api.post(
                "/api/v1/drill/explanation",
                json={
                    "review_id": response.json["review_id"],
                    "text": "a reason, written",
                },
            )
