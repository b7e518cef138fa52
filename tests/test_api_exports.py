"""Export downloads over HTTP: a class's files for its teachers, your own history."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime
from urllib.parse import unquote

import openpyxl
import pytest

from quizsvc.db import get_session
from quizsvc.models import User
from quizsvc.services.accounts import hash_password, issue_token
from quizsvc.services.classes import create_class
from quizsvc.services.reviews import record_answer
from quizsvc.services.users import create_user
from tests.exportutil import HOSTILE_NAME, build_class_history, export_bank
from tests.test_services_exports import validate_statement
from tests.webutil import PASSWORD, sign_in


@pytest.fixture
def world(db_app, make_bank):
    """The export class, with passwords for its teacher and learner ana."""
    with db_app.app_context():
        session = get_session()
        history = build_class_history(session, export_bank(make_bank))
        digest = hash_password(PASSWORD)
        for user in (history.teacher, history.learners["ana"]):
            session.get(User, user.id).password_hash = digest
        stranger = create_user(session, "zhang", role="teacher", password_hash=digest)
        create_class(session, stranger, "别的班")
        token = issue_token(session, session.get(User, history.teacher.id), "cron")
        session.commit()
    return {
        "app": db_app,
        "class_id": history.classroom.id,
        "history": history,
        "token": token.secret,
    }


def teacher_client(world):
    client = world["app"].test_client()
    sign_in(client, "teach")
    return client


def url(world, kind, **query):
    args = "&".join(f"{key}={value}" for key, value in query.items())
    return f"/api/v1/classes/{world['class_id']}/exports/{kind}?{args}"


def csv_rows(response):
    return list(csv.reader(io.StringIO(response.data.decode("utf-8-sig"), newline="")))


def test_teacher_downloads_reviews_as_streamed_csv(world):
    """Does the teacher get every review as a CSV download named after the class?"""
    response = teacher_client(world).get(url(world, "reviews", format="csv"))
    assert response.status_code == 200
    assert response.is_streamed
    assert response.mimetype == "text/csv"
    assert response.headers["Cache-Control"] == "no-store"
    disposition = response.headers["Content-Disposition"]
    fallback = f'filename="class-{world["class_id"]}-reviews.csv"'
    assert disposition.startswith(f"attachment; {fallback}; filename*=UTF-8''")
    assert unquote(disposition.split("''", 1)[1]) == "高二（3）班-reviews.csv"
    assert response.data.startswith("\ufeff".encode())
    rows = csv_rows(response)
    history = world["history"]
    assert rows[0][:3] == ["记录编号", "学习者编号", "学号"]
    ids = [int(row[0]) for row in rows[1:]]
    assert ids == history.reviews["ana"] + history.reviews["bo"]
    assert rows[1][3] == "'" + HOSTILE_NAME


def test_xlsx_download_is_typed_and_in_the_chosen_language(world):
    """Does the XLSX open in a spreadsheet with English headers when asked?"""
    client = teacher_client(world)
    response = client.get(url(world, "summary", format="xlsx", lang="en"))
    assert response.status_code == 200
    assert response.mimetype == (
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    )
    workbook = openpyxl.load_workbook(io.BytesIO(response.data))
    sheet = workbook["Class summary"]
    rows = list(sheet.iter_rows(values_only=True))
    assert rows[0][:5] == (
        "Learner id",
        "Student number",
        "Name",
        "Username",
        "Reviews",
    )
    assert [row[3] for row in rows[1:]] == ["ana", "bo", "cy"]
    assert [row[4] for row in rows[1:]] == [7, 2, 0]
    assert sheet.freeze_panes == "A2"


def test_class_workbook_has_a_sheet_per_export(world):
    """Does the class workbook hold reviews, summary and Canvas sheets?"""
    response = teacher_client(world).get(url(world, "workbook"))
    workbook = openpyxl.load_workbook(io.BytesIO(response.data))
    assert workbook.sheetnames == ["答题记录", "班级概况", "Canvas 成绩"]
    assert workbook["答题记录"].max_row == 1 + 9


def test_xapi_download_is_valid_statements_one_per_line(world):
    """Is each line of the xAPI export a statement an LRS accepts, under our URL?"""
    response = teacher_client(world).get(url(world, "xapi"))
    assert response.mimetype == "application/x-ndjson"
    statements = [json.loads(line) for line in response.data.decode().splitlines()]
    assert len(statements) == 9
    for statement in statements:
        validate_statement(statement)
        assert statement["actor"]["account"]["homePage"] == "http://localhost/"


def test_canvas_download_with_rule_and_points(world):
    """Does the teacher's score rule and points reach the Canvas file?"""
    response = teacher_client(world).get(
        url(world, "canvas", rule="accuracy", points="10", assignment="Quiz%201")
    )
    rows = csv_rows(response)
    assert rows[0] == [
        "Student",
        "ID",
        "SIS User ID",
        "SIS Login ID",
        "Section",
        "Quiz 1",
    ]
    assert rows[1] == ["Points Possible", "", "", "", "", "10"]
    assert [row[5] for row in rows[2:]] == [str(round(60 / 7, 2)), "5.0", "0.0"]


def test_date_range_narrows_the_download(world):
    """Do from and to (class days) narrow the rows and name the file?"""
    response = teacher_client(world).get(
        url(world, "reviews", **{"from": "2026-03-01", "to": "2026-03-01"})
    )
    rows = csv_rows(response)
    assert [int(row[0]) for row in rows[1:]] == [world["history"].reviews["bo"][1]]
    assert "2026-03-01_2026-03-01" in response.headers["Content-Disposition"]


