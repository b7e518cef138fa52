"""Classes over JSON: create, list, rotate the code, join, leave, read the roster."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select

from quizsvc.db import get_session
from quizsvc.models import Classroom, Membership
from quizsvc.services.accounts import hash_password
from quizsvc.services.classes import JOIN_CODE_ALPHABET
from quizsvc.services.users import create_user
from tests.factories import (
    PASSWORD,
    graded_item,
    make_learner,
    record,
    sign_in,
    sync_real_bank,
)


@pytest.fixture
def app(db_app):
    sync_real_bank(db_app)
    return db_app


@pytest.fixture
def teacher(app):
    with app.app_context():
        session = get_session()
        create_user(
            session, "wang", role="teacher", password_hash=hash_password(PASSWORD)
        )
        session.commit()
    client = app.test_client()
    sign_in(client, "wang")
    return client


@pytest.fixture
def learner(app):
    user_id = make_learner(app, "ana")
    client = app.test_client()
    sign_in(client, "ana")
    client.user_id = user_id
    return client


def count(app, model) -> int:
    with app.app_context():
        return get_session().scalar(select(func.count()).select_from(model))


def create(teacher, **body):
    return teacher.post("/api/v1/classes", json={"name": "高二（3）班", **body})


def test_create_returns_the_code_and_link(teacher):
    response = create(teacher, term="2026 秋", timezone="Asia/Tokyo")
    assert response.status_code == 201
    body = response.json
    assert set(body) >= {"id", "name", "join_code", "join_url"}
    assert set(body["join_code"]) <= set(JOIN_CODE_ALPHABET)
    assert body["join_url"].endswith(f"/join/{body['join_code']}")
    listed = teacher.get("/api/v1/classes").json["classes"]
    assert [(c["id"], c["role"], c["learners"]) for c in listed] == [
        (body["id"], "teacher", 0)
    ]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"name": ""}, "missing field"),
        ({"name": "x" * 201}, "at most 200"),
        ({"name": "A", "timezone": "Nowhere/City"}, "Unknown time zone"),
        ({"name": "A", "term": 3}, "must be text"),
        ({"name": "A", "colour": "red"}, "unknown field"),
    ],
)
def test_bad_classes_are_refused_and_nothing_is_written(app, teacher, body, message):
    response = teacher.post("/api/v1/classes?lang=en", json=body)
    assert response.status_code == 400
    assert message in response.json["message"]
    assert count(app, Classroom) == 0


def test_joining_reports_the_class_and_the_roster_lists_the_learner(
    app, teacher, learner
):
    created = create(teacher).json
    joined = learner.post(
        "/api/v1/classes/join",
        json={
            "code": created["join_code"],
            "student_number": "01",
            "display_name": "安",
            # The answer below was given an hour before joining.
            "share_history": True,
        },
    )
    assert joined.status_code == 201
    body = dict(joined.json)
    joined_at = body.pop("joined_at")
    assert body == {
        "class_id": created["id"],
        "name": "高二（3）班",
        "student_number": "01",
        "display_name": "安",
        "share_history": True,
    }
    assert datetime.fromisoformat(joined_at) <= datetime.now(UTC)
    record(app, learner.user_id, graded_item("scores"), True, timedelta(hours=1))
    roster = teacher.get(f"/api/v1/classes/{created['id']}/learners").json
    (row,) = roster["learners"]
    assert (row["username"], row["name"], row["student_number"]) == ("ana", "安", "01")
    assert row["reviews_7d"] == 1 and row["accuracy"] == 1.0 and row["streak"] == 1
    mine = learner.get("/api/v1/classes").json["classes"]
    assert mine == [
        {
            "id": created["id"],
            "name": "高二（3）班",
            "term": None,
            "timezone": "Asia/Shanghai",
            "role": "learner",
        }
    ]  # a learner is not shown the join code


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"code": "ZZZZZZZZ"}, 404, "not_found"),
        ({"code": 12345678}, 400, "invalid_input"),
        ({}, 400, "missing_field"),
        ({"code": "{code}", "student_number": "9" * 65}, 400, "invalid_input"),
        ({"code": "{code}", "role": "teacher"}, 400, "invalid_input"),
    ],
)
def test_bad_joins_are_refused_and_nothing_is_written(
    app, teacher, learner, body, status, code
):
    join_code = create(teacher).json["join_code"]
    body = {k: v.format(code=join_code) if isinstance(v, str) else v
            for k, v in body.items()}  # fmt: skip
    before = count(app, Membership)
    response = learner.post("/api/v1/classes/join", json=body)
    assert response.status_code == status
    assert response.json["error"] == code
    assert count(app, Membership) == before


def test_a_closed_class_and_a_rotated_code_refuse_new_learners(app, teacher, learner):
    created = create(teacher).json
    rotated = teacher.post(f"/api/v1/classes/{created['id']}/join-code").json
    assert rotated["join_code"] != created["join_code"]
    old = learner.post("/api/v1/classes/join", json={"code": created["join_code"]})
    assert old.status_code == 404
    with app.app_context():
        session = get_session()
        session.get(Classroom, created["id"]).joining_open = False
        session.commit()
    closed = learner.post("/api/v1/classes/join", json={"code": rotated["join_code"]})
    assert closed.status_code == 409
    assert closed.json["message"] == "这个班级现在不接受加入；请联系老师。"


def test_leaving_twice_is_a_404(teacher, learner):
    created = create(teacher).json
    learner.post("/api/v1/classes/join", json={"code": created["join_code"]})
    url = f"/api/v1/classes/{created['id']}/membership"
    assert learner.delete(url).status_code == 200
    assert learner.delete(url).status_code == 404


def test_a_teacher_token_reads_the_roster(teacher):
    created = create(teacher).json
    token = teacher.post("/api/v1/tokens", json={"name": "lms"}).json["token"]
    bare = teacher.application.test_client()
    response = bare.get(
        f"/api/v1/classes/{created['id']}/learners",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 200 and response.json["learners"] == []


def test_guessing_join_codes_is_rate_limited(db_app):
    """Does a burst of wrong codes run into 429 long before a code could be found?"""
    make_learner(db_app, "mallory")
    client = db_app.test_client()
    sign_in(client, "mallory")
    statuses = [
        client.post("/api/v1/classes/join", json={"code": f"ZZZZZZ{n:02d}"}).status_code
        for n in range(31)
    ]
    assert statuses[:30] == [404] * 30
    assert statuses[30] == 429
