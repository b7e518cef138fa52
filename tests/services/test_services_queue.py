"""The daily queue and progress, read from the database (each backend)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from sqlalchemy import event

from quizsvc import scheduling
from quizsvc.models import BankVersion, Card, FsrsParameters
from quizsvc.scheduling import GradedAnswer
from quizsvc.services.bank_sync import sync_bank
from quizsvc.services.progress import card_retrievability, skill_progress
from quizsvc.services.queue import build_daily_queue
from quizsvc.services.self_assessments import record_self_assessment
from quizsvc.services.settings import update_settings
from quizsvc.services.users import create_user
from tests.factories import record_answer

# 08:00 UTC is 16:00 in Shanghai, the learners' time zone.
T0 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
RIGHT = GradedAnswer(correct=True)


@pytest.fixture
def learner(db_session, small_bank):
    sync_bank(db_session, small_bank, now=T0)
    user = create_user(db_session, "qiu", timezone="Asia/Shanghai", now=T0)
    db_session.commit()
    return user


def answer(session, user, item_id, now, right=True):
    if item_id.startswith(("shapes-2", "scores-2")):
        return record_answer(
            session, user, item_id, self_rating="good" if right else "again", now=now
        )
    graded = RIGHT if right else GradedAnswer(correct=False, score=0.0)
    return record_answer(session, user, item_id, graded=graded, now=now)


def ids(entries):
    return [entry.item_id for entry in entries]


def test_a_new_learner_starts_with_the_first_lessons_new_items(db_session, learner):
    """Before lesson 15 is started, are only its items offered (16 needs 15)?"""
    entries = build_daily_queue(db_session, learner, T0)
    assert ids(entries) == ["shapes-1", "shapes-2"]
    assert {e.kind for e in entries} == {"new"}


def test_the_next_lesson_opens_in_skill_order(db_session, learner):
    """Once lesson 15 is introduced, does 16 come scores, then weights, then output?"""
    for item in ("shapes-1", "shapes-2"):
        answer(db_session, learner, item, T0)
    queue = build_daily_queue(db_session, learner, T0 + timedelta(hours=1))
    fresh = [e for e in queue if e.kind == "new"]
    assert list(dict.fromkeys(e.skill_id for e in fresh)) == [
        "scores",
        "weights",
        "output",
    ]
    # The two shapes steps due again are spread between the new items, the one
    # just answered (shapes-2) last, and never right after shapes.
    assert [e.skill_id for e in queue[:3]] == ["scores", "shapes", "scores"]
    assert queue[-1].item_id == "shapes-2"


def test_due_reviews_come_before_new_items(db_session, learner):
    """Days later, are the due cards offered first, least remembered first?"""
    for start, item in enumerate(["shapes-1", "shapes-2", "scores-1", "weights-1"]):
        first = T0 + timedelta(days=start)
        for minutes in (0, 1, 12):
            answer(db_session, learner, item, first + timedelta(minutes=minutes))
    entries = build_daily_queue(db_session, learner, T0 + timedelta(days=40))
    reviews = [e for e in entries if e.kind == "review"]
    assert len(reviews) == 4 and entries[:4] == reviews
    # The card answered longest ago is the least remembered.
    assert reviews[0].item_id == "shapes-1"
    assert reviews[0].retrievability == min(e.retrievability for e in reviews)
    assert all(0 < e.retrievability < 1 for e in reviews)


def test_daily_new_limit_counts_the_learners_own_day(db_session, learner):
    """Do items introduced earlier the same local day count against the new limit?"""
    update_settings(db_session, learner, new_per_day=3, rollover_hour=4, now=T0)
    for item in ("shapes-1", "shapes-2"):
        answer(db_session, learner, item, T0)  # 16:00 Shanghai, 2 March
    evening = T0 + timedelta(hours=5)  # 21:00 the same learner day
    assert [e.kind for e in build_daily_queue(db_session, learner, evening)].count(
        "new"
    ) == 1
    next_morning = T0 + timedelta(hours=13)  # 05:00 on 3 March: a new day
    assert [e.kind for e in build_daily_queue(db_session, learner, next_morning)].count(
        "new"
    ) == 3


def test_review_limit_caps_the_whole_day(db_session, learner):
    """With a review limit of one, is one item offered, and none once it is done?"""
    update_settings(db_session, learner, reviews_per_day=1, now=T0)
    assert len(build_daily_queue(db_session, learner, T0)) == 1
    answer(db_session, learner, "shapes-1", T0)
    assert build_daily_queue(db_session, learner, T0 + timedelta(minutes=30)) == []


def test_retired_items_leave_the_queue(db_session, learner, small_bank):
    """When a question leaves the bank, does it stop being offered?"""
    import dataclasses

    questions = {k: v for k, v in small_bank.questions.items() if k != "shapes-1"}
    sync_bank(db_session, dataclasses.replace(small_bank, questions=questions), now=T0)
    assert ids(build_daily_queue(db_session, learner, T0)) == ["shapes-2"]


def test_the_queue_reads_a_fixed_number_of_statements(db_session, db_engine, learner):
    """Does the queue cost the same few queries however much history there is?"""
    statements = []

    def remember(_conn, _cursor, statement, *_args):
        if statement.lstrip().upper().startswith("SELECT"):
            statements.append(statement)

    event.listen(db_engine, "before_cursor_execute", remember)
    # The first call in a process reads the bank's lessons and items too
    # (quizsvc.services.bank_cache); later ones only check its version. (The
    # shared PostgreSQL test schema is emptied between tests, version row too.)
    db_session.merge(BankVersion(id=1, token=12345, changed_at=T0))
    build_daily_queue(db_session, learner, T0)
    db_session.commit()
    statements.clear()
    build_daily_queue(db_session, learner, T0)
    few = len(statements)
    for minute, item in enumerate(["shapes-1", "shapes-2"] * 3):
        answer(db_session, learner, item, T0 + timedelta(minutes=minute))
    statements.clear()
    build_daily_queue(db_session, learner, T0 + timedelta(days=3))
    # Not more than before (the settings read first may be remembered since).
    assert len(statements) <= few <= 5, statements


def test_the_learners_cards_are_found_through_an_index_of_theirs(
    db_session, db_engine, learner
):
    """Does SQLite read the queue's cards (the learner's own, at most one per
    bank item) through an index that starts with the user, not by a scan?"""
    if db_engine.dialect.name != "sqlite":
        pytest.skip("query plans are checked on SQLite; PostgreSQL plans by statistics")
    seen = []

    def remember(_conn, _cursor, statement, parameters, *_args):
        if "FROM cards" in statement and "cards.user_id = ?" in statement:
            seen.append((statement, parameters))

    event.listen(db_engine, "before_cursor_execute", remember)
    build_daily_queue(db_session, learner, T0)
    ((statement, parameters),) = seen
    plan = (
        db_session.connection()
        .exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters)
        .all()
    )
    cards_step = [str(row) for row in plan if "cards" in str(row)]
    assert cards_step and all(
        "INDEX" in row and "user_id=?" in row for row in cards_step
    ), plan


def test_card_retrievability_matches_py_fsrs_for_a_class(db_session, learner):
    """For several learners at once, is each card's recall py-fsrs's number?"""
    other = create_user(db_session, "ren", now=T0)
    for user in (learner, other):
        for item in ("shapes-1", "shapes-2"):
            answer(db_session, user, item, T0)
            answer(db_session, user, item, T0 + timedelta(minutes=12), right=True)
    # The other learner forgets faster (a steeper fitted curve).
    faster = list(scheduling.DEFAULT_PARAMETERS)
    faster[20] = 0.5
    db_session.add(
        FsrsParameters(
            user_id=other.id,
            parameters=faster,
            fitted_at=T0,
            review_count=400,
            log_loss_current=0.4,
            log_loss_fitted=0.3,
            adopted=True,
        )
    )
    db_session.flush()
    now = T0 + timedelta(days=9, hours=3)
    recall = card_retrievability(db_session, [learner.id, other.id], now)
    assert len(recall.card_id) == 4
    for user_id, card_id, value in zip(
        recall.user_id, recall.card_id, recall.retrievability, strict=True
    ):
        card = db_session.get(Card, int(card_id))
        params = faster if user_id == other.id else scheduling.DEFAULT_PARAMETERS
        import fsrs

        expected = fsrs.Scheduler(parameters=params).get_card_retrievability(
            fsrs.Card(
                card_id=1,
                state=fsrs.State(card.state),
                stability=card.stability,
                difficulty=card.difficulty,
                last_review=card.last_review,
            ),
            now,
        )
        assert value == pytest.approx(expected, abs=1e-9)
    assert np.all(recall.retrievability < 1)


def test_skill_progress_combines_recall_and_self_assessment(db_session, learner):
    """Does each skill show its cards' mean recall and the latest self-rating?"""
    answer(db_session, learner, "shapes-1", T0)
    record_self_assessment(db_session, learner, "shapes", 1, now=T0)
    record_self_assessment(db_session, learner, "shapes", 2, now=T0 + timedelta(1))
    progress = {
        p.skill_id: p
        for p in skill_progress(db_session, learner, T0 + timedelta(days=2))
    }
    assert list(progress) == ["shapes", "scores", "weights", "output"]
    assert progress["shapes"].cards == 1 and progress["shapes"].self_assessment == 2
    assert 0 < progress["shapes"].mean_retrievability <= 1
    assert (
        progress["scores"].cards == 0 and progress["scores"].mean_retrievability is None
    )
