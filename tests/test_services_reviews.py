"""Recording answers, explanations and self-assessments (each backend)."""

from __future__ import annotations

import itertools
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from quizsvc import scheduling
from quizsvc.models import Card, Explanation, OpenItem, Review, SelfAssessment
from quizsvc.scheduling import GradedAnswer, Rating
from quizsvc.services import Conflict, InvalidInput, NotFound, drill
from quizsvc.services.bank_sync import sync_bank
from quizsvc.services.reviews import (
    find_answer,
    get_open_item,
    open_item,
    record_explanation,
)
from quizsvc.services.self_assessments import record_self_assessment
from quizsvc.services.settings import update_settings
from quizsvc.services.users import create_user
from tests.factories import record_answer

T0 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
RIGHT = GradedAnswer(correct=True)
WRONG = GradedAnswer(correct=False, score=0.0)
_learner_numbers = itertools.count()


@pytest.fixture
def learner(db_session, small_bank):
    """A learner on a database holding the small bank."""
    sync_bank(db_session, small_bank, now=T0)
    user = create_user(db_session, "lin", now=T0)
    db_session.commit()
    return user


def count(session, model) -> int:
    return session.scalar(select(func.count()).select_from(model))


def test_a_right_answer_is_stored_and_schedules_the_card(db_session, learner):
    """Does a first right answer store a Good review and move the card into learning?"""
    result = record_answer(
        db_session,
        learner,
        "scores-1",
        graded=RIGHT,
        duration_ms=8000,
        answer_text="0.7071",
        now=T0,
    )
    db_session.commit()
    assert (result.rating, result.correct) == (Rating.GOOD, True)
    review = db_session.get(Review, result.id)
    assert review.answer_text == "0.7071" and review.duration_ms == 8000
    assert review.state_before == scheduling.STATE_NEW
    card = db_session.get(Card, result.card_id)
    assert card.reps == 1 and card.state == scheduling.STATE_LEARNING
    assert card.due == result.due_after == T0 + scheduling.LEARNING_STEPS[1]


def test_the_card_follows_the_fsrs_transition_answer_after_answer(db_session, learner):
    """Is the stored card the scheduler's card after each answer, fuzz included?"""
    now, expected = T0, scheduling.CardState()
    for answer, wait in [
        (RIGHT, 0),
        (RIGHT, 10),
        (WRONG, 60 * 24 * 5),
        (RIGHT, 10),
        (RIGHT, 60 * 24 * 3),
    ]:
        now += timedelta(minutes=wait)
        result = record_answer(db_session, learner, "output-1", graded=answer, now=now)
        rating = Rating.GOOD if answer.correct else Rating.AGAIN
        expected = scheduling.review_card(
            expected,
            rating,
            now,
            seed=scheduling.fuzz_seed(result.card_id, expected.reps),
        )
    db_session.commit()
    card = db_session.get(Card, result.card_id)
    assert (card.state, card.step, card.due, card.reps, card.lapses) == (
        expected.state,
        expected.step,
        expected.due,
        expected.reps,
        expected.lapses,
    )
    assert card.stability == pytest.approx(expected.stability)


def test_a_fast_clean_answer_is_easy_once_the_learner_has_a_pace(db_session, learner):
    """After five timed right answers of a type, is a faster one rated Easy?"""
    now = T0
    for minutes in range(5):
        now = T0 + timedelta(days=minutes)
        first = record_answer(
            db_session, learner, "scores-1", graded=RIGHT, duration_ms=20_000, now=now
        )
        assert first.rating == Rating.GOOD
    quick = record_answer(
        db_session,
        learner,
        "weights-1",
        graded=RIGHT,
        duration_ms=5_000,
        now=now + timedelta(minutes=1),
    )
    slow = record_answer(
        db_session,
        learner,
        "output-1",
        graded=RIGHT,
        duration_ms=30_000,
        now=now + timedelta(minutes=2),
    )
    hinted = record_answer(
        db_session,
        learner,
        "shapes-1",
        graded=GradedAnswer(correct=True, hint_used=True),
        duration_ms=1_000,
        now=now + timedelta(minutes=3),
    )
    assert (quick.rating, slow.rating, hinted.rating) == (
        Rating.EASY,
        Rating.GOOD,
        Rating.HARD,
    )


