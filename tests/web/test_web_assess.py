"""The self-assessment page: can-do list, ratings with history, calibration."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from quizsvc import bank
from quizsvc.db import get_session
from quizsvc.models import SelfAssessment
from tests.factories import (
    csrf_token,
    graded_item,
    make_learner,
    real_bank,
    record,
    sign_in,
)


@pytest.fixture
def app(page_app):
    return page_app


@pytest.fixture
def client(learner_client):
    return learner_client


def stored(app, user_id: int) -> list[tuple[str, int, str | None]]:
    with app.app_context():
        rows = get_session().scalars(
            select(SelfAssessment)
            .where(SelfAssessment.user_id == user_id)
            .order_by(SelfAssessment.id)
        )
        return [(r.skill_id, r.level, r.note) for r in rows]


def section(html: str, skill_id: str) -> str:
    start = html.index(f'id="skill-{skill_id}"')
    end = html.find("<section", start)
    return html[start : end if end != -1 else None]


def answer_skill(app, user_id: int, skill_id: str, results: list[bool]) -> None:
    """Record auto-graded answers to an item of this skill, an hour apart."""
    item = graded_item(skill_id)
    for n, correct in enumerate(results):
        record(app, user_id, item, correct, timedelta(hours=len(results) - n))


def test_signed_out_visitors_are_sent_to_log_in(app):
    client = app.test_client()
    response = client.get("/assess")
    assert response.status_code == 302 and "/login" in response.location
    posted = client.post("/assess/scores", data={"level": "2"})
    assert posted.status_code == 302 and "/login" in posted.location


def test_page_lists_every_skill_with_its_can_do_statement(client):
    html = client.get("/assess?lang=en").get_data(as_text=True)
    real = real_bank()
    positions = [html.index(f'id="skill-{skill_id}"') for skill_id in real.skills]
    assert positions == sorted(positions)  # the bank's order
    for skill in real.skills.values():
        assert skill.can_do["en"].replace("'", "&#39;") in html
    for step in bank.SELF_ASSESSMENT_SCALE:
        assert step["en"] in html
    assert html.count('class="assess-skill"') == len(real.skills)
    assert html.count('data-calibration="not_rated"') == len(real.skills)


def test_the_page_is_in_chinese_by_default(client):
    html = client.get("/assess").get_data(as_text=True)
    assert "闭卷能做" in html and "能讲给别人听" in html
    assert real_bank().skills["scores"].can_do["zh-CN"] in html


def test_a_rating_is_appended_and_the_latest_shown(client, app, learner):
    first = client.post("/assess/scores", data={"level": "1", "note": "slow on √d"})
    assert first.status_code == 302
    assert first.location.endswith("/assess#skill-scores")
    client.post("/assess/scores", data={"level": "2", "note": ""})
    assert stored(app, learner) == [("scores", 1, "slow on √d"), ("scores", 2, None)]
    html = section(client.get("/assess?lang=en").get_data(as_text=True), "scores")
    assert re.search(r'class="self-level"><strong>2 · closed-book', html)
    history = re.findall(r"<li><time[^>]*>[^<]+</time> — <strong>(\d)", html)
    assert history == ["2", "1"]  # newest first
    assert "slow on √d" in html
    assert re.search(r'value="2" checked', html)  # the form starts at the latest


def test_a_missing_level_is_refused_next_to_the_form(client, app, learner):
    response = client.post("/assess/scores?lang=en", data={"note": "keep me"})
    assert response.status_code == 400
    html = section(response.get_data(as_text=True), "scores")
    assert 'id="error-scores" role="alert"' in html and "keep me" in html
    assert stored(app, learner) == []


def test_a_level_off_the_scale_is_refused(client, app, learner):
    for level in ("4", "-1", "two", "1.0", ""):
        response = client.post("/assess/scores", data={"level": level})
        assert response.status_code == 400, level
    assert stored(app, learner) == []


def test_an_overlong_note_is_refused(client, app, learner):
    response = client.post("/assess/scores", data={"level": "2", "note": "x" * 2001})
    assert response.status_code == 400 and stored(app, learner) == []


def test_rating_an_unknown_skill_is_404(client):
    assert client.post("/assess/no-such-skill", data={"level": "1"}).status_code == 404


def test_high_rating_with_weak_answers_is_flagged_overrated(client, app, learner):
    answer_skill(app, learner, "temperature", [False, False, True, False])
    client.post("/assess/temperature", data={"level": "3"})
    html = section(client.get("/assess?lang=en").get_data(as_text=True), "temperature")
    assert 'data-calibration="overrated"' in html
    assert "recent answers: 1 of 4 right (25%)" in html
    assert "higher than your record supports" in html


def test_low_rating_with_a_strong_record_is_flagged_underrated(client, app, learner):
    answer_skill(app, learner, "temperature", [True] * 5)
    client.post("/assess/temperature", data={"level": "0"})
    html = section(client.get("/assess?lang=en").get_data(as_text=True), "temperature")
    assert 'data-calibration="underrated"' in html
    assert "5 of 5 right (100%)" in html


def test_a_learner_never_sees_another_learners_ratings(app, client, learner):
    other = make_learner(app, "bo")
    bo = app.test_client()
    sign_in(bo, "bo")
    bo.post("/assess/scores", data={"level": "3", "note": "bo's secret note"})
    html = client.get("/assess").get_data(as_text=True)
    assert "secret note" not in html
    assert 'data-calibration="not_rated"' in section(html, "scores")
    assert stored(app, learner) == [] and len(stored(app, other)) == 1


def test_rating_needs_the_form_csrf_token(app, learner):
    app.config["WTF_CSRF_ENABLED"] = True
    client = app.test_client()
    sign_in(client, "ana")
    assert client.post("/assess/scores", data={"level": "2"}).status_code == 400
    forged = client.post("/assess/scores", data={"level": "2", "csrf_token": "x"})
    assert forged.status_code == 400
    with app.app_context():
        count = get_session().scalar(select(func.count()).select_from(SelfAssessment))
    assert count == 0
    token = csrf_token(client.get("/assess").get_data(as_text=True))
    ok = client.post("/assess/scores", data={"level": "2", "csrf_token": token})
    assert ok.status_code == 302


def test_an_oversized_note_body_is_refused(client):
    response = client.post("/assess/scores", data={"level": "2", "note": "x" * 300_000})
    assert response.status_code == 413
