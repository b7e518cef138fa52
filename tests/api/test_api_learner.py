"""The learner's own record over JSON: self-assessments, progress, settings."""

from __future__ import annotations

from datetime import timedelta

import pytest

from quizsvc.db import get_session
from quizsvc.models import LearnerSettings, User
from tests.factories import (
    graded_item,
    make_learner,
    real_bank,
    record,
    sign_in,
    sync_real_bank,
)

ENDPOINTS = [
    ("get", "/api/v1/self-assessments"),
    ("post", "/api/v1/self-assessments"),
    ("get", "/api/v1/progress"),
    ("get", "/api/v1/settings"),
    ("patch", "/api/v1/settings"),
]


@pytest.fixture
def app(db_app):
    sync_real_bank(db_app)
    return db_app


@pytest.fixture
def client(learner_client):
    return learner_client


def token_for(client) -> str:
    response = client.post("/api/v1/tokens", json={"name": "script"})
    assert response.status_code == 201, response.json
    return response.json["token"]


def test_every_endpoint_needs_a_learner(app):
    client = app.test_client()
    for method, path in ENDPOINTS:
        response = getattr(client, method)(path, json={})
        assert response.status_code == 401, (method, path)
        assert response.json["error"] == "unauthorized"


def test_a_wrong_token_is_refused(app):
    client = app.test_client()
    for method, path in ENDPOINTS:
        response = getattr(client, method)(
            path, json={}, headers={"Authorization": "Bearer qz_not-a-real-token"}
        )
        assert response.status_code == 401, (method, path)
        assert response.json["error"] == "invalid_token"


# --- self-assessments ---------------------------------------------------------


def test_listing_shows_the_scale_and_every_skill(client):
    body = client.get("/api/v1/self-assessments?lang=en").json
    assert [s["label"] for s in body["scale"]] == [
        "not yet",
        "with notes",
        "closed-book",
        "can teach it",
    ]
    assert [s["skill_id"] for s in body["skills"]] == list(real_bank().skills)
    first = body["skills"][0]
    assert first["latest"] is None and first["history"] == []
    assert first["calibration"] == "not_rated"
    assert first["measured"] == {
        "cards": 0,
        "mean_retrievability": None,
        "recall_now": None,
        "recall_in_7_days": None,
        "recent_answers": 0,
        "recent_accuracy": None,
    }


def test_a_rating_is_stored_and_listed_with_its_history(client):
    first = client.post(
        "/api/v1/self-assessments",
        json={"skill_id": "softmax", "level": 1, "note": "shaky"},
    )
    assert first.status_code == 201
    assert (first.json["skill_id"], first.json["level"], first.json["note"]) == (
        "softmax",
        1,
        "shaky",
    )
    client.post("/api/v1/self-assessments", json={"skill_id": "softmax", "level": 2})
    skill = next(
        s
        for s in client.get("/api/v1/self-assessments").json["skills"]
        if s["skill_id"] == "softmax"
    )
    assert skill["latest"]["level"] == 2
    assert [a["level"] for a in skill["history"]] == [2, 1]
    assert skill["calibration"] == "no_record"


def test_calibration_compares_the_rating_with_the_record(client, app, learner):
    item = graded_item("temperature")
    for hours, correct in ((4, False), (3, False), (2, True), (1, False)):
        record(app, learner, item, correct, timedelta(hours=hours))
    client.post(
        "/api/v1/self-assessments", json={"skill_id": "temperature", "level": 3}
    )
    skill = next(
        s
        for s in client.get("/api/v1/self-assessments").json["skills"]
        if s["skill_id"] == "temperature"
    )
    assert skill["calibration"] == "overrated"
    assert skill["measured"]["recent_answers"] == 4
    assert skill["measured"]["recent_accuracy"] == 0.25
    assert 0 < skill["measured"]["mean_retrievability"] <= 1


BAD_RATINGS = [
    ({"skill_id": "softmax", "level": 4}, 400),
    ({"skill_id": "softmax", "level": True}, 400),
    ({"skill_id": "softmax", "level": "2"}, 400),
    ({"skill_id": "softmax"}, 400),
    ({"skill_id": 5, "level": 1}, 400),
    ({"skill_id": "softmax", "level": 1, "note": ["x"]}, 400),
    ({"skill_id": "softmax", "level": 1, "note": "x" * 2001}, 400),
    ({"level": 1}, 400),
    ({"skill_id": "no-such-skill", "level": 1}, 404),
]


def test_bad_ratings_are_refused(client):
    for body, status in BAD_RATINGS:
        response = client.post("/api/v1/self-assessments", json=body)
        assert response.status_code == status, body
        assert set(response.json) == {"error", "message"}
    skills = client.get("/api/v1/self-assessments").json["skills"]
    assert all(skill["latest"] is None for skill in skills)


def test_ratings_are_private(app, client):
    make_learner(app, "bo")
    bo = app.test_client()
    sign_in(bo, "bo")
    bo.post("/api/v1/self-assessments", json={"skill_id": "scores", "level": 3})
    skills = client.get("/api/v1/self-assessments").json["skills"]
    assert all(s["latest"] is None for s in skills)