def test_recall_items_are_rated_by_the_learner(db_session, learner):
    """Is a recall item rated by the learner, Pass/Fail in two-button mode?"""
    good = record_answer(db_session, learner, "shapes-2", self_rating="easy", now=T0)
    assert good.rating == Rating.EASY and good.correct
    with pytest.raises(InvalidInput, match="self_rating"):
        record_answer(db_session, learner, "scores-2", graded=RIGHT, now=T0)
    update_settings(db_session, learner, two_button_mode=True, now=T0)
    failed = record_answer(db_session, learner, "scores-2", self_rating="fail", now=T0)
    assert failed.rating == Rating.AGAIN and not failed.correct
    with pytest.raises(InvalidInput, match="pass or fail"):
        record_answer(db_session, learner, "scores-2", self_rating="hard", now=T0)
    with pytest.raises(InvalidInput, match="graded"):
        record_answer(db_session, learner, "scores-1", self_rating="good", now=T0)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"duration_ms": -1}, "duration_ms"),
        ({"duration_ms": 10**9}, "duration_ms"),
        ({"answer_text": "x" * 10_001}, "answer"),
        ({"idempotency_key": " "}, "idempotency key"),
        ({"idempotency_key": "k" * 129}, "idempotency key"),
        ({"problem_level": 0}, "problem_level"),
        ({"problem_seed": -5}, "problem_seed"),
        ({"misconception": ""}, "misconception"),
        ({"now": datetime(2026, 1, 1)}, "naive"),
    ],
)
def test_bad_input_is_refused_and_stores_nothing(
    db_session, learner, arguments, message
):
    """Is bad input refused with a reason, leaving no half-written record?"""
    with pytest.raises(InvalidInput, match=message):
        record_answer(
            db_session, learner, "scores-1", graded=RIGHT, **{"now": T0, **arguments}
        )
    db_session.flush()
    assert count(db_session, Review) == 0 and count(db_session, Card) == 0


def submit(session, user, item_id, key, rating="good", now=T0):
    """Answer a recall item through the drill, opening it first (unless the key
    was used already: then the drill replays the first answer)."""
    if key is None or find_answer(session, user, key) is None:
        open_item(session, user, item_id, now=now)
    return drill.submit_answer(
        session, user, item_id, rating=rating, idempotency_key=key, now=now
    )


def test_a_retried_answer_returns_the_first_result_and_stores_nothing(
    db_session, learner
):
    """Does the same idempotency key sent again replay the first result?"""
    first = submit(db_session, learner, "scores-2", "abc", rating="again")
    db_session.commit()
    retry = drill.submit_answer(
        db_session,
        learner,
        "scores-2",
        rating="good",
        idempotency_key="abc",
        now=T0 + timedelta(seconds=30),
    )
    db_session.commit()
    assert retry.replayed and not first.replayed
    assert retry.review.id == first.review.id and retry.verdict == first.verdict
    assert count(db_session, Review) == 1
    assert db_session.get(Card, first.review.card_id).reps == 1
    with pytest.raises(Conflict, match="another item"):
        drill.submit_answer(
            db_session, learner, "shapes-2", rating="good", idempotency_key="abc"
        )


def test_idempotency_keys_belong_to_one_learner(db_session, learner):
    """Can two learners use the same key without clashing?"""
    other = create_user(db_session, "mei", now=T0)
    a = submit(db_session, learner, "scores-2", "same")
    b = submit(db_session, other, "scores-2", "same")
    assert a.review.id != b.review.id and not b.replayed


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    answers=st.lists(
        st.tuples(
            st.sampled_from(["scores-2", "shapes-2"]),
            st.sampled_from("abcd"),
            st.booleans(),
        ),
        min_size=1,
        max_size=10,
    )
)
def test_each_key_is_stored_once_however_often_it_is_sent(db_session, learner, answers):
    """For any sequence of sends, is there one review per distinct key?"""
    user = create_user(db_session, f"hypothesis-{next(_learner_numbers)}", now=T0)
    first_item, first_result = {}, {}
    for step, (item, key, right) in enumerate(answers):
        item = first_item.setdefault(key, item)
        result = submit(
            db_session,
            user,
            item,
            key,
            rating="good" if right else "again",
            now=T0 + timedelta(minutes=step),
        )
        if key in first_result:
            assert result.replayed
            assert result.review.id == first_result[key].review.id
        else:
            first_result[key] = result
    stored = db_session.scalar(
        select(func.count()).select_from(Review).where(Review.user_id == user.id)
    )
    assert stored == len(first_result)
    db_session.rollback()


