"""Per-learner FSRS parameters and the `quizsvc fsrs` commands."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import fsrs
import pytest
from click.testing import CliRunner
from sqlalchemy import func, select

from quizsvc import scheduling
from quizsvc.cli import main
from quizsvc.models import Card, FsrsParameters, Review
from quizsvc.services.bank_sync import sync_bank
from quizsvc.services.parameters import current_parameters, optimize_learner
from quizsvc.services.users import create_user

T0 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
REVIEW_LOG = (
    Path(__file__).resolve().parents[2]
    / ".."
    / "shared"
    / "data"
    / "review-log-dev.csv"
)
# A learner whose memories grow much more slowly after each success than
# FSRS-6's defaults assume (w8 and w10 of the stability increase are lower).
FORGETFUL = tuple(
    {8: 1.0, 10: 0.3}.get(i, value)
    for i, value in enumerate(scheduling.DEFAULT_PARAMETERS)
)


@pytest.fixture
def many_items(db_session, make_bank):
    """A bank of 90 numeric items in one lesson, synced."""
    bank = make_bank(
        lessons={"l": {"number": 1}},
        skills={"s": {"lesson": "l", "order": 1}},
        questions={f"q{i:02d}": ("l", "numeric", ["s"]) for i in range(90)},
    )
    sync_bank(db_session, bank, now=T0)
    return list(bank.questions)


def simulate_learner(session, user, item_ids, *, true_parameters, seed=5):
    """Store a history: reviewed when the app scheduled it, remembered as `true_` says.

    Due dates come from the default parameters (what the app used); whether each
    review was remembered is drawn from a memory that follows `true_parameters`.
    """
    rng = random.Random(seed)
    truth = fsrs.Scheduler(parameters=true_parameters, enable_fuzzing=False)
    for index, item_id in enumerate(item_ids):
        card = Card(
            user_id=user.id,
            item_id=item_id,
            state=0,
            due=T0,
            reps=0,
            lapses=0,
            created_at=T0,
            updated_at=T0,
        )
        session.add(card)
        session.flush()
        now = T0 - timedelta(days=200) + timedelta(hours=index * 13)
        live, memory = scheduling.CardState(), fsrs.Card(card_id=1, due=now)
        while now < T0 and live.reps < 14:
            recalled = rng.random() < (
                truth.get_card_retrievability(memory, now) if live.reps else 0.6
            )
            rating = 3 if recalled else 1
            memory, _ = truth.review_card(memory, fsrs.Rating(rating), now)
            before, live = (
                live,
                scheduling.review_card(
                    live, rating, now, seed=scheduling.fuzz_seed(card.id, live.reps)
                ),
            )
            session.add(Review(
                user_id=user.id, item_id=item_id, card_id=card.id, reviewed_at=now,
                rating=rating, rating_source="graded", correct=recalled,
                score=float(recalled), state_before=before.state,
                state_after=live.state, stability_after=live.stability,
                difficulty_after=live.difficulty, due_after=live.due,
            ))  # fmt: skip
            now = live.due + timedelta(hours=rng.uniform(0, 30))
        for name in ("state", "step", "stability", "difficulty", "due", "last_review",
                     "reps", "lapses"):  # fmt: skip
            setattr(card, name, getattr(live, name))
    session.flush()


def cards_of(session, user):
    rows = session.scalars(
        select(Card).where(Card.user_id == user.id).order_by(Card.id)
    )
    return [(c.id, c.state, c.due, c.stability) for c in rows]


def test_parameters_that_predict_better_are_adopted_and_reschedule(
    db_session, many_items
):
    """For a learner who forgets fast, are fitted parameters adopted and cards moved?"""
    user = create_user(db_session, "forgetful", now=T0)
    simulate_learner(db_session, user, many_items, true_parameters=FORGETFUL)
    before = cards_of(db_session, user)
    result = optimize_learner(db_session, user, now=T0)
    db_session.commit()
    assert result.status == "adopted", result
    assert result.log_loss_fitted < result.log_loss_current
    assert result.rescheduled_cards == len(before) == 90
    assert current_parameters(db_session, user) == result.parameters
    stored = db_session.scalars(select(FsrsParameters)).one()
    assert stored.adopted and stored.review_count < result.review_count
    # Each card is now what replaying its log with the new parameters gives.
    db_session.expire_all()
    for card in db_session.scalars(select(Card).where(Card.user_id == user.id)):
        log = db_session.execute(
            select(Review.reviewed_at, Review.rating)
            .where(Review.card_id == card.id)
            .order_by(Review.reviewed_at)
        ).all()
        replayed = scheduling.replay_card(
            log, card_id=card.id, parameters=result.parameters
        )
        assert (card.state, card.due, card.reps) == (
            replayed.state,
            replayed.due,
            replayed.reps,
        )
    assert cards_of(db_session, user) != before
    assert "adopted, 90 cards rescheduled" in result.line()


def test_parameters_that_predict_worse_are_kept_out(db_session, many_items):
    """If the fit predicts the latest reviews worse, are current parameters kept?"""
    user = create_user(db_session, "steady", now=T0)
    simulate_learner(
        db_session, user, many_items, true_parameters=scheduling.DEFAULT_PARAMETERS
    )
    before = cards_of(db_session, user)
    implausible = (100.0, 100.0, 100.0, 100.0, *scheduling.DEFAULT_PARAMETERS[4:])
    result = optimize_learner(
        db_session, user, now=T0, fit=lambda histories, before: implausible
    )
    assert result.status == "kept" and result.rescheduled_cards == 0
    assert result.log_loss_fitted > result.log_loss_current
    assert current_parameters(db_session, user) == scheduling.DEFAULT_PARAMETERS
    attempt = db_session.scalars(select(FsrsParameters)).one()
    assert not attempt.adopted and attempt.log_loss_fitted == result.log_loss_fitted
    assert cards_of(db_session, user) == before


def test_too_few_reviews_are_not_fitted(db_session, many_items):
    """Is a learner with too few reviews left alone, with nothing stored?"""
    user = create_user(db_session, "newbie", now=T0)
    simulate_learner(
        db_session, user, many_items[:3], true_parameters=scheduling.DEFAULT_PARAMETERS
    )
    result = optimize_learner(db_session, user, now=T0)
    assert result.status == "not_enough_reviews"
    assert "not enough" in result.line()
    assert db_session.scalar(select(func.count()).select_from(FsrsParameters)) == 0


# --- the command line ------------------------------------------------------------


def test_optimize_command_reports_both_log_losses(db_app, make_bank):
    """Does `fsrs optimize` print the current and fitted log loss and the verdict?"""
    from quizsvc.db import get_session

    with db_app.app_context():
        session = get_session()
        sync_bank(session, make_bank(
            lessons={"l": {"number": 1}},
            skills={"s": {"lesson": "l", "order": 1}},
            questions={f"q{i:02d}": ("l", "numeric", ["s"]) for i in range(90)},
        ), now=T0)  # fmt: skip
        forgetful = create_user(session, "forgetful", now=T0)
        simulate_learner(
            session,
            forgetful,
            [f"q{i:02d}" for i in range(90)],
            true_parameters=FORGETFUL,
        )
        newbie = create_user(session, "newbie", now=T0)
        simulate_learner(session, newbie, ["q00"], true_parameters=FORGETFUL)
        session.commit()
    runner = db_app.test_cli_runner()
    one = runner.invoke(main, ["fsrs", "optimize", "--learner", "forgetful"])
    assert one.exit_code == 0, one.output
    assert "current 0." in one.output and "fitted 0." in one.output
    assert "adopted" in one.output
    everyone = runner.invoke(main, ["fsrs", "optimize", "--all"])
    assert everyone.exit_code == 0, everyone.output
    lines = everyone.output.splitlines()
    assert lines[0].startswith("forgetful:") and lines[1].startswith("newbie:")
    assert "not enough" in lines[1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "either --learner NAME or --all"),
        (["--learner", "x", "--all"], "either --learner NAME or --all"),
        (["--learner", "nobody"], "no learner 'nobody'"),
    ],
)
def test_optimize_command_refuses_bad_requests(db_app, args, message):
    """Are a missing, doubled or unknown learner refused with exit code 2?"""
    result = db_app.test_cli_runner().invoke(main, ["fsrs", "optimize", *args])
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output


def test_evaluate_command_scores_three_models_on_the_shared_log():
    """Does `fsrs evaluate` print default, fitted and SM-2 lines with both metrics?"""
    if not REVIEW_LOG.exists():
        pytest.skip(f"the shared review log is not at {REVIEW_LOG}")
    result = CliRunner().invoke(main, ["fsrs", "evaluate", "--csv", str(REVIEW_LOG)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("7631 reviews of 723 cards")
    assert [line.split()[0] for line in lines[1:]] == ["default", "fitted", "SM-2"]
    losses = {
        line.split()[0]: float(line.split("log loss")[1].split()[0])
        for line in lines[1:]
    }
    assert losses["default"] < losses["SM-2"] and losses["fitted"] < losses["SM-2"]
    assert all("RMSE(bins) 0." in line for line in lines[1:])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("card,rating\n1,3\n", "header lacks"),
        (
            "card_id,review_rating,review_time,review_duration\n1,7,2024-01-01T00:00Z,5\n",
            "line 2: review_rating must be 1-4",
        ),
        (
            "card_id,review_rating,review_time,review_duration\n1,3,yesterday,5\n",
            "line 2",
        ),
        (
            "card_id,review_rating,review_time,review_duration\n1,3,2024-01-01T00:00,5\n",
            "UTC offset",
        ),
        ("card_id,review_rating,review_time,review_duration\n", "no rows"),
        (
            "card_id,review_rating,review_time,review_duration\n"
            "1,3,2024-01-01T00:00+00:00,5\n",
            "too few reviews",
        ),
    ],
)
def test_evaluate_command_explains_a_bad_log(tmp_path, content, message):
    """Is a malformed review log refused in one line, naming the problem?"""
    path = tmp_path / "log.csv"
    path.write_text(content)
    result = CliRunner().invoke(main, ["fsrs", "evaluate", "--csv", str(path)])
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output
