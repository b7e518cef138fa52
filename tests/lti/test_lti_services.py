"""Deep linking, the roster (NRPS) and grades (AGS) against the simulated platforms.

The round trip the issue asks for is `test_launch_drill_push_round_trip`:
learners launch from Canvas, answer in the drill, and `quizsvc lti
push-grades` sends their scores; the platform's gradebook is checked against
the reviews stored, then only changed scores go out, platform failures are
retried or reported, and nothing is lost or sent twice.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from html import unescape

import jwt
import pytest
from jwt.algorithms import RSAAlgorithm
from sqlalchemy import select
from sqlalchemy.orm import Session

from quizsvc.lti.scores import learner_scores
from quizsvc.models import Classroom, Item, Review
from quizsvc.models.lti import LtiGradePush, LtiScoreSend
from tests.fixtures import lti as ltiutil
from tests.fixtures.lti import Browser

pytestmark = pytest.mark.slow
# A quizsvc served with simulated Canvas and Moodle, per module and backend.
served = ltiutil.served


@pytest.fixture
def course(served):
    """A Canvas course with a teacher (launched: the class exists) and 3 learners."""
    canvas = served.canvas
    course = canvas.add_course(f"c-{uuid.uuid4().hex[:8]}", "Attention by hand")
    teacher = canvas.add_person(
        course, f"t{uuid.uuid4().hex[:6]}", "Wang Fang", "teacher"
    )
    learners = [
        canvas.add_person(
            course, f"l{uuid.uuid4().hex[:6]}", name, "learner", student_number=number
        )
        for name, number in (
            ("Li Lei", "2026001"),
            ("Han Mei", "2026002"),
            ("Zhou Jie", "2026003"),
        )
    ]
    browser = Browser(served)
    answer = browser.launch(canvas, teacher, course)
    class_id = int(re.search(r"/classes/(\d+)$", answer.headers["Location"]).group(1))
    return course, teacher, learners, browser, class_id


def answer_next(browser: Browser, option: str) -> dict:
    """Answer the drill's open item with `option`; explain a wrong answer."""
    item = browser.get("/api/v1/drill/next").json()
    result = browser.post(
        "/api/v1/drill/answer", json={"item_id": item["item_id"], "answer": option}
    )
    assert result.status_code == 201, result.text
    body = result.json()
    if body["requires_explanation"]:
        explained = browser.post(
            "/api/v1/drill/explanation",
            json={"review_id": body["review_id"], "text": "I mixed up the roles."},
        )
        assert explained.status_code == 201, explained.text
    return body


def stored_accuracy(served, class_id: int) -> dict[str, float]:
    """Each learner's share of right answers, from the reviews, by LTI sub."""
    from quizsvc.models.lti import LtiAccount

    engine = served.engine()
    try:
        with Session(engine) as session:
            rows = session.execute(
                select(LtiAccount.sub, Review.correct)
                .join(Review, Review.user_id == LtiAccount.user_id)
                .join(Item, Item.id == Review.item_id)
            ).all()
    finally:
        engine.dispose()
    totals: dict[str, list[int]] = {}
    for sub, correct in rows:
        totals.setdefault(sub, []).append(int(correct))
    return {sub: round(100 * sum(v) / len(v), 2) for sub, v in totals.items()}


def push_lines(served, push_id: int) -> list[tuple]:
    engine = served.engine()
    try:
        with engine.connect() as connection:
            return connection.execute(
                select(
                    LtiScoreSend.sub,
                    LtiScoreSend.status,
                    LtiScoreSend.attempts,
                    LtiScoreSend.http_status,
                )
                .where(LtiScoreSend.push_id == push_id)
                .order_by(LtiScoreSend.id)
            ).all()
    finally:
        engine.dispose()


def summary(result) -> str:
    return next(line for line in result.stdout.splitlines() if line.startswith("push "))


