"""The bulk demo seeder and `quizsvc demo-data` (each backend)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import func, select

from quizsvc.cli import main
from quizsvc.models import Card, LearnerSettings, Review, User
from quizsvc.scheduling import GradedAnswer
from quizsvc.services import InvalidInput
from quizsvc.services.bank_sync import sync_bank
from quizsvc.services.demo import seed_demo_data
from quizsvc.services.queue import build_daily_queue
from tests.factories import record_answer

T0 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)


def test_seeded_histories_are_consistent_with_their_cards(
    db_engine, db_session, small_bank
):
    """Does every seeded card agree with its own review log, times intact?"""
    sync_bank(db_session, small_bank, now=T0)
    db_session.commit()
    summary = seed_demo_data(db_engine, learners=3, reviews=60, seed=1, now=T0)
    assert (summary.learners, summary.reviews) == (3, 60)
    assert summary.usernames == ("demo-00001", "demo-00002", "demo-00003")
    assert db_session.scalar(select(func.count()).select_from(Review)) == 60
    assert db_session.scalar(select(func.count()).select_from(LearnerSettings)) == 3
    for card in db_session.scalars(select(Card)):
        log = db_session.scalars(
            select(Review).where(Review.card_id == card.id).order_by(Review.reviewed_at)
        ).all()
        assert card.reps == len(log) and log[0].state_before == 0
        assert card.last_review == log[-1].reviewed_at <= T0
        assert card.due == log[-1].due_after and card.state == log[-1].state_after
        assert all(r.reviewed_at.tzinfo is UTC for r in log)
        assert [r.reviewed_at for r in log] == sorted(r.reviewed_at for r in log)


def test_many_reviews_per_card_stay_within_the_span(db_engine, db_session, small_bank):
    """Do hundreds of reviews of the same few cards still fit before now?"""
    sync_bank(db_session, small_bank, now=T0)
    db_session.commit()
    summary = seed_demo_data(db_engine, learners=1, reviews=2_000, now=T0)
    assert summary.reviews == 2_000
    latest = db_session.scalar(select(func.max(Review.reviewed_at)))
    assert latest <= T0


def test_seeded_learners_work_like_any_other(db_engine, db_session, small_bank):
    """Can a seeded learner get a queue and record an answer afterwards?"""
    sync_bank(db_session, small_bank, now=T0)
    db_session.commit()
    seed_demo_data(db_engine, learners=2, reviews=30, now=T0)
    user = db_session.scalar(select(User).where(User.username == "demo-00001"))
    queue = build_daily_queue(db_session, user, T0)
    assert queue
    graded = [e for e in queue if not e.item_id.endswith("-2")]
    result = record_answer(
        db_session, user, graded[0].item_id, graded=GradedAnswer(correct=True), now=T0
    )
    db_session.commit()
    assert result.id > 30  # ids continue after the bulk-written ones


def test_seeding_needs_items_and_fresh_names(db_engine, db_session, small_bank):
    """Is seeding refused before a bank sync, and when the names are taken?"""
    with pytest.raises(InvalidInput, match="questions sync"):
        seed_demo_data(db_engine, learners=1, reviews=5, now=T0)
    sync_bank(db_session, small_bank, now=T0)
    db_session.commit()
    seed_demo_data(db_engine, learners=1, reviews=5, now=T0)
    with pytest.raises(InvalidInput, match="prefix"):
        seed_demo_data(db_engine, learners=1, reviews=5, now=T0)
    seed_demo_data(db_engine, learners=1, reviews=5, prefix="more", now=T0)


def test_demo_data_command_reports_what_it_wrote(db_app, small_bank):
    """Does `quizsvc demo-data` write the learners and reviews it was asked for?"""
    from quizsvc.db import get_session

    runner = db_app.test_cli_runner()
    refused = runner.invoke(main, ["demo-data", "--learners", "2", "--reviews", "10"])
    assert refused.exit_code == 2 and "questions sync" in refused.output
    with db_app.app_context():
        sync_bank(get_session(), small_bank, now=T0)
        get_session().commit()
    result = runner.invoke(main, ["demo-data", "--learners", "4", "--reviews", "100"])
    assert result.exit_code == 0, result.output
    assert "added 4 learners (demo-00001 …)" in result.output
    assert "100 reviews" in result.output
