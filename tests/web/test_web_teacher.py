"""The class dashboard and the learner's join page, as a browser sees them."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select

from quizsvc import scheduling
from quizsvc.db import get_session
from quizsvc.models import Classroom, Membership, Review, RosterEntry, User
from quizsvc.services import class_reports
from quizsvc.services.classes import create_class, join_class
from quizsvc.services.reviews import record_explanation
from quizsvc.services.self_assessments import record_self_assessment
from tests.factories import (
    csrf_token,
    graded_item,
    make_learner,
    make_teacher,
    record,
    record_answer,
    sign_in,
)


@pytest.fixture
def app(page_app):
    return page_app


@pytest.fixture
def classroom(app):
    """A class taught by wang with learners ana (01) and bo (02); ana has a record."""
    teacher = make_teacher(app)
    ana, bo = make_learner(app, "ana"), make_learner(app, "bo")
    with app.app_context():
        session = get_session()
        room = create_class(session, session.get(User, teacher), "高二（3）班")
        # Teachers see answers from joining on: both joined before answering.
        joined = datetime.now(UTC) - timedelta(days=10)
        join_class(session, session.get(User, ana), room.join_code,
                   student_number="01", display_name="安娜", now=joined)  # fmt: skip
        join_class(session, session.get(User, bo), room.join_code,
                   student_number="02", now=joined)  # fmt: skip
        session.commit()
        ids = {"class": room.id, "ana": ana, "bo": bo, "code": room.join_code}
    scores = graded_item("scores")
    for days in (4, 3):
        record(app, ana, scores, False, timedelta(days=days))
    record(app, ana, scores, False, timedelta(days=2), misconception="no_scale",
           answer_text="=[1 0]", problem_kind="scores", problem_seed=42,
           problem_level=1)  # fmt: skip
    record(app, ana, scores, True, timedelta(days=1), answer_text="[0.7071 0]")
    record(app, bo, scores, True, timedelta(hours=3))
    with app.app_context():
        session = get_session()
        wrong = session.scalar(
            select(Review.id).where(Review.misconception.is_not(None))
        )
        text = "<script>x</script>忘了缩放"
        record_explanation(session, session.get(User, ana), wrong, text)
        record_self_assessment(session, session.get(User, ana), "scores", 3)
        session.commit()
    return ids


@pytest.fixture
def teacher(app, classroom):
    client = app.test_client()
    sign_in(client, "wang")
    return client


def page(client, url: str, status: int = 200) -> str:
    response = client.get(url)
    assert response.status_code == status, response.get_data(as_text=True)[:500]
    return response.get_data(as_text=True)


def count(app, model) -> int:
    with app.app_context():
        return get_session().scalar(select(func.count()).select_from(model))


# --- creating a class -----------------------------------------------------------


def test_a_teacher_creates_a_class_and_sees_its_code(app):
    make_teacher(app)
    client = app.test_client()
    sign_in(client, "wang")
    html = page(client, "/teacher/")
    assert "创建班级" in html and 'id="nav-teacher"' in html
    response = client.post(
        "/teacher/", data={"name": "一班", "term": "2026 秋", "timezone": "Asia/Tokyo"}
    )
    assert response.status_code == 302
    html = page(client, response.location)
    code = re.search(r'id="join-code" class="join-code">(\w+)<', html).group(1)
    assert len(code) == 8 and f"/join/{code}" in html and "Asia/Tokyo" in html


def test_a_bad_time_zone_is_refused_with_a_message_and_nothing_written(app):
    make_teacher(app)
    client = app.test_client()
    sign_in(client, "wang")
    response = client.post("/teacher/", data={"name": "一班", "timezone": "Mars/Base"})
    assert response.status_code == 400
    assert "未知的时区" in response.get_data(as_text=True)
    assert count(app, Classroom) == 0


def test_learners_have_no_teaching_link_and_cannot_create(app):
    make_learner(app, "cy")
    client = app.test_client()
    sign_in(client, "cy")
    assert 'id="nav-teacher"' not in page(client, "/today")
    assert client.post("/teacher/", data={"name": "x"}).status_code == 403


# --- the dashboard pages -----------------------------------------------------------


def test_the_overview_lists_learners_with_figures_and_a_heatmap(teacher, classroom):
    html = page(teacher, f"/teacher/classes/{classroom['class']}")
    rows = re.findall(r'<tr data-user="(\d+)">', html)
    assert rows == [str(classroom["ana"]), str(classroom["bo"])]
    assert "安娜" in html and "概览" in html
    assert '<svg class="recall-grid"' in html and 'id="heatmap-table"' in html
    assert f"/api/v1/classes/{classroom['class']}/exports/reviews?format=csv" in html


def test_the_overview_sorts_by_the_column_asked_for(teacher, classroom):
    url = f"/teacher/classes/{classroom['class']}?sort=name&order=desc"
    rows = re.findall(r'<tr data-user="(\d+)">', page(teacher, url))
    # Names sort by code point after case folding: "bo" before "安娜".
    assert rows == [str(classroom["ana"]), str(classroom["bo"])]
    url = f"/teacher/classes/{classroom['class']}?sort=name&order=asc"
    rows = re.findall(r'<tr data-user="(\d+)">', page(teacher, url))
    assert rows == [str(classroom["bo"]), str(classroom["ana"])]


def test_a_bad_date_range_is_a_400_with_the_reason(teacher, classroom):
    html = page(
        teacher,
        f"/teacher/classes/{classroom['class']}?from=2026-11-02&to=2026-11-01",
        400,
    )
    assert "开始日期晚于结束日期" in html
    page(teacher, f"/teacher/classes/{classroom['class']}/items?from=nonsense", 400)


def test_misconceptions_show_examples_and_the_practice_permalink(teacher, classroom):
    html = page(teacher, f"/teacher/classes/{classroom['class']}/misconceptions")
    assert 'data-misconception="no_scale"' in html and "漏了缩放" in html
    assert 'href="/practice/scores/1/42"' in html
    assert "=[1 0]" in html


def test_explanations_are_escaped(teacher, classroom):
    html = page(teacher, f"/teacher/classes/{classroom['class']}/explanations")
    assert "&lt;script&gt;x&lt;/script&gt;忘了缩放" in html
    assert "<script>x</script>" not in html


def test_items_and_calibration_pages(teacher, classroom):
    items = page(teacher, f"/teacher/classes/{classroom['class']}/items")
    assert f'data-item="{graded_item("scores")}"' in items
    calibration = page(teacher, f"/teacher/classes/{classroom['class']}/calibration")
    assert 'class="cal-overrated"' in calibration and "高估" in calibration


def test_the_learner_page_shows_answers_as_typed(teacher, classroom):
    url = f"/teacher/classes/{classroom['class']}/learners/{classroom['ana']}"
    html = page(teacher, url)
    assert "[0.7071 0]" in html and "忘了缩放" in html
    assert '<svg class="calendar"' in html


def test_english_pages_are_in_english(teacher, classroom):
    html = page(teacher, f"/teacher/classes/{classroom['class']}?lang=en")
    assert "Recall in 7 days per learner and skill" in html and "概览" not in html


# --- settings -------------------------------------------------------------------------


def test_rotating_the_code_and_closing_joining(app, teacher, classroom):
    base = f"/teacher/classes/{classroom['class']}"
    assert teacher.post(f"{base}/join-code").status_code == 302
    with app.app_context():
        room = get_session().get(Classroom, classroom["class"])
        assert room.join_code != classroom["code"]
    assert teacher.post(f"{base}/joining", data={"open": "0"}).status_code == 302
    make_learner(app, "cy")
    cy = app.test_client()
    sign_in(cy, "cy")
    response = cy.post("/join", data={"code": room.join_code})
    assert response.status_code == 409
    assert "不接受加入" in response.get_data(as_text=True)


def test_removing_a_learner_ends_access(app, teacher, classroom):
    base = f"/teacher/classes/{classroom['class']}"
    assert teacher.post(f"{base}/learners/{classroom['bo']}/remove").status_code == 302
    assert teacher.get(f"{base}/learners/{classroom['bo']}").status_code == 404


def test_adding_a_co_teacher(app, teacher, classroom):
    make_teacher(app, "li")
    base = f"/teacher/classes/{classroom['class']}"
    assert teacher.post(f"{base}/teachers", data={"username": "li"}).status_code == 302
    li = app.test_client()
    sign_in(li, "li")
    assert li.get(base).status_code == 200
    refused = teacher.post(f"{base}/teachers", data={"username": "ana"})
    assert refused.status_code == 400 and "不是教师账户" in refused.get_data(
        as_text=True
    )


def upload(client, class_id: int, data: bytes):
    from io import BytesIO

    return client.post(
        f"/teacher/classes/{class_id}/roster",
        data={"roster": (BytesIO(data), "roster.csv")},
        content_type="multipart/form-data",
    )


def test_a_roster_import_names_learners(app, teacher, classroom):
    data = "\ufeff学号,姓名\n02,鲍勃\n03,陈\n".encode()
    response = upload(teacher, classroom["class"], data)
    assert response.status_code == 302
    html = page(teacher, f"/teacher/classes/{classroom['class']}")
    assert "鲍勃" in html  # bo joined as 02 without a name
    assert count(app, RosterEntry) == 2


def test_a_malformed_roster_lists_its_lines_and_writes_nothing(app, teacher, classroom):
    response = upload(teacher, classroom["class"], "01,甲\n02\n01,乙\n".encode())
    html = response.get_data(as_text=True)
    assert response.status_code == 400
    assert "第 2 行" in html and "第 3 行" in html
    assert count(app, RosterEntry) == 0


def test_a_ten_thousand_row_roster_is_refused(app, teacher, classroom):
    rows = "".join(f"{n:06d},学生{n}\n" for n in range(10_000)).encode()
    response = upload(teacher, classroom["class"], rows)
    assert response.status_code == 400
    assert "名单有 10,000 行，最多 2,000 行" in response.get_data(as_text=True)
    assert count(app, RosterEntry) == 0


# --- the learner's side -------------------------------------------------------------


@pytest.fixture
def learner_client(app, classroom):
    """A learner, cy, who is in no class yet."""
    make_learner(app, "cy")
    client = app.test_client()
    sign_in(client, "cy")
    return client


def test_the_join_link_names_the_class_and_says_what_teachers_see(
    app, classroom, learner_client
):
    html = page(learner_client, f"/join/{classroom['code']}")
    assert "加入“高二（3）班”" in html
    assert "老师看不到你的密码" in html and "每一个回答" in html


def test_joining_with_number_and_name_then_leaving(app, classroom, learner_client):
    response = learner_client.post(
        "/join",
        data={"code": classroom["code"].lower(), "student_number": "09",
              "display_name": "小安"},
    )  # fmt: skip
    assert response.status_code == 302
    html = page(learner_client, "/classes")
    assert "高二（3）班" in html and "09" in html
    response = learner_client.post(f"/classes/{classroom['class']}/leave")
    assert response.status_code == 302
    assert "高二（3）班" not in page(learner_client, "/classes")


@pytest.mark.parametrize(
    ("form", "status", "message"),
    [
        ({"code": "ZZZZZZZZ"}, 404, "没有班级使用这个邀请码"),
        ({"code": ""}, 400, "请输入班级邀请码"),
        ({"code": "{code}", "display_name": "名" * 129}, 400, "最多 128 个字符"),
    ],
)
def test_bad_joins_are_refused_and_write_nothing(
    app, classroom, learner_client, form, status, message
):
    form = {k: v.format(code=classroom["code"]) for k, v in form.items()}
    before = count(app, Membership)
    response = learner_client.post("/join", data=form)
    assert response.status_code == status
    assert message in response.get_data(as_text=True)
    assert count(app, Membership) == before


def test_an_unknown_join_link_is_a_calm_404(classroom, learner_client):
    html = page(learner_client, "/join/NOPE2345", 404)
    assert "没有班级使用这个邀请码" in html


# --- grades, dates, explanations, print (issue 21 parts 3 and 8) ---------------


def test_the_overview_shows_the_grade_by_the_rule_chosen(teacher, classroom):
    """Does the Grade column show what the export will hold, by rule and points?"""
    url = f"/teacher/classes/{classroom['class']}"
    html = page(teacher, url)
    # ana answered 1 of 4 right (25%), bo 1 of 1: accuracy out of 100.
    assert "成绩：正确率" in html
    assert '<td class="grade">25.0</td>' in html
    assert '<td class="grade">100.0</td>' in html
    html = page(teacher, url + "?rule=accuracy&points=12")
    assert (
        '<td class="grade">3.0</td>' in html and '<td class="grade">12.0</td>' in html
    )
    html = page(teacher, url + "?rule=recall_now")
    assert "成绩：当前记忆" in html
    # The export form asks for the rule, points and date, and offers both files.
    for needle in ('name="rule"', 'name="points"', 'name="retention_date"',
                   'id="export-canvas"', 'id="export-gradebook-csv"',
                   'formaction="/api/v1/classes/'):  # fmt: skip
        assert needle in html, needle


def test_a_bad_rule_or_points_is_said_beside_the_form(teacher, classroom):
    url = f"/teacher/classes/{classroom['class']}"
    html = page(teacher, url + "?points=0")
    assert 'id="grade-error"' in html and "points" in html
    html = page(teacher, url + "?rule=mastery")
    assert "recall_now" in html


def test_the_form_downloads_what_the_page_shows(teacher, classroom):
    """Does the form's Canvas button, with its fields, give the page's grade?"""
    query = "rule=accuracy&points=12&retention_date=&assignment=&lang=zh-CN"
    response = teacher.get(
        f"/api/v1/classes/{classroom['class']}/exports/canvas?format=csv&{query}"
    )
    assert response.status_code == 200
    text = response.data.decode("utf-8-sig")
    assert ",3.0" in text or ",3\r\n" in text
    gradebook = teacher.get(
        f"/api/v1/classes/{classroom['class']}/exports/gradebook?format=csv&{query}"
    )
    assert gradebook.status_code == 200
    assert gradebook.data.decode("utf-8-sig").startswith("学号,姓名,成绩")


def test_a_reversed_date_range_is_said_beside_the_filter(teacher, classroom):
    """Is a reversed range a message by the dates, with the page still there?"""
    html = page(
        teacher,
        f"/teacher/classes/{classroom['class']}?from=2026-11-02&to=2026-11-01",
        400,
    )
    assert 'id="period-error"' in html and "开始日期晚于结束日期" in html
    assert 'id="learner-table"' in html  # the dashboard, not an error page
    assert 'value="2026-11-02"' in html  # what was typed stays to be fixed


def test_skills_are_named_in_the_heatmap_and_the_calibration_table(teacher, classroom):
    html = page(teacher, f"/teacher/classes/{classroom['class']}")
    assert "skill-legend" not in html
    calibration = page(teacher, f"/teacher/classes/{classroom['class']}/calibration")
    assert 'class="skill-name"' in calibration


def test_explanations_page_twenty_at_a_time_and_filter(app, teacher, classroom):
    """With 45 explanations: 20 a page, by learner, and only the unread ones."""
    item = graded_item("scores")
    with app.app_context():
        session = get_session()
        ana, bo = (
            session.get(User, classroom["ana"]),
            session.get(User, classroom["bo"]),
        )
        for n in range(45):
            user = ana if n % 3 else bo
            result = record_answer(
                session, user, item,
                graded=scheduling.GradedAnswer(correct=False),
                now=datetime.now(UTC) - timedelta(minutes=100 - n),
            )  # fmt: skip
            record_explanation(session, user, result.id, f"why number {n:02d}")
        session.commit()
    url = f"/teacher/classes/{classroom['class']}/explanations"
    first = page(teacher, url)
    assert first.count('class="why"') == 20
    assert "第 1 / 3 页" in first and 'id="page-next"' in first
    third = page(teacher, url + "?page=3")
    assert third.count('class="why"') == 6  # 46 in all, with the fixture's one
    bo_only = page(teacher, url + f"?learner={classroom['bo']}")
    assert "共 15 条解释" in bo_only
    # Mark read, then one more arrives: only it is unread.
    teacher.post(url + "/read", data={"csrf_token": csrf_token(first)})
    record(app, classroom["ana"], item, False, timedelta(seconds=0))
    with app.app_context():
        session = get_session()
        from sqlalchemy import select

        from quizsvc.models import Review

        latest = session.scalar(select(Review.id).order_by(Review.id.desc()))
        record_explanation(
            session, session.get(User, classroom["ana"]), latest, "a fresh one"
        )
        session.commit()
    unread = page(teacher, url + "?unread=1")
    assert "共 1 条解释" in unread and "a fresh one" in unread


def test_the_print_stylesheet_hides_the_menu_and_forms():
    css = (Path(__file__).parents[2] / "quizsvc/static/style.css").read_text()
    assert "@media print" in css
    printed = css.split("@media print", 1)[1]
    assert "header.site" in printed and "form" in printed


def test_the_learner_page_shows_answers_as_people_read_them(app, teacher, classroom):
    """Does the teacher see option texts, step texts and matrices as rows of
    plain numbers, never option ids, step ids or JSON (issue 21 part 2)?"""
    ana = classroom["ana"]
    steps = ["scale-mask", "dot", "shift", "exp", "normalize", "weighted-sum"]
    record(app, ana, "l16-qkv-which-carries-content", False, timedelta(hours=3),
           answer_text="d")  # fmt: skip
    record(app, ana, "l16-hand-order-of-steps", False, timedelta(hours=2),
           answer_text=json.dumps(steps))  # fmt: skip
    record(app, ana, "l16-hand-generated-small", False, timedelta(hours=1),
           answer_text=json.dumps({"S": [["0", "4"], ["0", "２"]]}),
           misconception="no_scale")  # fmt: skip
    with app.app_context():
        session = get_session()
        latest = session.scalar(select(func.max(Review.id)))
        record_explanation(session, session.get(User, ana), latest, "忘了除以根号 d")
        session.commit()
    base = f"/teacher/classes/{classroom['class']}"
    for tab in ("misconceptions", "explanations"):
        shown = page(teacher, f"{base}/{tab}")
        assert "S = [[0, 4], [0, 2]]" in shown and "[&#34;0&#34;" not in shown, tab
    url = f"/teacher/classes/{classroom['class']}/learners/{ana}"
    html = page(teacher, url)
    assert "分数矩阵 S = QKᵀ/√d" in html
    assert "算出每个 query 与每个 key 的点积 QKᵀ" in html and "scale-mask" not in html
    assert "S = [[0, 4], [0, 2]]" in html and "２" not in html
    english = page(teacher, url + "?lang=en")
    assert "The score matrix S = QKᵀ/√d" in english


# --- recall at a stated horizon -------------------------------------------------


def test_teacher_pages_show_recall_seven_days_ahead_not_now(app, teacher, classroom):
    """Minutes after a right answer recall now is ~100 %. The overview, its
    heatmap and calibration show the prediction 7 days ahead and say so; the
    API keeps the raw value under a name that says what it is."""
    record(app, classroom["bo"], graded_item("softmax"), True, timedelta(minutes=2))
    learners = teacher.get(f"/api/v1/classes/{classroom['class']}/learners").json
    bo = next(row for row in learners["learners"] if row["user_id"] == classroom["bo"])
    assert bo["recall_now"] > 0.99 and bo["mean_recall"] == bo["recall_now"]
    assert 0 < bo["recall_in_7_days"] < 0.95
    shown = f"{round(bo['recall_in_7_days'] * 100)}%"

    html = page(teacher, f"/teacher/classes/{classroom['class']}?lang=zh-CN")
    row = re.search(rf'<tr data-user="{classroom["bo"]}">.*?</tr>', html, re.S)
    assert f"<td>{shown}</td>" in row.group(0)
    table = html.split('id="heatmap"')[0].split("<thead")[1].split("</thead>")[0]
    assert "7 天后的记忆" in table
    heatmap = html.split('id="heatmap"')[1].split("</section>")[0]
    assert "每位学生每项技能 7 天后的记忆" in heatmap and "当前记忆" not in heatmap
    # Only the grade rule that asks for it by name still says "recall now".
    assert html.count("当前记忆") == html.count("当前记忆（刚练习完时总是接近满分）")

    english = page(teacher, f"/teacher/classes/{classroom['class']}?lang=en")
    assert "Recall in 7 days per learner and skill" in english
    assert english.count("Recall now") == english.count(
        "Recall now (near the top right after any session)"
    )
    calibration = page(
        teacher, f"/teacher/classes/{classroom['class']}/calibration?lang=zh-CN"
    )
    assert "7 天后的记忆程度" in calibration and "当前记忆" not in calibration
    assert "recall in 7 days" in page(
        teacher, f"/teacher/classes/{classroom['class']}/calibration?lang=en"
    )


def test_calibration_judges_as_the_learners_own_page_does(app, teacher, classroom):
    """Each calibration cell's verdict is the one the learner's own
    self-assessment page gives the same skill."""
    bo = classroom["bo"]
    record(app, bo, graded_item("softmax"), True, timedelta(minutes=2))
    with app.app_context():
        session = get_session()
        for skill, level in (("scores", 3), ("softmax", 3)):
            record_self_assessment(session, session.get(User, bo), skill, level)
        session.commit()
    learner = app.test_client()
    sign_in(learner, "bo")
    own = {
        entry["skill_id"]: entry["calibration"]
        for entry in learner.get("/api/v1/self-assessments").json["skills"]
    }
    html = page(teacher, f"/teacher/classes/{classroom['class']}/calibration")
    row = re.search(rf'<tr data-user="{bo}">.*?</tr>', html, re.S).group(0)
    verdicts = re.findall(r'<td class="cal-([a-z_]+)"', row)
    skills = re.findall(r'<th scope="col" class="skill-name">', html)
    assert len(verdicts) == len(skills) == len(own)
    with app.app_context():
        order = [s.id for s in class_reports.skills_in_order(get_session())]
    assert verdicts == [own[skill_id] for skill_id in order]
    assert own["softmax"] != "not_rated"
