"""What a learner shares with a class's teachers, at every place a teacher looks.

The promises of the join page: recall self-notes are never shown; answers
from before joining only after the learner opts in (on the join page or
later); leaving stops sharing at once. Each is checked on the teacher's
pages, the class API, the CSV, XLSX and xAPI exports, on each backend.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta

import openpyxl
import pytest
from sqlalchemy import select

from quizsvc.db import get_session
from quizsvc.models import Membership, User
from quizsvc.services.accounts import hash_password
from quizsvc.services.bank_sync import sync_bank
from quizsvc.services.classes import create_class, join_class
from quizsvc.services.reviews import record_explanation
from quizsvc.services.self_assessments import record_self_assessment
from quizsvc.services.users import create_user
from tests.factories import PASSWORD, answer, csrf_token, export_bank, sign_in

BEFORE = "BEFORE-JOINING-7"
AFTER = "AFTER-JOINING-3"
NOTE_BEFORE = "my private note, written before joining"
NOTE_AFTER = "my private note: Q asks, K answers"
WHY_BEFORE = "why-before: forgot the scale"
WHY_AFTER = "why-after: transposed"
SECRETS = (NOTE_BEFORE, NOTE_AFTER)


@pytest.fixture
def world(db_app, make_bank):
    """Ana answers (and writes recall notes) before and after joining the class."""
    now = datetime.now(UTC)
    with db_app.app_context():
        session = get_session()
        sync_bank(session, export_bank(make_bank), now=now - timedelta(days=30))
        digest = hash_password(PASSWORD)
        teacher = create_user(session, "teach", role="teacher", password_hash=digest)
        ana = create_user(session, "ana", password_hash=digest)
        classroom = create_class(session, teacher, "班", now=now - timedelta(days=20))
        before = now - timedelta(days=5)
        wrong = answer(session, ana, "q-cloze", before, correct=False,
                       answer_text=BEFORE, misconception="no_scale")  # fmt: skip
        record_explanation(session, ana, wrong, WHY_BEFORE, now=before)
        answer(session, ana, "q-recall", before, answer_text=NOTE_BEFORE)
        record_self_assessment(session, ana, "scores", 0, now=before)
        join_class(session, ana, classroom.join_code, student_number="01",
                   now=now - timedelta(days=3))  # fmt: skip
        after = now - timedelta(days=1)
        wrong = answer(session, ana, "q-numeric", after, correct=False,
                       answer_text=AFTER, misconception="transposed")  # fmt: skip
        record_explanation(session, ana, wrong, WHY_AFTER, now=after)
        answer(session, ana, "q-recall", after + timedelta(hours=1),
               answer_text=NOTE_AFTER)  # fmt: skip
        session.commit()
        ids = {"class": classroom.id, "ana_id": ana.id}
    teacher_client = db_app.test_client()
    sign_in(teacher_client, "teach")
    learner_client = db_app.test_client()
    sign_in(learner_client, "ana")
    return {"app": db_app, "teacher": teacher_client, "ana": learner_client, **ids}


def teacher_views(world) -> dict[str, str]:
    """Every page and file a teacher can read about the class, as text."""
    client, class_id = world["teacher"], world["class"]
    texts = {}
    for page in ("", "/misconceptions", "/items", "/explanations", "/calibration",
                 f"/learners/{world['ana_id']}"):  # fmt: skip
        response = client.get(f"/teacher/classes/{class_id}{page}")
        assert response.status_code in (200, 404), page
        texts[f"page{page}"] = response.get_data(as_text=True)
    exports = f"/api/v1/classes/{class_id}/exports"
    for kind in ("reviews", "summary"):
        for file_format in ("csv", "jsonl"):
            response = client.get(f"{exports}/{kind}?format={file_format}")
            texts[f"{kind}.{file_format}"] = response.data.decode("utf-8-sig")
        response = client.get(f"{exports}/{kind}?format=xlsx")
        texts[f"{kind}.xlsx"] = xlsx_text(response.data)
    texts["workbook.xlsx"] = xlsx_text(client.get(f"{exports}/workbook").data)
    texts["xapi"] = client.get(f"{exports}/xapi").data.decode()
    texts["api"] = client.get(f"/api/v1/classes/{class_id}/learners").data.decode()
    return texts


def xlsx_text(data: bytes) -> str:
    workbook = openpyxl.load_workbook(io.BytesIO(data))
    return "\n".join(
        "\t".join("" if value is None else str(value) for value in row)
        for sheet in workbook
        for row in sheet.iter_rows(values_only=True)
    )


def review_rows(world) -> list[dict[str, str]]:
    response = world["teacher"].get(
        f"/api/v1/classes/{world['class']}/exports/reviews?format=csv&lang=en"
    )
    return list(csv.DictReader(io.StringIO(response.data.decode("utf-8-sig"))))


def test_recall_notes_never_reach_a_teacher_but_the_rating_does(world):
    """Is a recall self-note absent from every teacher page and export, even
    after the learner shares their history, while its rating is shown?"""
    world["ana"].patch(
        f"/api/v1/classes/{world['class']}/membership", json={"share_history": True}
    )
    for name, text in teacher_views(world).items():
        for secret in SECRETS:
            assert secret not in text, name
    recall = [row for row in review_rows(world) if row["Item id"] == "q-recall"]
    assert len(recall) == 2 and {row["Rating (1-4)"] for row in recall} == {"3"}
    assert {row["Answer"] for row in recall} == {""}
    assert {row["Answer as stored"] for row in recall} == {""}
    page = world["teacher"].get(
        f"/teacher/classes/{world['class']}/learners/{world['ana_id']}"
    )
    html = page.get_data(as_text=True)
    assert "Rated themselves: Good" in html and "stays private" in html
    statements = [
        json.loads(line)
        for line in world["teacher"]
        .get(f"/api/v1/classes/{world['class']}/exports/xapi")
        .data.decode()
        .splitlines()
    ]
    recall_statements = [
        s for s in statements if s["object"]["id"].endswith("q-recall")
    ]
    assert len(recall_statements) == 2
    assert all("response" not in s["result"] for s in recall_statements)


def test_the_learner_still_has_their_own_notes(world):
    """Does the learner's own export keep the notes the teacher never sees?"""
    own = world["ana"].get("/api/v1/me/export?format=csv").data.decode("utf-8-sig")
    assert NOTE_BEFORE in own and NOTE_AFTER in own