def test_launch_drill_push_round_trip(served, course):
    """Launch → drill → push-grades: does the gradebook hold the stored scores,
    with only changed scores sent, failures retried or reported, none lost or
    doubled?"""
    canvas = served.canvas
    lms_course, _teacher, learners, _browser, class_id = course
    li, han, zhou = learners
    li_browser, han_browser = Browser(served), Browser(served)
    assert li_browser.launch(canvas, li, lms_course).status_code == 302
    assert han_browser.launch(canvas, han, lms_course).status_code == 302
    assert answer_next(li_browser, "c")["correct"] is True  # V carries the content
    assert answer_next(han_browser, "a")["correct"] is False

    first = served.command("lti", "push-grades", str(class_id), "--rule", "accuracy")
    assert first.returncode == 0, first.stderr
    assert "2 sent, 0 unchanged, 0 failed" in summary(first)
    # Zhou never launched: the class does not know them yet, nothing to send.
    received = canvas.latest_scores(lms_course)
    assert received == {li.sub: 100.0, han.sub: 0.0}
    assert received == stored_accuracy(served, class_id)
    assert "scores" in first.stderr  # the progress bar
    items = lms_course.lineitems
    assert len(items) == 1 and items[0]["scoreMaximum"] == 100
    assert items[0]["tag"] == f"quizsvc-class-{class_id}"
    score = lms_course.scores[0]
    assert score["gradingProgress"] == "FullyGraded" and score["scoreMaximum"] == 100
    # The access token came from a JWT assertion the platform checked against
    # the tool's /lti/jwks.
    assert canvas.token_requests and canvas.tokens

    again = served.command("lti", "push-grades", str(class_id))
    assert "0 sent, 2 unchanged, 0 failed" in summary(again)
    assert len(lms_course.scores) == 2

    # Li's second answer is wrong (100 -> 50); the platform fails three times
    # (503, 429 with Retry-After, 401 that voids the token) before taking it.
    assert answer_next(li_browser, "a")["correct"] is False
    canvas.score_failures = [503, 429, 401]
    canvas.retry_after = "0"
    third = served.command("lti", "push-grades", str(class_id))
    assert third.returncode == 0, third.stderr
    assert "1 sent, 1 unchanged, 0 failed, 1 retried" in summary(third)
    assert canvas.latest_scores(lms_course) == {li.sub: 50.0, han.sub: 0.0}
    assert len(lms_course.scores) == 3  # one more score: not doubled
    push_id = int(re.search(r"push (\d+)", summary(third)).group(1))
    assert push_lines(served, push_id) == [(li.sub, "sent", 4, 200)]

    # A platform that keeps failing: reported, exit 1, and sent by the next push.
    assert answer_next(li_browser, "a")["correct"] is False  # 1 of 3 right
    canvas.score_failures = [500] * 5
    failing = served.command("lti", "push-grades", str(class_id))
    assert failing.returncode == 1
    assert "0 sent, 1 unchanged, 1 failed" in summary(failing)
    assert f"LTI {li.sub}" in failing.stderr and "HTTP 500" in failing.stderr
    assert canvas.latest_scores(lms_course)[li.sub] == 50.0
    recovered = served.command("lti", "push-grades", str(class_id))
    assert "1 sent, 1 unchanged, 0 failed" in summary(recovered)
    assert canvas.latest_scores(lms_course) == stored_accuracy(served, class_id)
    assert canvas.latest_scores(lms_course)[li.sub] == pytest.approx(33.33)
    assert len(lms_course.scores) == 4
    print(
        "\nround trip: the platform received",
        [(s["userId"][:8], s["scoreGiven"]) for s in lms_course.scores],
    )


def test_a_line_item_deleted_in_the_lms_is_made_again(served, course):
    """A teacher deletes quizsvc's grade column: the push reports it and the
    next one makes the column again and delivers."""
    canvas = served.canvas
    lms_course, _teacher, learners, _browser, class_id = course
    learner_browser = Browser(served)
    learner_browser.launch(canvas, learners[0], lms_course)
    answer_next(learner_browser, "c")
    assert served.command("lti", "push-grades", str(class_id)).returncode == 0
    lms_course.lineitems.clear()
    answer_next(learner_browser, "a")
    lost = served.command("lti", "push-grades", str(class_id))
    assert lost.returncode == 1 and "HTTP 404" in lost.stderr
    again = served.command("lti", "push-grades", str(class_id))
    assert again.returncode == 0 and "1 sent" in summary(again)
    assert len(lms_course.lineitems) == 1
    assert canvas.latest_scores(lms_course) == {learners[0].sub: 50.0}


