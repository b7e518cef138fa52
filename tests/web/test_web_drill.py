"""The daily closed-book drill in the browser: Today, items, results, notes."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import func, select

from quizsvc import problems
from quizsvc.db import get_session
from quizsvc.models import Review
from tests.factories import make_learner, open_for, sign_in

CHOICE = "l16-qkv-which-carries-content"  # V is the right option ("c")
CHOICE_NOTE = "l16-qkv-roles"


@pytest.fixture
def app(page_app):
    return page_app


@pytest.fixture
def client(learner_client):
    return learner_client


def review_count(app) -> int:
    with app.app_context():
        return get_session().scalar(select(func.count()).select_from(Review))


def item_id_on(html: str) -> str:
    return re.search(r'name="item_id" value="([^"]+)"', html).group(1)


def test_drill_needs_a_signed_in_learner(app):
    response = app.test_client().get("/drill")
    assert response.status_code == 302 and "/login" in response.location


def test_today_counts_new_items_and_offers_start(client):
    html = client.get("/today").get_data(as_text=True)
    assert re.search(r'id="new-count">10<', html)
    assert re.search(r'id="due-count">0<', html)
    assert 'id="start"' in html


def test_open_item_page_has_no_note_link_and_the_note_is_closed(client):
    """While an item is open, is its lesson note out of reach (423)?"""
    html = client.get("/drill").get_data(as_text=True)
    assert item_id_on(html) == CHOICE
    assert "/notes/" not in html
    assert 'role="progressbar"' in html and "1 / 20" in html
    assert client.get(f"/notes/{CHOICE_NOTE}").status_code == 423
    locked = client.get(f"/api/v1/notes/{CHOICE_NOTE}")
    assert locked.status_code == 423 and locked.json["error"] == "closed_book"


def test_right_answer_shows_explanation_and_note_link(client, app):
    client.get("/drill")
    response = client.post(
        "/drill/answer",
        data={"item_id": CHOICE, "answer": "c", "idempotency_key": "k1"},
    )
    assert response.status_code == 302
    html = client.get(response.location).get_data(as_text=True)
    assert "✓" in html and 'id="note-link"' in html and 'id="why-form"' not in html
    assert client.get(f"/notes/{CHOICE_NOTE}").status_code == 200
    assert review_count(app) == 1


def test_wrong_answer_asks_why_before_explaining(client, app):
    """After a wrong answer: write why first; only then explanation and note."""
    client.get("/drill")
    response = client.post(
        "/drill/answer",
        data={"item_id": CHOICE, "answer": "d", "idempotency_key": "k1"},
    )
    result_url = response.location
    html = client.get(result_url).get_data(as_text=True)
    assert 'id="why-form"' in html
    assert 'id="note-link"' not in html and "O = AV" not in html  # no explanation yet
    assert client.get(f"/notes/{CHOICE_NOTE}").status_code == 423
    # The drill does not move on past an unexplained mistake.
    assert client.get("/drill").location.endswith(result_url)
    review_id = result_url.rsplit("/", 1)[1]
    short = client.post(f"/drill/result/{review_id}/explain", data={"why": "hm"})
    # The learner's language is zh-CN by default, messages included.
    assert short.status_code == 400 and "至少写 5 个字符" in short.get_data(
        as_text=True
    )
    done = client.post(
        f"/drill/result/{review_id}/explain",
        data={"why": "I mixed up the scores with the weights"},
    )
    html = client.get(done.location).get_data(as_text=True)
    assert 'id="note-link"' in html and "mixed up the scores" in html
    assert "O = AV" in html  # the explanation of the right option
    assert client.get(f"/notes/{CHOICE_NOTE}").status_code == 200


def test_unreadable_answer_costs_nothing(client, app):
    client.get("/drill")
    response = client.post(
        "/drill/answer", data={"item_id": CHOICE, "idempotency_key": "k1"}
    )
    assert response.status_code == 400
    assert 'id="answer-error"' in response.get_data(as_text=True)
    assert review_count(app) == 0
    unknown = client.post("/drill/answer", data={"item_id": CHOICE, "answer": "z"})
    assert unknown.status_code == 400 and review_count(app) == 0


def test_double_submit_records_one_review(client, app):
    client.get("/drill")
    form = {"item_id": CHOICE, "answer": "c", "idempotency_key": "same-key"}
    first = client.post("/drill/answer", data=form)
    second = client.post("/drill/answer", data=form)
    assert first.location == second.location
    assert review_count(app) == 1


def test_recall_item_reveals_then_asks_for_a_rating(client, app, learner):
    open_for(app, learner, "l16-qkv-analogy-limits")
    html = client.get("/drill").get_data(as_text=True)
    assert 'action="/drill/reveal"' in html
    revealed = client.post(
        "/drill/reveal",
        data={"item_id": "l16-qkv-analogy-limits", "attempt": "only an analogy"},
    )
    html = revealed.get_data(as_text=True)
    assert 'id="rate-form"' in html and 'data-key="4"' in html
    response = client.post(
        "/drill/answer",
        data={
            "item_id": "l16-qkv-analogy-limits",
            "rating": "good",
            "attempt": "x",
            "idempotency_key": "r1",
        },
    )
    assert response.status_code == 302
    assert review_count(app) == 1


def test_recall_without_rating_is_refused(client, app, learner):
    open_for(app, learner, "l16-qkv-analogy-limits")
    response = client.post("/drill/answer", data={"item_id": "l16-qkv-analogy-limits"})
    assert response.status_code == 400 and review_count(app) == 0


def test_generated_item_is_answered_through_the_grid(client, app, learner):
    open_for(
        app,
        learner,
        "l16-hand-generated-small",
        problem_kind="attention",
        problem_seed=7,
        problem_level=1,
    )
    html = client.get("/drill").get_data(as_text=True)
    problem = problems.generate("attention", 7, 1)
    form = {"item_id": "l16-hand-generated-small", "idempotency_key": "g1"}
    for ask in problem.ask:
        assert f'id="ask-{ask.name}"' in html
        value = problem.answer_json(ask.name)
        if ask.format in ("matrix", "boolean_matrix"):
            for i, row in enumerate(value):
                for j, cell in enumerate(row):
                    form[f"cell-{ask.name}-{i}-{j}"] = (
                        "undefined" if cell is None else str(cell)
                    )
        else:
            form[f"answer-{ask.name}"] = str(value)
    response = client.post("/drill/answer", data=form)
    assert response.status_code == 302, response.get_data(as_text=True)
    result = client.get(response.location).get_data(as_text=True)
    assert "✓" in result
    with app.app_context():
        review = get_session().scalar(select(Review))
        assert (review.problem_kind, review.problem_seed, review.problem_level) == (
            "attention",
            7,
            1,
        )


def test_another_learners_result_is_not_found(client, app):
    client.get("/drill")
    response = client.post("/drill/answer", data={"item_id": CHOICE, "answer": "c"})
    url = response.location
    make_learner(app, "bo")
    other = app.test_client()
    sign_in(other, "bo")
    assert other.get(url).status_code == 404
    review_id = url.rsplit("/", 1)[1]
    assert (
        other.post(
            f"/drill/result/{review_id}/explain", data={"why": "not mine at all"}
        ).status_code
        == 404
    )


def test_answering_an_item_that_is_not_open_is_refused(client, app):
    response = client.post("/drill/answer", data={"item_id": CHOICE, "answer": "c"})
    assert response.status_code in (302, 409)
    assert review_count(app) == 0


def test_drill_forms_need_their_csrf_token(app, client):
    """Can another site submit an answer (or an explanation) for the learner?"""
    app.config["WTF_CSRF_ENABLED"] = True
    page = client.get("/drill").get_data(as_text=True)
    forged = client.post("/drill/answer", data={"item_id": CHOICE, "answer": "c"})
    assert forged.status_code == 400 and review_count(app) == 0
    token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    honest = client.post(
        "/drill/answer", data={"item_id": CHOICE, "answer": "c", "csrf_token": token}
    )
    assert honest.status_code == 302 and review_count(app) == 1
