"""A learner's day in the drill: what comes next, and how far along the day is."""

from __future__ import annotations

import pytest

from tests.factories import real_bank, sync_real_bank


@pytest.fixture
def app(db_app):
    sync_real_bank(db_app)
    return db_app


def _right_answer(item: dict):
    """A right answer to a bank item as the API takes it."""
    question = real_bank().questions[item["item_id"]]
    data = question.data
    if question.type == "recall":
        return {"rating": "good"}
    if question.type == "choice":
        return {"answer": [o["id"] for o in data["options"] if o["correct"]]}
    if question.type == "numeric":
        return {"answer": str(data["answer"])}
    if question.type == "cloze":
        return {"answer": data["accepted"][0]}
    if question.type == "ordering":
        return {"answer": [s["id"] for s in data["steps"]]}
    raise AssertionError(f"no generated items in the first new items: {question.id}")


def _wrong_answer(item: dict):
    question = real_bank().questions[item["item_id"]]
    if question.type == "recall":
        return {"rating": "again"}
    if question.type == "choice":
        return {
            "answer": next(
                o["id"] for o in question.data["options"] if not o["correct"]
            )
        }
    if question.type == "numeric":
        return {"answer": "12345"}
    if question.type == "cloze":
        return {"answer": "not this"}
    return {"answer": list(reversed([s["id"] for s in question.data["steps"]]))}


def _answer(api, item, payload):
    response = api.post(
        "/api/v1/drill/answer", json={"item_id": item["item_id"], **payload}
    )
    assert response.status_code == 201, response.json
    return response.json


def test_the_position_counts_answers_and_the_total_counts_the_steps(learner_client):
    """After a wrong answer is explained, does other work come first, is the
    position always the answers given + 1, and does the total count every
    planned learning step, growing by one for the wrong answer only?"""
    api = learner_client
    first = api.get("/api/v1/drill/next").json
    # Ten new items, each planned as two answers (the 1- and 10-minute steps
    # of a right first answer).
    assert (first["position"], first["repeat"], first["total"]) == (1, False, 20)
    wrong = _answer(api, first, _wrong_answer(first))
    api.post(
        "/api/v1/drill/explanation",
        json={"review_id": wrong["review_id"], "text": "I picked the wrong one"},
    )
    seen = [first["item_id"]]
    totals = []
    for answers in range(1, 15):
        item = api.get("/api/v1/drill/next").json
        if item.get("done"):
            break
        assert item["position"] == answers + 1 <= item["total"], item
        # Answered seconds ago, the failed item waits for its step.
        assert item["repeat"] is False and item["item_id"] not in seen
        totals.append(item["total"])
        seen.append(item["item_id"])
        _answer(api, item, _right_answer(item))
    # The wrong answer added one step (+1); right answers were planned for.
    assert totals == [21] * 9


def test_skills_take_turns_among_the_days_new_items(learner_client):
    """Are new items never three of one skill in a row while others wait?"""
    api = learner_client
    skills = []
    for _ in range(10):
        item = api.get("/api/v1/drill/next").json
        if item.get("done"):
            break
        skills.append(real_bank().questions[item["item_id"]].skills[0])
        _answer(api, item, _right_answer(item))
    assert len(set(skills)) >= 3
    for a, b, c in zip(skills, skills[1:], skills[2:], strict=False):
        assert not a == b == c, skills


def test_the_drill_page_shows_the_position_and_a_repeat(learner_client):
    html = learner_client.get("/drill").get_data(as_text=True)
    assert 'id="drill-position">1 / 20<' in html