def test_a_push_from_the_dashboard_shows_progress_and_a_log(served, course):
    """Does the class page's button push in the background, with a progress
    bar and a log the teacher reads, on the retention rule?"""
    canvas = served.canvas
    lms_course, _teacher, learners, teacher_browser, class_id = course
    learner_browser = Browser(served)
    learner_browser.launch(canvas, learners[0], lms_course)
    answer_next(learner_browser, "c")
    dashboard = teacher_browser.get(f"/teacher/classes/{class_id}")
    assert f"/lti/classes/{class_id}#grades" in dashboard.text
    page = teacher_browser.get(f"/lti/classes/{class_id}")
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)
    started = teacher_browser.post(
        f"/lti/classes/{class_id}/push",
        data={"csrf_token": token, "rule": "retention"},
        allow_redirects=False,
    )
    assert started.status_code == 302
    push_url = started.headers["Location"]
    deadline = time.monotonic() + 30
    while True:
        shown = teacher_browser.get(push_url)
        if 'http-equiv="refresh"' not in shown.text or time.monotonic() > deadline:
            break
        assert 'id="push-progress"' in shown.text
        time.sleep(0.2)
    # The launch's locale (Canvas: en) chose English; Chinese one click away.
    assert 'id="push-progress"' in shown.text and "Finished: 1 sent" in shown.text
    assert "Li Lei" in shown.text and "<td>sent</td>" in shown.text
    chinese = teacher_browser.get(push_url + "?lang=zh-CN")
    assert "已完成：发送 1 个" in chinese.text and "已送达" in chinese.text
    engine = served.engine()
    try:
        with Session(engine) as session:
            classroom = session.get(Classroom, class_id)
            expected = learner_scores(session, classroom, "retention")
            push = session.scalars(
                select(LtiGradePush).order_by(LtiGradePush.id.desc())
            ).first()
    finally:
        engine.dispose()
    assert push.rule == "retention" and push.status == "done" and push.sent == 1
    received = canvas.latest_scores(lms_course)
    assert received == {learners[0].sub: round(list(expected.values())[0], 2)}
    assert 0 < received[learners[0].sub] < 100
    log = teacher_browser.get(f"/lti/classes/{class_id}")
    assert 'id="push-table"' in log.text


def test_roster_sync_shows_who_has_not_joined(served, course):
    canvas = served.canvas
    lms_course, _teacher, learners, teacher_browser, class_id = course
    Browser(served).launch(canvas, learners[0], lms_course)
    page = teacher_browser.get(f"/lti/classes/{class_id}")
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)
    synced = teacher_browser.post(
        f"/lti/classes/{class_id}/roster", data={"csrf_token": token}
    )
    assert synced.status_code == 200
    rows = re.findall(
        r'<tr class="(joined|not-joined)"><td>([^<]*)</td><td>([^<]*)</td>', synced.text
    )
    assert ("joined", "2026001", "Li Lei") in rows
    assert ("not-joined", "2026002", "Han Mei") in rows
    assert ("not-joined", "2026003", "Zhou Jie") in rows
    assert "not joined" in synced.text
    chinese = teacher_browser.get(f"/lti/classes/{class_id}?lang=zh-CN")
    assert "未加入" in chinese.text and "已加入" in chinese.text
    # Paged: the platform answers two members a page (Link: rel="next").
    assert len(rows) == 4


def test_a_learner_who_launched_before_the_class_existed_joins_by_sync(served):
    canvas = served.canvas
    lms_course = canvas.add_course(f"c-{uuid.uuid4().hex[:8]}", "Early")
    early = canvas.add_person(
        lms_course, f"e{uuid.uuid4().hex[:6]}", "Early", "learner"
    )
    teacher = canvas.add_person(lms_course, f"t{uuid.uuid4().hex[:6]}", "T", "teacher")
    Browser(served).launch(canvas, early, lms_course)
    browser = Browser(served)
    answer = browser.launch(canvas, teacher, lms_course)
    class_id = int(re.search(r"/classes/(\d+)$", answer.headers["Location"]).group(1))
    token = browser.csrf(f"/lti/classes/{class_id}")
    synced = browser.post(f"/lti/classes/{class_id}/roster", data={"csrf_token": token})
    assert re.search(r'<tr class="joined"><td>—</td><td>Early</td>', synced.text)