def run_interleaved(engine, first, second):
    """Run `second(session)` while `first`'s transaction is still open.

    The first thread does its work and flushes but does not commit; the second
    then starts its own transaction on its own connection (on SQLite a second
    BEGIN IMMEDIATE, on PostgreSQL a second backend), and only once it has been
    seen waiting does the first commit. Returns both results and whether the
    second really waited for the first.
    """
    first_done, second_started, commit_first = (threading.Event() for _ in range(3))
    outcome: dict[str, object] = {}
    errors: list[BaseException] = []

    def run_first():
        with Session(engine, expire_on_commit=False) as session:
            try:
                outcome["first"] = first(session)
                session.flush()
                first_done.set()
                commit_first.wait(timeout=30)
                outcome["first_committed"] = time.monotonic()
                session.commit()
            except BaseException as exc:  # reported to the test below
                errors.append(exc)
                first_done.set()

    def run_second():
        first_done.wait(timeout=30)
        with Session(engine, expire_on_commit=False) as session:
            try:
                second_started.set()
                outcome["second"] = second(session)
                outcome["second_finished"] = time.monotonic()
                session.commit()
            except BaseException as exc:  # reported to the test below
                errors.append(exc)

    threads = [threading.Thread(target=run_first), threading.Thread(target=run_second)]
    for thread in threads:
        thread.start()
    second_started.wait(timeout=30)
    # Give the second request time to get as far as it can; it must be stuck
    # behind the first one's transaction, not finished.
    time.sleep(0.3)
    commit_first.set()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    waited = outcome["second_finished"] > outcome["first_committed"]
    return outcome["first"], outcome["second"], waited


def test_a_retry_racing_the_original_stores_one_review(db_engine, db_session, learner):
    """When a retry arrives while the original is being stored, is one review kept?"""

    open_item(db_session, learner, "scores-2", now=T0)
    db_session.commit()

    def answer(session):
        return drill.submit_answer(
            session,
            session.merge(learner),
            "scores-2",
            rating="good",
            idempotency_key="race",
        )

    original, retry, waited = run_interleaved(db_engine, answer, answer)
    assert waited, "the retry did not wait for the original's transaction"
    assert not original.replayed and retry.replayed
    assert retry.review.id == original.review.id
    assert retry.next_due == original.next_due
    assert count(db_session, Review) == 1


def test_two_answers_racing_on_one_new_card_both_count(db_engine, db_session, learner):
    """Do two answers to a new item, sent at once, land on one card in order?"""

    def answer_with(key, graded):
        def answer(session):
            return record_answer(
                session,
                session.merge(learner),
                "weights-1",
                graded=graded,
                idempotency_key=key,
            )

        return answer

    first, second, waited = run_interleaved(
        db_engine, answer_with("one", WRONG), answer_with("two", RIGHT)
    )
    assert waited
    assert first.card_id == second.card_id
    assert first.reviewed_at <= second.reviewed_at
    card = db_session.get(Card, first.card_id)
    log = db_session.execute(
        select(Review.reviewed_at, Review.rating)
        .where(Review.card_id == card.id)
        .order_by(Review.reviewed_at, Review.id)
    ).all()
    assert [rating for _, rating in log] == [Rating.AGAIN, Rating.GOOD]
    replayed = scheduling.replay_card(log, card_id=card.id)
    assert (card.reps, card.state, card.due) == (2, replayed.state, replayed.due)
    assert card.stability == pytest.approx(replayed.stability)


def test_two_devices_asking_for_the_next_item_open_one(db_engine, db_session, learner):
    """Do two simultaneous "next item" requests of one learner open one item?"""

    def next_item(session):
        return drill.current_step(session, session.merge(learner)).item.id

    first, second, waited = run_interleaved(db_engine, next_item, next_item)
    assert waited and first == second
    assert count(db_session, OpenItem) == 1


def test_a_plan_read_before_another_devices_answer_is_made_afresh(
    db_engine, db_session, learner
):
    """If the phone answers between the laptop's preview and its opening, which wins?"""
    with Session(db_engine, expire_on_commit=False) as laptop:
        planned = drill.preview_step(laptop, laptop.merge(learner))
        laptop.commit()
    assert isinstance(planned, drill.PlannedOpening)
    with Session(db_engine, expire_on_commit=False) as phone:
        step = drill.current_step(phone, phone.merge(learner))
        assert step.item.id == planned.item.id
        answered = record_answer(
            phone, phone.merge(learner), step.item.id, graded=WRONG
        )
        phone.commit()
    with Session(db_engine, expire_on_commit=False) as laptop:
        step = drill.open_planned(laptop, laptop.merge(learner), planned)
        laptop.commit()
    # The phone's wrong answer must be explained first: the stale plan is not
    # opened over it.
    assert isinstance(step, drill.PendingExplanation)
    assert step.review.id == answered.id
    assert count(db_session, Review) == 1


def test_two_previews_opening_at_once_open_one_item(db_engine, db_session, learner):
    """Do two devices that planned the same opening end on one open item?"""
    plans = []
    for _ in range(2):
        with Session(db_engine, expire_on_commit=False) as device:
            plans.append(drill.preview_step(device, device.merge(learner)))
            device.commit()
    opened = []
    for plan in plans:
        with Session(db_engine, expire_on_commit=False) as device:
            opened.append(drill.open_planned(device, device.merge(learner), plan))
            device.commit()
    assert opened[0].item.id == opened[1].item.id == plans[0].item.id
    assert count(db_session, OpenItem) == 1


