"""Rules of the drill, review and queue services that nothing else pins (each backend).

Each test here was written for a mutant of the test audit of 2026-12-01 that
the rest of the suite let through (the id is in the test's comment); each
fails when that rule is broken. `scripts/mutation.py` reruns the mutants.
The redacted verdict (mutant D4) is pinned with the drill's own tests.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select

from quizsvc import scheduling
from quizsvc.db import get_session
from quizsvc.models import Card, Explanation, Review
from quizsvc.scheduling import GradedAnswer, Rating
from quizsvc.services import InvalidInput, NotFound
from quizsvc.services.bank_sync import sync_bank
from quizsvc.services.drill import learning_streak, open_step
from quizsvc.services.queue import build_daily_queue
from quizsvc.services.reviews import (
    MAX_EXPLANATION_CHARS,
    open_item,
    record_explanation,
)
from quizsvc.services.settings import update_settings
from quizsvc.services.users import create_user
from tests.factories import record_answer
from tests.learnerutil import record, sync_real_bank
from tests.webutil import open_for

# 08:00 UTC is 16:00 in Shanghai, the learner's time zone: the learner's day
# runs from 20:00 UTC the evening before to 20:00 UTC.
T0 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
RIGHT = GradedAnswer(correct=True)
WRONG = GradedAnswer(correct=False, score=0.0)
CHOICE = "l16-qkv-which-carries-content"  # the real bank's first item; "c" is right


@pytest.fixture
def student(db_session, small_bank):
    """A learner in Shanghai on a database holding the small bank."""
    sync_bank(db_session, small_bank, now=T0)
    user = create_user(db_session, "pin", timezone="Asia/Shanghai", now=T0)
    db_session.commit()
    return user


def stored(session, model) -> int:
    return session.scalar(select(func.count()).select_from(model))


# --- services/drill.py ------------------------------------------------------


def test_an_answer_today_extends_yesterdays_streak(db_session, student):
    """With answers the two days before and today, is the streak three days?"""
    # D2: today's answer was not counted; D19: a day was skipped while counting.
    for days_ago, item in [(2, "shapes-1"), (1, "shapes-1")]:
        ago = T0 - timedelta(days=days_ago)
        record_answer(db_session, student, item, graded=RIGHT, now=ago)
    assert learning_streak(db_session, student, T0) == 2  # today still open
    record_answer(db_session, student, "shapes-2", self_rating="good", now=T0)
    assert learning_streak(db_session, student, T0) == 3


def test_the_open_item_counts_itself_when_the_queue_no_longer_holds_it(
    db_session, student
):
    """With the new-item limit dropped to 0, is the open item still "1 / 1"?"""
    # D5: the total fell to 0, below the position.
    open_item(db_session, student, "shapes-1", now=T0)
    update_settings(db_session, student, new_per_day=0, now=T0)
    assert build_daily_queue(db_session, student, T0) == []
    step = open_step(db_session, student, T0)
    assert (step.item.id, step.position, step.total) == ("shapes-1", 1, 1)


@pytest.fixture
def api(db_app, learner_client):
    """A signed-in learner's client on an app holding the real bank."""
    return learner_client


@pytest.fixture
def app(db_app):
    sync_real_bank(db_app)
    return db_app


def reviews_in(app) -> int:
    with app.app_context():
        return stored(get_session(), Review)


def test_explaining_a_right_answer_is_a_conflict(api, app):
    """Is an explanation of a right answer refused as 409, nothing stored?"""
    # D6: it fell through to a 400 from the review service.
    api.get("/api/v1/drill/next")
    right = api.post("/api/v1/drill/answer", json={"item_id": CHOICE, "answer": "c"})
    assert right.status_code == 201 and right.json["correct"] is True
    response = api.post(
        "/api/v1/drill/explanation",
        json={"review_id": right.json["review_id"], "text": "I think I misread it"},
    )
    assert response.status_code == 409 and response.json["error"] == "conflict"
    with app.app_context():
        assert stored(get_session(), Explanation) == 0


def test_an_idempotency_key_reused_for_another_item_is_refused(api, app):
    """Is a key already used for one item refused (409) for the next item?"""
    # D8: the other item's review came back as a "replay".
    api.get("/api/v1/drill/next")
    first = api.post(
        "/api/v1/drill/answer",
        json={"item_id": CHOICE, "answer": "c", "idempotency_key": "k-1"},
    )
    assert first.status_code == 201
    following = api.get("/api/v1/drill/next").json["item_id"]
    assert following != CHOICE
    reused = api.post(
        "/api/v1/drill/answer",
        json={"item_id": following, "answer": "a", "idempotency_key": "k-1"},
    )
    assert reused.status_code == 409 and reused.json["error"] == "conflict"
    assert reviews_in(app) == 1
    assert api.get("/api/v1/drill/next").json["item_id"] == following


