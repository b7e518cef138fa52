"""The item-type registry: one class per type reads, checks, redacts, reveals
and shows an answer; the result page and the API show the stored verdict."""

from __future__ import annotations

import json

import pytest

from quizsvc import bank, grading, item_types
from tests.learnerutil import real_bank
from tests.webutil import open_for

CHOICE = "l16-qkv-which-carries-content"  # V is the right option ("c")
GENERATED = "l16-hand-generated-small"


def test_every_bank_type_has_exactly_one_class():
    """Does the registry know each type the bank may hold, and nothing else?"""
    assert set(item_types.REGISTRY) == set(bank.QUESTION_TYPES)
    with pytest.raises(ValueError):
        item_types.of("essay")


def _first(kind: str) -> bank.Question:
    return next(q for q in real_bank().questions.values() if q.type == kind)


@pytest.mark.parametrize("lang", ["zh-CN", "en"])
def test_a_choice_answer_reads_as_its_option_texts(lang):
    """Does a teacher see the options' texts in the page's language, not "a,c"?"""
    question = _first("choice")
    options = question.data["options"]
    text = f"{options[0]['id']},{options[1]['id']}"
    shown = item_types.readable_answer(question, text, lang)
    assert options[0]["text"][lang] in shown and options[1]["text"][lang] in shown
    assert options[0]["id"] + "," not in shown
    # An API answer stored as a JSON list reads the same.
    listed = json.dumps([options[0]["id"], options[1]["id"]])
    assert item_types.readable_answer(question, listed, lang) == shown


def test_an_ordering_answer_reads_as_step_texts_in_order():
    question = _first("ordering")
    steps = question.data["steps"]
    ids = [step["id"] for step in reversed(steps)]
    shown = item_types.readable_answer(question, json.dumps(ids), "en")
    assert shown == " → ".join(step["text"]["en"] for step in reversed(steps))


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ({"S": [["0", "4"], ["0", "２"]]}, "S = [[0, 4], [0, 2]]"),
        ({"S": "[[0.70710, 0], [1/2, -inf]]"}, "S = [[0.7071, 0], [0.5, -inf]]"),
        ({"S": [["1", "0"]], "n": "3"}, "S = [[1, 0]]; n = 3"),
        ({"S": [["1", "oops"]]}, "S = [[1, oops]]"),
    ],
)
def test_a_generated_answer_reads_as_rows_of_plain_numbers(typed, expected):
    """Is a typed matrix shown as [[…],[…]] rows with plain numbers (fullwidth
    digits and expressions read as the grader reads them)?"""
    question = _first("generated")
    shown = item_types.readable_answer(question, json.dumps(typed), "en")
    assert shown == expected
    assert item_types.readable_answer(question, json.dumps(typed), "zh-CN") == (
        expected.replace("; ", "；")
    )


def test_numbers_and_blanks_read_as_typed():
    assert item_types.readable_answer(_first("numeric"), "0.5", "en") == "0.5"
    assert item_types.readable_answer(_first("cloze"), None, "en") == ""
    assert item_types.readable_answer(None, "a", "en") == "a"


def test_each_type_redacts_to_the_learners_own_answer():
    """Before the explanation: the learner's own answer, never the right one."""
    choice = {
        "type": "choice",
        "correct": False,
        "score": 0.0,
        "detail": {"chosen": ["a"], "correct": ["c"], "why_wrong": {"a": {}}},
    }
    assert item_types.redacted(choice) == {
        "type": "choice",
        "correct": False,
        "score": 0.0,
        "chosen": ["a"],
    }
    numeric = {"type": "numeric", "correct": False, "detail": {"value": 2, "answer": 3}}
    assert item_types.redacted(numeric) == {
        "type": "numeric",
        "correct": False,
        "value": 2,
    }


@pytest.fixture
def app(page_app):
    return page_app


def _refuse_grading(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a stored answer was graded again")

    monkeypatch.setattr(grading, "grade", refuse)
    monkeypatch.setattr(bank, "check_answer", refuse)


def test_the_result_page_shows_the_stored_verdict_without_grading(
    app, learner_client, monkeypatch
):
    """Is a choice result read from Review.verdict (the grader is not called)?"""
    client = learner_client
    client.get("/drill")
    response = client.post(
        "/drill/answer", data={"item_id": CHOICE, "answer": "c", "idempotency_key": "k"}
    )
    _refuse_grading(monkeypatch)
    html = client.get(response.location).get_data(as_text=True)
    assert 'id="your-choice"' in html and "✓" in html
    # The API replay (same key) reads the stored verdict too.
    again = client.post(
        "/api/v1/drill/answer",
        json={"item_id": CHOICE, "answer": "c", "idempotency_key": "k"},
    )
    assert again.status_code == 200 and again.json["replayed"] is True
    assert again.json["verdict"]["correct"] is True


def test_a_generated_result_shows_the_stored_steps(
    app, learner_client, learner, monkeypatch
):
    """Does the result page of a generated item show its stored step verdicts
    (the grader is not called to show it)?"""
    open_for(
        app,
        learner,
        GENERATED,
        problem_kind="attention",
        problem_seed=7,
        problem_level=1,
    )
    client = learner_client
    client.get("/drill")
    response = client.post(
        "/api/v1/drill/answer",
        json={
            "item_id": GENERATED,
            "answer": {
                "S": "[[0, 1], [0, -1]]",
                "A": "[[1, 0], [1, 0]]",
                "O": "1,1;1,1",
            },
            "idempotency_key": "g",
        },
    )
    assert response.status_code == 201, response.json
    assert response.json["correct"] is False
    review_id = response.json["review_id"]
    _refuse_grading(monkeypatch)
    html = client.get(f"/drill/result/{review_id}").get_data(as_text=True)
    assert 'class="steps"' in html and 'class="bad"' in html