def test_two_devices_answering_one_open_item_store_one_answer(
    db_engine, db_session, learner
):
    """When a phone and a laptop answer the same open item, is one answer kept?"""
    open_item(db_session, learner, "scores-2", now=T0)
    db_session.commit()

    def answer_with(key):
        def answer(session):
            return drill.submit_answer(
                session,
                session.merge(learner),
                "scores-2",
                rating="good",
                idempotency_key=key,
            )

        return answer

    def loser(session):
        with pytest.raises(Conflict, match="not open"):
            answer_with("laptop")(session)
        # ... while the phone's retry gets the phone's answer.
        return answer_with("phone")(session)

    first, retry, waited = run_interleaved(db_engine, answer_with("phone"), loser)
    assert waited
    assert retry.replayed and retry.review.id == first.review.id
    assert count(db_session, Review) == 1


def test_two_explanations_at_once_keep_one_row(db_engine, db_session, learner):
    """Does a double-submitted explanation store one explanation, the latest text?"""
    wrong = record_answer(db_session, learner, "scores-1", graded=WRONG, now=T0)
    db_session.commit()

    def explain_with(text):
        def explain(session):
            return record_explanation(
                session, session.merge(learner), wrong.id, text
            ).id

        return explain

    first, second, waited = run_interleaved(
        db_engine, explain_with("first words"), explain_with("second words")
    )
    assert waited and first == second
    stored = db_session.scalars(select(Explanation)).all()
    assert [e.body for e in stored] == ["second words"]


def test_explanations_follow_wrong_answers_only(db_session, learner):
    """Can a learner explain a wrong answer (and reword it), but not a right one?"""
    wrong = record_answer(db_session, learner, "scores-1", graded=WRONG, now=T0)
    right = record_answer(db_session, learner, "output-1", graded=RIGHT, now=T0)
    first = record_explanation(
        db_session, learner, wrong.id, "  我忘了除以 √d  ", now=T0
    )
    assert first.body == "我忘了除以 √d"
    second = record_explanation(
        db_session,
        learner,
        wrong.id,
        "I forgot to divide by √d",
        now=T0 + timedelta(1),
    )
    assert second.id == first.id and count(db_session, Explanation) == 1
    with pytest.raises(InvalidInput, match="wrong answers"):
        record_explanation(db_session, learner, right.id, "why not", now=T0)
    with pytest.raises(InvalidInput, match="characters"):
        record_explanation(db_session, learner, wrong.id, "   ", now=T0)
    stranger = create_user(db_session, "nosy", now=T0)
    with pytest.raises(NotFound):
        record_explanation(db_session, stranger, wrong.id, "mine?", now=T0)


def test_self_assessments_are_a_history(db_session, learner):
    """Are self-assessments appended (not overwritten) and checked?"""
    record_self_assessment(db_session, learner, "scores", 1, now=T0)
    record_self_assessment(
        db_session, learner, "scores", 3, note=" 能讲清楚 ", now=T0 + timedelta(days=2)
    )
    levels = db_session.execute(
        select(SelfAssessment.level, SelfAssessment.note).order_by(
            SelfAssessment.assessed_at
        )
    ).all()
    assert levels == [(1, None), (3, "能讲清楚")]
    with pytest.raises(InvalidInput):
        record_self_assessment(db_session, learner, "scores", 4, now=T0)
    with pytest.raises(InvalidInput):
        record_self_assessment(db_session, learner, "scores", True, now=T0)
    with pytest.raises(NotFound):
        record_self_assessment(db_session, learner, "juggling", 2, now=T0)


def test_the_open_item_closes_when_it_is_answered(db_session, learner):
    """Is the drill's open item remembered, replaced, and closed by its answer?"""
    open_item(db_session, learner, "scores-1", now=T0)
    opened = open_item(
        db_session,
        learner,
        "weights-1",
        problem_kind="lesson_example",
        problem_seed=7,
        problem_level=2,
        now=T0,
    )
    assert get_open_item(db_session, learner).item_id == "weights-1"
    assert opened.problem_seed == 7
    record_answer(db_session, learner, "scores-1", graded=RIGHT, now=T0)
    assert get_open_item(db_session, learner) is not None  # another item's answer
    record_answer(db_session, learner, "weights-1", graded=RIGHT, now=T0)
    assert get_open_item(db_session, learner) is None
    with pytest.raises(NotFound):
        open_item(db_session, learner, "nothing-here", now=T0)