def test_a_wrong_choice_stores_the_misconception_its_option_names(api, app, learner):
    """Is the mistake a wrong option stands for kept with the review?"""
    # D17: the option's misconception was dropped.
    open_for(app, learner, "l16-impl-where-scale-lives")
    wrong = api.post(
        "/api/v1/drill/answer",
        json={"item_id": "l16-impl-where-scale-lives", "answer": "b"},
    )
    assert wrong.status_code == 201 and wrong.json["correct"] is False
    with app.app_context():
        review = get_session().get(Review, wrong.json["review_id"])
        assert review.misconception == "no_scale"


def test_only_a_recall_item_shows_its_model_answer_before_grading(api, app):
    """Is asking to reveal a choice item's answer refused (400), nothing shown?"""
    # D11: any open item's answer could be revealed before grading.
    assert api.get("/api/v1/drill/next").json["item_id"] == CHOICE
    response = api.post("/api/v1/drill/reveal", json={"item_id": CHOICE})
    assert response.status_code == 400 and response.json["error"] == "invalid_input"
    assert "model_answer" not in response.json


def test_a_retry_after_the_explanation_shows_the_explanation(api, app):
    """Once a wrong answer is explained, does its retry no longer hide anything?"""
    # D13: the replay still asked for an explanation and hid the answer.
    api.get("/api/v1/drill/next")
    payload = {"item_id": CHOICE, "answer": "d", "idempotency_key": "w-1"}
    wrong = api.post("/api/v1/drill/answer", json=payload)
    assert wrong.json["requires_explanation"] is True
    api.post(
        "/api/v1/drill/explanation",
        json={"review_id": wrong.json["review_id"], "text": "I mixed up K and V"},
    )
    retry = api.post("/api/v1/drill/answer", json=payload)
    assert retry.status_code == 200 and retry.json["replayed"] is True
    assert retry.json["requires_explanation"] is False
    assert retry.json["explanation"] and retry.json["note_id"] == "l16-qkv-roles"


def test_the_drill_position_counts_only_todays_answers(api, app, learner):
    """After answers on an earlier day, does today's drill start at position 1?"""
    # D20: every answer ever counted as done today.
    record(app, learner, CHOICE, True, timedelta(hours=30))
    item = api.get("/api/v1/drill/next").json
    assert item["position"] == 1 and item["total"] >= 1


# --- services/reviews.py ----------------------------------------------------


@pytest.mark.parametrize(
    ("rating", "correct"),
    [("again", False), ("hard", True), ("good", True), ("easy", True)],
)
def test_a_recall_item_is_correct_unless_rated_again(
    db_session, student, rating, correct
):
    """Is a recall item rated Hard (or better) stored as a right answer?"""
    # R2: Hard was stored as wrong.
    result = record_answer(db_session, student, "shapes-2", self_rating=rating, now=T0)
    db_session.commit()
    review = db_session.get(Review, result.id)
    assert (review.rating, review.correct) == (Rating[rating.upper()], correct)


def test_the_learners_pace_ignores_their_wrong_answers(db_session, student):
    """After 5 right answers at 20 s and 6 wrong at 1 s, is a right one at 10 s Easy?"""
    # R3: the quick wrong answers pulled the median down to 1 s.
    now = T0
    for _ in range(5):
        now += timedelta(hours=1)
        record_answer(
            db_session, student, "scores-1", graded=RIGHT, duration_ms=20_000, now=now
        )
    for _ in range(6):
        now += timedelta(hours=1)
        record_answer(
            db_session, student, "weights-1", graded=WRONG, duration_ms=1_000, now=now
        )
    quick = record_answer(
        db_session,
        student,
        "output-1",
        graded=RIGHT,
        duration_ms=10_000,
        now=now + timedelta(hours=1),
    )
    assert quick.rating == Rating.EASY


def test_seed_zero_is_a_valid_problem_seed(db_session, student):
    """Is a generated problem drawn with seed 0 stored (the drill draws from 0)?"""
    # R5: seed 0 was refused.
    result = record_answer(
        db_session,
        student,
        "scores-1",
        graded=RIGHT,
        problem_kind="scores",
        problem_seed=0,
        problem_level=1,
        now=T0,
    )
    db_session.commit()
    assert db_session.get(Review, result.id).problem_seed == 0
    with pytest.raises(InvalidInput, match="problem_seed"):
        record_answer(
            db_session, student, "weights-1", graded=RIGHT, problem_seed=-1, now=T0
        )