def test_a_bearer_token_downloads_too(world):
    """Can a teacher's script fetch an export with a personal token?"""
    client = world["app"].test_client()
    response = client.get(
        url(world, "reviews"), headers={"Authorization": f"Bearer {world['token']}"}
    )
    assert response.status_code == 200 and len(csv_rows(response)) == 10


@pytest.mark.parametrize(
    "kind, query, message",
    [
        ("grades", {}, "unknown export 'grades'"),
        ("xapi", {"format": "csv"}, "xapi exports as jsonl, not 'csv'"),
        ("reviews", {"format": "pdf"}, "reviews exports as csv, xlsx, jsonl"),
        ("reviews", {"from": "2026-02-30"}, "'2026-02-30' is not a date"),
        ("reviews", {"from": "2026-03-02", "to": "2026-03-01"}, "start date is after"),
        ("reviews", {"to": "9999-12-31"}, "end date must be from 1900-01-01"),
        ("summary", {"from": "0001-01-01"}, "start date must be from 1900-01-01"),
        ("grades", {"lang": "zh-CN"}, "没有“grades”这种导出"),
        ("canvas", {"points": "lots"}, "points must be a number"),
        ("canvas", {"points": "-5"}, "points must be more than 0"),
        ("canvas", {"rule": "vibes"}, "unknown score rule"),
        ("canvas", {"lesson": "lesson-99"}, "unknown lesson 'lesson-99'"),
    ],
)
def test_bad_requests_get_a_json_400_before_any_file(world, kind, query, message):
    """Is bad input answered with a JSON error, not a broken or partial file?"""
    response = teacher_client(world).get(url(world, kind, **{"lang": "en", **query}))
    assert response.status_code == 400
    assert response.mimetype == "application/json"
    assert "Content-Disposition" not in response.headers
    assert response.json["error"] == "invalid_input"
    assert message in response.json["message"]


def test_other_teachers_and_learners_get_404(world):
    """Does a class's export stay hidden from everyone but its teachers?"""
    for username in ("zhang", "ana"):
        client = world["app"].test_client()
        sign_in(client, username)
        response = client.get(url(world, "reviews"))
        assert response.status_code == 404
        assert response.json["error"] == "not_found"
    assert world["app"].test_client().get(url(world, "reviews")).status_code == 401


def test_a_download_in_progress_does_not_block_answers(world):
    """Can learners keep answering while an export streams (SQLite's lock)?"""
    response = teacher_client(world).get(url(world, "reviews"))
    blocks = response.iter_encoded()
    first = next(blocks)  # the export's read transaction is open now
    assert first.startswith("\ufeff".encode())
    app = world["app"]
    with app.app_context():
        session = get_session()
        ana = session.get(User, world["history"].learners["ana"].id)
        result = record_answer(
            session, ana, "q-recall", self_rating="good", now=datetime.now(UTC)
        )
        session.commit()
    assert result.review_id
    assert b"".join(blocks) == b""
    response.close()


# --- the learner's own history -------------------------------------------------


def learner_client(world):
    client = world["app"].test_client()
    sign_in(client, "ana")
    return client


def test_learner_downloads_own_history_as_csv(world):
    """Does a learner get exactly their own answers as a CSV?"""
    response = learner_client(world).get("/api/v1/me/export?format=csv&lang=en")
    assert response.status_code == 200 and response.mimetype == "text/csv"
    assert "quizsvc-ana-history.csv" in response.headers["Content-Disposition"]
    rows = csv_rows(response)
    assert rows[0][0] == "Review id"
    assert [int(row[0]) for row in rows[1:]] == world["history"].reviews["ana"]


def test_learner_downloads_own_history_as_json(world):
    """Is the JSON history one document with answers and self-ratings?"""
    response = learner_client(world).get("/api/v1/me/export?format=json")
    assert response.mimetype == "application/json"
    document = json.loads(response.data)
    assert document["username"] == "ana"
    ids = [review["review_id"] for review in document["reviews"]]
    assert ids == world["history"].reviews["ana"]
    assert [a["level"] for a in document["self_assessments"]] == [1, 3]
    explained = [r for r in document["reviews"] if r["explanation"]]
    assert explained[0]["explanation"] == "=我忘了除以 √d"


def test_own_export_refuses_other_formats(world):
    """Is an unknown format for your own history a 400?"""
    response = learner_client(world).get("/api/v1/me/export?format=xlsx&lang=en")
    assert response.status_code == 400
    assert "csv or json" in response.json["message"]


def test_settings_page_links_to_both_downloads(world):
    """Can a learner find their own export on the Settings page?"""
    client = learner_client(world)
    page = client.get("/settings?lang=en").get_data(as_text=True)
    assert 'href="/api/v1/me/export?format=csv"' in page
    assert 'href="/api/v1/me/export?format=json"' in page
    assert "My history (CSV)" in page
    assert "我的记录（CSV）" in client.get("/settings?lang=zh-CN").get_data(
        as_text=True
    )


@pytest.mark.parametrize("query", ["to=9999-12-31", "from=0001-01-01", "format=pdf"])
def test_your_own_export_refuses_a_bad_query_before_any_byte(world, query):
    """Does /me/export answer a day it cannot reach, or a bad format, with a 400?"""
    client = world["app"].test_client()
    sign_in(client, "ana")
    response = client.get(f"/api/v1/me/export?{query}")
    assert response.status_code == 400, response.data[:200]
    assert response.is_json and response.json["error"] == "invalid_input"