def test_deep_linking_adds_a_practice_set_and_its_launch_opens_it(served):
    """Does the content picker return a tool-signed item that opens the set?"""
    moodle = served.moodle
    lms_course = moodle.add_course(f"c-{uuid.uuid4().hex[:8]}", "Attention")
    teacher = moodle.add_person(
        lms_course, f"t{uuid.uuid4().hex[:6]}", "Wang", "teacher"
    )
    learner = moodle.add_person(lms_course, f"l{uuid.uuid4().hex[:6]}", "Li", "learner")
    browser = Browser(served)
    answer = browser.launch(
        moodle,
        teacher,
        lms_course,
        message_type="LtiDeepLinkingRequest",
        target=served.url + "lti/deep-link",
    )
    assert answer.headers["Location"].endswith("/lti/deep-link/choose")
    picker = browser.get("/lti/deep-link/choose")
    assert "quizsvc 每日复习" in picker.text and 'name="kind"' in picker.text
    token = re.search(r'name="csrf_token" value="([^"]+)"', picker.text).group(1)
    response = browser.post(
        "/lti/deep-link/choose",
        data={
            "csrf_token": token,
            "choice": "practice",
            "kind": "scores",
            "level": "2",
        },
    )
    assert response.status_code == 200
    action = unescape(
        re.search(r'action="([^"]+)" id="deep-link-return"', response.text).group(1)
    )
    assert action == moodle.url + "/deep_link_return"
    policy = response.headers["Content-Security-Policy"]
    assert f"form-action 'self' {moodle.url}" in policy
    signed = re.search(r'name="JWT" value="([^"]+)"', response.text).group(1)
    keys = browser.get("/lti/jwks").json()["keys"]
    header = jwt.get_unverified_header(signed)
    key = RSAAlgorithm.from_jwk(
        json.dumps(next(k for k in keys if k["kid"] == header["kid"]))
    )
    message = jwt.decode(signed, key, algorithms=["RS256"], audience=moodle.issuer)
    claim = "https://purl.imsglobal.org/spec/lti/claim/"
    assert message["iss"] == moodle.client_id
    assert message[claim + "message_type"] == "LtiDeepLinkingResponse"
    assert message[claim + "deployment_id"] == moodle.deployment_id
    assert message["https://purl.imsglobal.org/spec/lti-dl/claim/data"] == (
        "opaque-platform-data"
    )
    (item,) = message["https://purl.imsglobal.org/spec/lti-dl/claim/content_items"]
    assert (
        item["type"] == "ltiResourceLink" and item["url"] == served.url + "lti/launch"
    )
    assert item["custom"] == {
        "quizsvc_target": "practice",
        "quizsvc_kind": "scores",
        "quizsvc_level": "2",
    }
    # The platform launches the new link with its custom parameters.
    student = Browser(served)
    opened = student.launch(moodle, learner, lms_course, custom=item["custom"])
    assert opened.headers["Location"].endswith("/practice?kind=scores&level=2")


def test_deep_linking_the_daily_drill(served):
    canvas = served.canvas
    lms_course = canvas.add_course(f"c-{uuid.uuid4().hex[:8]}", "Attention")
    teacher = canvas.add_person(
        lms_course, f"t{uuid.uuid4().hex[:6]}", "Wang", "teacher"
    )
    browser = Browser(served)
    browser.launch(canvas, teacher, lms_course, message_type="LtiDeepLinkingRequest")
    token = browser.csrf("/lti/deep-link/choose")
    response = browser.post(
        "/lti/deep-link/choose", data={"csrf_token": token, "choice": "drill"}
    )
    signed = re.search(r'name="JWT" value="([^"]+)"', response.text).group(1)
    message = jwt.decode(signed, options={"verify_signature": False})
    (item,) = message["https://purl.imsglobal.org/spec/lti-dl/claim/content_items"]
    assert item["custom"] == {"quizsvc_target": "drill"}
    assert item["title"] == "quizsvc daily drill"  # the launch's locale is en


def test_a_learner_cannot_open_the_content_picker_or_the_lms_page(served, course):
    canvas = served.canvas
    lms_course, _teacher, learners, _browser, class_id = course
    student = Browser(served)
    answer = student.launch(
        canvas, learners[1], lms_course, message_type="LtiDeepLinkingRequest"
    )
    assert answer.status_code == 403 and 'data-reason="role"' in answer.text
    student.launch(canvas, learners[1], lms_course)
    assert student.get(f"/lti/classes/{class_id}").status_code == 404
    assert student.get("/lti/admin").status_code == 403


def test_the_cli_lists_and_removes_platforms(served):
    listed = served.command("lti", "list-platforms")
    assert listed.returncode == 0
    assert (
        served.canvas.client_id in listed.stdout and served.moodle.url in listed.stdout
    )
    assert "frame origin" in listed.stdout
    twice = served.command("lti", "add-platform", *served.canvas.registration_args())
    assert twice.returncode == 2 and "already registered" in twice.stderr