def test_answers_from_before_joining_are_shared_only_after_opting_in(world):
    """Before opting in: only the answers since joining, everywhere; after: all."""
    views = teacher_views(world)
    for name in ("page/learners/{ana}", "reviews.csv", "reviews.jsonl",
                 "reviews.xlsx", "workbook.xlsx", "xapi"):  # fmt: skip
        text = views[name.format(ana=world["ana_id"])]
        assert AFTER in text or name == "xapi", name
        assert BEFORE not in text, name
    assert WHY_BEFORE not in views["page/explanations"]
    assert WHY_AFTER in views["page/explanations"]
    assert BEFORE not in views["page/misconceptions"]
    assert [row["Item id"] for row in review_rows(world)] == ["q-numeric", "q-recall"]
    learners = json.loads(views["api"])["learners"]
    assert learners[0]["reviews_in_period"] == 2

    response = world["ana"].patch(
        f"/api/v1/classes/{world['class']}/membership", json={"share_history": True}
    )
    assert response.status_code == 200 and response.json["share_history"] is True
    views = teacher_views(world)
    for name in ("reviews.csv", "reviews.xlsx", "workbook.xlsx"):
        assert BEFORE in views[name] and AFTER in views[name], name
    assert WHY_BEFORE in views["page/explanations"]
    assert [row["Item id"] for row in review_rows(world)] == [
        "q-cloze", "q-recall", "q-numeric", "q-recall"
    ]  # fmt: skip
    assert json.loads(views["api"])["learners"][0]["reviews_in_period"] == 4

    # Changing their mind hides the earlier answers again at once.
    world["ana"].patch(
        f"/api/v1/classes/{world['class']}/membership", json={"share_history": False}
    )
    assert BEFORE not in teacher_views(world)["reviews.csv"]


def test_leaving_stops_sharing_at_once(world):
    """After leaving, is nothing of the learner in the class's pages or files?"""
    world["ana"].patch(
        f"/api/v1/classes/{world['class']}/membership", json={"share_history": True}
    )
    assert world["ana"].delete(
        f"/api/v1/classes/{world['class']}/membership"
    ).status_code == 200  # fmt: skip
    views = teacher_views(world)
    for name, text in views.items():
        for answer_text in (BEFORE, AFTER, WHY_BEFORE, WHY_AFTER):
            assert answer_text not in text, name
    assert review_rows(world) == []


def test_the_join_page_lists_what_teachers_see_and_offers_the_choice(world):
    """Does the join form say what is shared, and store the learner's choice?"""
    with world["app"].app_context():
        session = get_session()
        teacher = session.scalar(select(User).where(User.username == "teach"))
        room = create_class(session, teacher, "二班")
        session.commit()
        code, room_id = room.join_code, room.id
    html = world["ana"].get(f"/join/{code}").get_data(as_text=True)
    assert "你加入之后在练习中的每一个回答" in html
    assert "你写给自己的内容不会给老师看" in html
    assert 'name="share_history"' in html
    token = csrf_token(html)
    response = world["ana"].post(
        "/join", data={"code": code, "share_history": "1", "csrf_token": token}
    )
    assert response.status_code == 302, response.get_data(as_text=True)[-3000:]
    with world["app"].app_context():
        membership = get_session().scalar(
            select(Membership).where(
                Membership.class_id == room_id, Membership.user_id == world["ana_id"]
            )
        )
        assert membership.share_history is True
    # Later, on the classes page: stop sharing, and say so.
    page = world["ana"].get("/classes").get_data(as_text=True)
    assert "老师能看到你的全部回答" in page
    world["ana"].post(
        f"/classes/{room_id}/sharing",
        data={"share_history": "0", "csrf_token": csrf_token(page)},
    )
    with world["app"].app_context():
        membership = get_session().scalar(
            select(Membership).where(
                Membership.class_id == room_id, Membership.user_id == world["ana_id"]
            )
        )
        assert membership.share_history is False


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_a_share_choice_that_is_not_a_boolean_is_a_400(world, value):
    response = world["ana"].patch(
        f"/api/v1/classes/{world['class']}/membership", json={"share_history": value}
    )
    assert response.status_code == 400
    assert "share_history" in response.json["message"]
