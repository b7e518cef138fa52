"""Export downloads over HTTP: a class's files for its teachers, your own history."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta
from urllib.parse import unquote

import openpyxl
import pytest

from quizsvc.db import get_session
from quizsvc.models import User
from quizsvc.services.accounts import hash_password, issue_token
from quizsvc.services.classes import create_class
from quizsvc.services.users import create_user
from tests.exportutil import HOSTILE_NAME, build_class_history, export_bank
from tests.factories import record_answer
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
    assert response.headers["Content-Type"] == "text/csv; charset=utf-8"
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
    assert workbook.sheetnames == ["答题记录", "班级概况", "成绩"]
    assert workbook["答题记录"].max_row == 1 + 9


def test_xapi_download_is_valid_statements_one_per_line(world, tmp_path):
    """Is each line of the xAPI export a statement an LRS accepts, named by the
    instance's IRI, its links to problems on the address asked?"""
    world["app"].instance_path = str(tmp_path)
    response = teacher_client(world).get(url(world, "xapi"))
    assert response.headers["Content-Type"] == "application/x-ndjson; charset=utf-8"
    statements = [json.loads(line) for line in response.data.decode().splitlines()]
    assert len(statements) == 9
    iri = (tmp_path / "instance_iri").read_text().strip()
    for statement in statements:
        validate_statement(statement)
        assert statement["actor"]["account"]["homePage"] == iri
    links = [
        value
        for s in statements
        for key, value in s["context"].get("extensions", {}).items()
        if key == f"{iri}xapi/problem"
    ]
    assert links == ["http://localhost/practice/weights/2/42"]


def identities(statements):
    """What names a statement, its learner and its activities in an LRS."""
    return [
        (s["id"], s["actor"]["account"], s["object"]["id"],
         s["context"]["contextActivities"]["parent"][0]["id"])
        for s in statements
    ]  # fmt: skip


def test_statement_ids_are_the_same_from_any_host_and_the_command_line(world, tmp_path):
    """Do the API through two host names and the CLI give the same statement,
    learner and activity ids, from an IRI kept in the instance folder?"""
    from quizsvc.cli import main

    app = world["app"]
    app.instance_path = str(tmp_path / "instance")
    (tmp_path / "instance").mkdir()
    client = app.test_client()
    token = {"Authorization": f"Bearer {world['token']}"}
    exports = []
    for host in ("http://localhost/", "http://127.0.0.1:8765/"):
        response = client.get(url(world, "xapi"), base_url=host, headers=token)
        assert response.status_code == 200
        exports.append([json.loads(line) for line in response.data.splitlines()])
    target = tmp_path / "xapi.jsonl"
    result = app.test_cli_runner().invoke(
        main, ["export", "xapi", "--class", str(world["class_id"]), "-o", str(target)]
    )
    assert result.exit_code == 0, result.output
    exports.append([json.loads(line) for line in target.read_text().splitlines()])
    assert identities(exports[0]) == identities(exports[1]) == identities(exports[2])
    iri = (tmp_path / "instance" / "instance_iri").read_text().strip()
    assert iri.startswith("https://quizsvc-") and iri.endswith(".invalid/")
    assert {s["actor"]["account"]["homePage"] for s in exports[0]} == {iri}
    assert exports[0][0]["object"]["id"].startswith(iri + "items/")


@pytest.mark.parametrize(
    "setting, value, home",
    [
        ("INSTANCE_IRI", "https://quiz.example.edu", "https://quiz.example.edu/"),
        ("BASE_URL", "https://quiz.example.edu/app/", "https://quiz.example.edu/app/"),
    ],
)
def test_a_configured_iri_names_the_instance(world, tmp_path, setting, value, home):
    """Does INSTANCE_IRI (else BASE_URL) name the instance instead?"""
    app = world["app"]
    app.instance_path = str(tmp_path)
    app.config[setting] = value
    response = teacher_client(world).get(url(world, "xapi"))
    statements = [json.loads(line) for line in response.data.decode().splitlines()]
    assert {s["actor"]["account"]["homePage"] for s in statements} == {home}
    assert not (tmp_path / "instance_iri").exists()