def test_a_rewritten_explanation_replaces_the_stored_text(db_session, student):
    """Does writing the explanation again keep one row with the new words?"""
    # R6: the rewrite kept the old text.
    wrong = record_answer(db_session, student, "shapes-1", graded=WRONG, now=T0)
    record_explanation(db_session, student, wrong.id, "first try", now=T0)
    later = T0 + timedelta(minutes=2)
    record_explanation(
        db_session, student, wrong.id, "  I swapped rows and columns ", now=later
    )
    db_session.commit()
    db_session.expire_all()
    (explanation,) = db_session.scalars(select(Explanation)).all()
    assert explanation.body == "I swapped rows and columns"
    assert explanation.updated_at == later


@pytest.mark.parametrize("key", ["a\nb", "tab\there", "bell\x07"])
def test_an_idempotency_key_with_a_control_character_is_refused(
    db_session, student, key
):
    """Is a key holding a control character refused before anything is stored?"""
    # R8: only the length was checked.
    with pytest.raises(InvalidInput, match="idempotency key"):
        record_answer(
            db_session, student, "shapes-1", graded=RIGHT, idempotency_key=key, now=T0
        )
    assert stored(db_session, Review) == 0


def test_an_overlong_explanation_is_refused(db_session, student):
    """Is an explanation beyond the length limit refused, nothing stored?"""
    # R12: only an empty explanation was refused.
    wrong = record_answer(db_session, student, "shapes-1", graded=WRONG, now=T0)
    with pytest.raises(InvalidInput, match="explanation"):
        record_explanation(
            db_session, student, wrong.id, "x" * (MAX_EXPLANATION_CHARS + 1)
        )
    assert stored(db_session, Explanation) == 0
    record_explanation(db_session, student, wrong.id, "x" * MAX_EXPLANATION_CHARS)


def test_a_retired_item_cannot_be_opened(db_session, student, small_bank):
    """Once an item leaves the bank, is opening it a NotFound?"""
    # R16: a retired item could still be opened in the drill.
    questions = {k: v for k, v in small_bank.questions.items() if k != "shapes-1"}
    sync_bank(db_session, dataclasses.replace(small_bank, questions=questions), now=T0)
    with pytest.raises(NotFound):
        open_item(db_session, student, "shapes-1", now=T0)
    assert open_item(db_session, student, "shapes-2", now=T0).item_id == "shapes-2"


# --- services/queue.py ------------------------------------------------------


def test_a_retired_items_due_card_leaves_the_queue(db_session, student, small_bank):
    """When an item the learner has started is retired, is its due card dropped?"""
    # Q2: only never-started items were filtered.
    record_answer(db_session, student, "shapes-1", graded=RIGHT, now=T0)
    later = T0 + timedelta(minutes=30)
    assert "shapes-1" in [
        e.item_id for e in build_daily_queue(db_session, student, later)
    ]
    questions = {k: v for k, v in small_bank.questions.items() if k != "shapes-1"}
    sync_bank(db_session, dataclasses.replace(small_bank, questions=questions), now=T0)
    queue = build_daily_queue(db_session, student, later)
    assert "shapes-1" not in [e.item_id for e in queue]


def test_a_review_that_comes_due_later_today_is_offered_now(db_session, student):
    """Is a review card due in two hours (same learner day) in today's queue?"""
    # Q5: only cards already due were read.
    result = record_answer(db_session, student, "shapes-1", graded=RIGHT, now=T0)
    card = db_session.get(Card, result.card_id)
    card.state = scheduling.STATE_REVIEW
    card.stability, card.last_review = 4.0, T0 - timedelta(days=3)
    card.due = T0 + timedelta(days=1, hours=2)
    db_session.flush()
    now = T0 + timedelta(days=1)  # 16:00 in Shanghai; the day ends at 04:00
    queue = build_daily_queue(db_session, student, now)
    assert queue[0].item_id == "shapes-1"
    card.due = T0 + timedelta(days=1, hours=13)  # 05:00 tomorrow: not today
    db_session.flush()
    assert "shapes-1" not in [
        e.item_id for e in build_daily_queue(db_session, student, now)
    ]


def test_another_learners_cards_stay_out_of_the_queue(db_session, student):
    """Is a card due for another learner neither offered nor counted as started?"""
    # Q10: due cards were read for every learner; Q11: so were started items.
    other = create_user(db_session, "other", timezone="Asia/Shanghai", now=T0)
    record_answer(db_session, other, "shapes-1", graded=RIGHT, now=T0)
    record_answer(db_session, other, "shapes-2", self_rating="good", now=T0)
    later = T0 + timedelta(minutes=30)
    theirs = build_daily_queue(db_session, other, later)
    assert {"shapes-1", "shapes-2"} <= {e.item_id for e in theirs if e.kind == "review"}
    queue = build_daily_queue(db_session, student, later)
    # Lesson 16 needs lesson 15 started: the other learner's start is not ours.
    assert [e.item_id for e in queue] == ["shapes-1", "shapes-2"]
    assert all(e.kind == "new" for e in queue)