def test_a_bearer_token_reads_and_writes_its_owners_record(app, client):
    secret = token_for(client)
    script = app.test_client()
    headers = {"Authorization": f"Bearer {secret}"}
    written = script.post(
        "/api/v1/self-assessments",
        headers=headers,
        json={"skill_id": "masking", "level": 2},
    )
    assert written.status_code == 201
    skills = client.get("/api/v1/self-assessments").json["skills"]
    assert next(s for s in skills if s["skill_id"] == "masking")["latest"]["level"] == 2


# --- progress -----------------------------------------------------------------


def test_progress_reports_the_same_figures_as_the_page(client, app, learner):
    item = graded_item("scores")
    record(app, learner, item, True, timedelta(days=2))
    record(app, learner, item, False, timedelta(days=1), misconception="no_scale")
    body = client.get("/api/v1/progress?lang=en").json
    assert body["reviews_total"] == 2
    assert sum(day["count"] for day in body["calendar"]["days"]) == 2
    assert body["calendar"]["timezone"] == "Asia/Shanghai"
    assert len(body["forecast"]) == 14 and sum(d["due"] for d in body["forecast"]) >= 0
    scores = next(s for s in body["skills"] if s["skill_id"] == "scores")
    assert (scores["recent_answers"], scores["recent_correct"]) == (2, 1)
    assert scores["title"] == "The score matrix S"
    group = body["mistakes"]["by_misconception"][0]
    assert (group["misconception"], group["count"]) == ("no_scale", 1)
    assert group["explanation"].startswith("It looks like the scaling was left out")
    assert group["examples"][0]["item_id"] == item
    html = client.get("/progress").get_data(as_text=True)
    assert f'id="reviews-total">{body["reviews_total"]}<' in html


def test_progress_counts_only_the_learners_own_answers(app, client):
    other = make_learner(app, "bo")
    record(app, other, graded_item("scores"), False, timedelta(hours=1))
    body = client.get("/api/v1/progress").json
    assert body["reviews_total"] == 0 and body["mistakes"]["total"] == 0
    assert body["streak"] == 0


# --- settings -----------------------------------------------------------------


def test_settings_start_from_the_defaults(client):
    assert client.get("/api/v1/settings").json == {
        "desired_retention": 0.9,
        "new_per_day": 10,
        "reviews_per_day": 100,
        "timezone": "Asia/Shanghai",
        "rollover_hour": 4,
        "two_button_mode": False,
        "language": "zh-CN",
    }


def test_a_partial_patch_changes_only_what_it_names(client, app, learner):
    response = client.patch(
        "/api/v1/settings",
        json={
            "desired_retention": 0.8,
            "two_button_mode": True,
            "timezone": "Europe/Paris",
        },
    )
    assert response.status_code == 200
    assert response.json["desired_retention"] == 0.8
    assert response.json["two_button_mode"] is True
    assert response.json["new_per_day"] == 10
    assert client.get("/api/v1/settings").json == response.json
    with app.app_context():
        assert get_session().get(User, learner).timezone == "Europe/Paris"


BAD_PATCHES = [
    ({"desired_retention": 1.2}, "desired_retention"),
    ({"desired_retention": "high"}, "desired_retention"),
    ({"new_per_day": -3}, "new_per_day"),
    ({"reviews_per_day": 2.5}, "reviews_per_day"),
    ({"rollover_hour": 24}, "rollover_hour"),
    ({"two_button_mode": "yes"}, "two_button_mode"),
    ({"language": "fr"}, "language"),
    ({"timezone": "Mars/Base"}, "timezone"),
    ({"colour": "blue"}, "colour"),
    ({"new_per_day": 5, "bogus": 1}, "bogus"),
]


def test_a_bad_patch_names_the_field_and_changes_nothing(client, app, learner):
    for body, field in BAD_PATCHES:
        response = client.patch("/api/v1/settings", json=body)
        assert response.status_code == 400, body
        assert response.json["error"] == "invalid_input"
        assert field in response.json["message"], (body, response.json)
    with app.app_context():
        assert get_session().get(LearnerSettings, learner) is None


def test_patch_needs_a_json_object(client):
    assert client.patch("/api/v1/settings", data="language=en").status_code == 415
    assert client.patch("/api/v1/settings", json=["language"]).status_code == 400


def test_the_language_setting_changes_the_api_language(client):
    client.patch("/api/v1/settings", json={"language": "en"})
    body = client.get("/api/v1/self-assessments").json
    assert body["scale"][0]["label"] == "not yet"


def test_a_token_only_reaches_its_owners_settings(app, client):
    make_learner(app, "bo")
    bo = app.test_client()
    sign_in(bo, "bo")
    bo.patch("/api/v1/settings", json={"new_per_day": 42})
    secret = token_for(client)
    mine = app.test_client().get(
        "/api/v1/settings", headers={"Authorization": f"Bearer {secret}"}
    )
    assert mine.json["new_per_day"] == 10


def test_an_oversized_body_is_refused(client):
    response = client.patch("/api/v1/settings", json={"timezone": "x" * 300_000})
    assert response.status_code == 413