def test_a_bad_configured_iri_is_a_503_before_any_file(world):
    """Is an INSTANCE_IRI that is no address refused clearly, not a broken file?"""
    world["app"].config["INSTANCE_IRI"] = "quiz server"
    response = teacher_client(world).get(url(world, "xapi"))
    assert response.status_code == 503
    assert "not an absolute http(s) address" in response.json["message"]


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
    assert [row[3] for row in rows[2:]] == ["ana", "bo", "cy"]


def test_gradebook_download_in_both_formats(world):
    """Does the gradebook come as CSV and XLSX with the rule and points asked?"""
    client = teacher_client(world)
    response = client.get(url(world, "gradebook", rule="accuracy", points="10"))
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/csv; charset=utf-8"
    assert "gradebook" in response.headers["Content-Disposition"]
    rows = csv_rows(response)
    assert rows[0] == ["学号", "姓名", "成绩"]
    assert [row[2] for row in rows[1:]] == [str(round(60 / 7, 2)), "5.0", "0.0"]
    response = client.get(url(world, "gradebook", format="xlsx", lang="en"))
    sheet = openpyxl.load_workbook(io.BytesIO(response.data))["Grades"]
    assert next(sheet.iter_rows(values_only=True)) == (
        "Student number",
        "Name",
        "Score",
    )
    assert [row[0] for row in sheet.iter_rows(min_row=2, values_only=True)] == [
        "2026001",
        "2026002",
        "2026003",
    ]


def test_canvas_download_by_retention_on_a_day(world):
    """Does rule=retention with a retention_date title the column by that day?"""
    client = teacher_client(world)
    day = (datetime.now(UTC) + timedelta(days=60)).date().isoformat()
    response = client.get(
        url(world, "canvas", rule="retention", retention_date=day, lang="en")
    )
    assert response.status_code == 200
    rows = csv_rows(response)
    assert rows[0][5] == f"quizsvc lesson 16 (retention on {day})"
    later = [float(row[5]) for row in rows[2:]]
    recall_now = csv_rows(client.get(url(world, "canvas", rule="recall_now")))
    now = [float(row[5]) for row in recall_now[2:]]
    assert later[2] == now[2] == 0.0  # cy never answered
    assert all(0 < a < b for a, b in zip(later[:2], now[:2], strict=True))


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
        ("canvas", {"rule": "mastery"}, "now called recall_now"),
        ("canvas", {"format": "xlsx"}, "canvas exports as csv, not 'xlsx'"),
        ("canvas", {"lesson": "lesson-99"}, "unknown lesson 'lesson-99'"),
        ("canvas", {"assignment": "Final%20Grade"}, "must not contain 'final'"),
        ("canvas", {"assignment": "Quiz%20(2024)"}, "an existing assignment's id"),
        (
            "canvas",
            {"rule": "retention", "retention_date": "2026-02-30"},
            "'2026-02-30' is not a date",
        ),
        (
            "canvas",
            {"rule": "retention", "retention_date": "2020-01-01"},
            "retention_date must be from today",
        ),
        ("canvas", {"lang": "zh-CN", "assignment": "期末%20final"}, "不分大小写"),
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
    assert result.id
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
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/csv; charset=utf-8"
    assert "quizsvc-ana-history.csv" in response.headers["Content-Disposition"]
    rows = csv_rows(response)
    assert rows[0][0] == "Review id"
    assert [int(row[0]) for row in rows[1:]] == world["history"].reviews["ana"]


def test_learner_downloads_own_history_as_json(world):
    """Is the JSON history one document with answers and self-ratings?"""
    response = learner_client(world).get("/api/v1/me/export?format=json")
    assert response.headers["Content-Type"] == "application/json; charset=utf-8"
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


def test_each_download_builds_its_tables_once(world, monkeypatch):
    """Is a download's table built once, in the streaming session, not twice?"""
    from quizsvc.api import exports

    calls = []
    real = exports.class_export

    def counted(session, classroom, kind, options):
        calls.append(kind)
        return real(session, classroom, kind, options)

    monkeypatch.setattr(exports, "class_export", counted)
    client = teacher_client(world)
    for kind in ("reviews", "workbook", "canvas"):
        response = client.get(url(world, kind))
        assert response.status_code == 200 and response.data
    assert calls == ["reviews", "workbook", "canvas"]
    # A bad lesson is still refused before any file, with one query.
    response = client.get(url(world, "canvas", lesson="lesson-99"))
    assert response.status_code == 400 and calls == ["reviews", "workbook", "canvas"]
