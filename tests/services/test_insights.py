"""quizsvc.services.insights: calibration, calendar, forecast and recent mistakes."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from quizsvc import scheduling
from quizsvc.models import Card, Item
from quizsvc.services import insights
from quizsvc.services.bank_sync import sync_bank
from quizsvc.services.self_assessments import record_self_assessment
from quizsvc.services.settings import update_settings
from quizsvc.services.users import create_user
from quizsvc.web.charts import calendar_level
from tests.factories import real_bank as loaded_bank
from tests.factories import record_answer

# A Monday noon in Shanghai (04:00 UTC), far from any daylight-saving change.
NOW = datetime(2025, 3, 10, 4, 0, tzinfo=UTC)

levels = st.integers(min_value=0, max_value=3)
shares = st.floats(min_value=0, max_value=1)


# --- calibration (pure) ---------------------------------------------------------


def test_unrated_skills_are_not_judged():
    assert insights.calibrate(None, 0.1, 0.1, 20) == "not_rated"


def test_a_rating_without_any_record_cannot_be_compared():
    assert insights.calibrate(2, None, None, 0) == "no_record"
    # Two answers are too few to call an accuracy anything.
    assert insights.calibrate(2, None, 0.0, 2) == "no_record"


def test_closed_book_rating_with_weak_answers_is_overrated():
    assert insights.calibrate(2, 0.9, 0.4, 10) == "overrated"
    assert insights.calibrate(3, 0.5, None, 0) == "overrated"


def test_a_record_is_judged_by_its_recall_seven_days_ahead():
    """Minutes after practice recall now is ~1 and would back any rating; the
    verdict uses the recall the page shows, RECALL_HORIZON_DAYS ahead."""
    fresh = insights.SkillRecord(
        skill_id="scores",
        title={},
        cards=1,
        mean_retrievability=0.999,
        recent_answers=1,
        recent_correct=1,
        self_level=3,
        recall_at_horizon=0.5,
    )
    assert fresh.calibration == "overrated"
    solid = insights.SkillRecord(**{**fresh.__dict__, "recall_at_horizon": 0.95})
    assert solid.calibration == "consistent"
    # Without a prediction (no card scheduled yet) the raw value still counts.
    older = insights.SkillRecord(**{**fresh.__dict__, "recall_at_horizon": None})
    assert older.calibration == "consistent"


def test_teaching_it_asks_for_a_stronger_record_than_closed_book():
    assert insights.calibrate(2, 0.7, 0.7, 10) == "consistent"
    assert insights.calibrate(3, 0.7, 0.7, 10) == "overrated"


def test_low_rating_with_a_strong_record_is_underrated():
    assert insights.calibrate(1, 0.95, 0.9, 10) == "underrated"
    assert insights.calibrate(0, 0.9, None, 0) == "underrated"
    assert insights.calibrate(1, 0.95, 0.5, 10) == "consistent"


@settings(max_examples=300, deadline=None)
@given(levels, st.none() | shares, st.none() | shares, st.integers(0, 40))
def test_calibration_only_flags_the_direction_the_rating_points(
    level, retrievability, accuracy, answers
):
    """Is a low rating never "overrated", nor a high one "underrated"?"""
    verdict = insights.calibrate(level, retrievability, accuracy, answers)
    if level < insights.CLOSED_BOOK_LEVEL:
        assert verdict != "overrated"
    else:
        assert verdict != "underrated"


@settings(max_examples=300, deadline=None)
@given(levels, shares, shares, shares)
def test_a_better_record_never_makes_a_rating_look_more_overrated(
    level, retrievability, accuracy, boost
):
    """Raising both measures can clear "overrated" but never cause it."""
    before = insights.calibrate(level, retrievability, accuracy, 10)
    after = insights.calibrate(
        level, min(1, retrievability + boost), min(1, accuracy + boost), 10
    )
    if before != "overrated":
        assert after != "overrated"
    if before == "underrated":
        assert after == "underrated"


# --- day buckets and calendar shades (pure) -------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(1, 36 * 3600), min_size=1, max_size=8, unique=True),
    st.lists(st.integers(-48 * 3600, 400 * 3600), max_size=60),
)
def test_every_moment_lands_in_the_day_that_contains_it(lengths, offsets):
    """Does bucket_by_day count each moment once, in its own day, and drop others?"""
    origin = np.datetime64("2025-01-01T00:00:00", "s")
    edges = np.concatenate([[0], np.cumsum(lengths)])
    starts = (origin + edges.astype("timedelta64[s]")).astype("datetime64[us]")
    moments = (origin + np.array(offsets, dtype="timedelta64[s]")).astype(
        "datetime64[us]"
    )
    counts = insights.bucket_by_day(moments, starts)
    expected = [
        sum(1 for x in offsets if edges[i] <= x < edges[i + 1])
        for i in range(len(lengths))
    ]
    assert counts.tolist() == expected


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 500), st.integers(0, 500))
def test_calendar_shades_grow_with_the_count(count, busiest):
    busiest = max(busiest, count)
    level = calendar_level(count, busiest)
    assert (level == 0) == (count == 0)
    assert level <= calendar_level(busiest, busiest)
    if count:
        assert calendar_level(busiest, busiest) == 4
        assert level <= calendar_level(min(count + 1, busiest), busiest)


# --- from the database -------------------------------------------------------------


@pytest.fixture
def real_bank():
    return loaded_bank()


@pytest.fixture
def session(db_session, real_bank):
    sync_bank(db_session, real_bank, now=NOW - timedelta(days=400))
    db_session.commit()
    return db_session


@pytest.fixture
def learner(session):
    user = create_user(session, "ana", now=NOW - timedelta(days=200))
    update_settings(
        session,
        user,
        timezone="Asia/Shanghai",
        rollover_hour=4,
        now=NOW - timedelta(days=200),
    )
    session.commit()
    return user


def graded_items(real_bank, skill_id: str) -> list[str]:
    """Auto-graded items whose only skill is `skill_id`."""
    return [
        q.id
        for q in real_bank.questions_for_skill(skill_id)
        if q.skills == (skill_id,) and q.type not in ("recall", "generated")
    ]


def answer(session, user, item_id, at, *, correct=True, misconception=None, **extra):
    return record_answer(
        session,
        user,
        item_id,
        graded=scheduling.GradedAnswer(correct=correct),
        misconception=misconception,
        now=at,
        **extra,
    )


def test_recent_accuracy_counts_the_last_30_days_only(session, learner, real_bank):
    item = graded_items(real_bank, "temperature")[0]
    answer(session, learner, item, NOW - timedelta(days=45), correct=False)
    for days in (20, 10, 1):
        answer(session, learner, item, NOW - timedelta(days=days), correct=days != 10)
    records = {r.skill_id: r for r in insights.skill_records(session, learner, NOW)}
    record = records["temperature"]
    assert (record.recent_answers, record.recent_correct) == (3, 2)
    assert record.recent_accuracy == pytest.approx(2 / 3)
    assert record.cards == 1 and 0 < record.mean_retrievability <= 1
    assert records["scores"].recent_answers == 0
    assert records["scores"].recent_accuracy is None


def test_recent_accuracy_keeps_only_the_latest_answers(session, learner, real_bank):
    item = graded_items(real_bank, "temperature")[0]
    extra = insights.RECENT_ANSWERS_PER_SKILL
    for n in range(extra + 5):
        # The five oldest are wrong; the latest RECENT_ANSWERS_PER_SKILL right.
        answer(
            session, learner, item, NOW - timedelta(hours=extra + 5 - n), correct=n >= 5
        )
    record = {r.skill_id: r for r in insights.skill_records(session, learner, NOW)}
    assert record["temperature"].recent_answers == extra
    assert record["temperature"].recent_accuracy == 1.0


def test_history_keeps_the_latest_few_per_skill_newest_first(session, learner):
    other = create_user(session, "bo")
    for n in range(7):
        record_self_assessment(
            session, learner, "scores", n % 4, now=NOW - timedelta(days=10 - n)
        )
    record_self_assessment(session, learner, "softmax", 2, note="ok", now=NOW)
    record_self_assessment(session, other, "scores", 3, now=NOW)
    history = insights.self_assessment_history(session, learner, per_skill=5)
    assert [a.level for a in history["scores"]] == [2, 1, 0, 3, 2]
    assert [a.assessed_at for a in history["scores"]] == sorted(
        (a.assessed_at for a in history["scores"]), reverse=True
    )
    assert [a.note for a in history["softmax"]] == ["ok"]
    assert all(a.user_id == learner.id for a in history["scores"])


def test_overview_pairs_bank_skills_with_record_and_ratings(
    session, learner, real_bank
):
    item = graded_items(real_bank, "temperature")[0]
    for days in (3, 2, 1):
        answer(session, learner, item, NOW - timedelta(days=days), correct=False)
    record_self_assessment(session, learner, "temperature", 3, now=NOW)
    overview = insights.skill_overview(session, learner, real_bank.skills.values(), NOW)
    by_id = {entry.skill.id: entry for entry in overview}
    assert [entry.skill.id for entry in overview] == list(real_bank.skills)
    assert by_id["temperature"].latest.level == 3
    assert by_id["temperature"].calibration == "overrated"
    assert by_id["scores"].calibration == "not_rated"


def test_calendar_counts_learner_days_in_their_zone(session, learner, real_bank):
    """Does a 01:30 answer (before the 04:00 rollover) count for the day before?"""
    item = graded_items(real_bank, "temperature")[0]
    shanghai = timedelta(hours=8)
    # Sunday 9 March, 23:00 and Monday 10 March, 01:30 local: both Sunday's.
    answer(session, learner, item, datetime(2025, 3, 9, 23, 0, tzinfo=UTC) - shanghai)
    answer(session, learner, item, datetime(2025, 3, 10, 1, 30, tzinfo=UTC) - shanghai)
    # Monday 10 March, 05:00 local: Monday's.
    answer(session, learner, item, datetime(2025, 3, 10, 5, 0, tzinfo=UTC) - shanghai)
    # 13 weeks ago: before the calendar.
    answer(session, learner, item, NOW - timedelta(weeks=13))
    calendar = insights.review_calendar(session, learner, NOW)
    counts = dict(zip(calendar.days, calendar.counts, strict=True))
    assert calendar.today == date(2025, 3, 10)
    assert calendar.days[0] == date(2024, 12, 23)  # a Monday, 11 weeks earlier
    assert calendar.days[0].weekday() == 0 and calendar.days[-1] == calendar.today
    assert counts[date(2025, 3, 9)] == 2 and counts[date(2025, 3, 10)] == 1
    assert calendar.total == 3 and calendar.active_days == 2
    assert calendar.to_dict()["days"][-1] == {"date": "2025-03-10", "count": 1}


def test_calendar_ends_on_today_midweek(session, learner):
    thursday = NOW + timedelta(days=3)
    calendar = insights.review_calendar(session, learner, thursday)
    assert calendar.days[-1] == date(2025, 3, 13)
    assert len(calendar.days) == 11 * 7 + 4
    assert calendar.total == 0


def test_forecast_puts_overdue_cards_on_today(session, learner, real_bank):
    items = (
        graded_items(real_bank, "temperature")[:3]
        + graded_items(real_bank, "scores")[:1]
    )
    for item in items:
        answer(session, learner, item, NOW - timedelta(days=30))
    due = {
        items[0]: NOW - timedelta(days=2),  # overdue: today
        items[1]: NOW + timedelta(hours=10),  # 14:00 local+10h: still today
        items[2]: NOW + timedelta(days=3),
        items[3]: NOW + timedelta(days=30),
    }  # beyond the forecast
    for card in session.scalars(select(Card).where(Card.user_id == learner.id)):
        card.due = due[card.item_id]
    session.flush()
    forecast = insights.due_forecast(session, learner, NOW)
    assert forecast.days[0] == date(2025, 3, 10) and len(forecast.days) == 14
    assert forecast.due[0] == 2 and forecast.due[3] == 1 and sum(forecast.due) == 3
    assert forecast.to_dict()[3] == {"date": "2025-03-13", "due": 1}


def test_forecast_leaves_out_retired_items(session, learner, real_bank):
    item = graded_items(real_bank, "temperature")[0]
    answer(session, learner, item, NOW - timedelta(days=30))
    session.get(Item, item).retired_at = NOW - timedelta(days=1)
    session.flush()
    assert sum(insights.due_forecast(session, learner, NOW).due) == 0


def test_mistakes_are_grouped_most_frequent_first(session, learner, real_bank):
    item = graded_items(real_bank, "temperature")[0]
    other = graded_items(real_bank, "scores")[0]
    answer(
        session,
        learner,
        item,
        NOW - timedelta(days=40),
        correct=False,
        misconception="mask_ignored",
    )  # too old
    for hours in (5, 4, 3, 2):
        answer(
            session,
            learner,
            item,
            NOW - timedelta(hours=hours),
            correct=False,
            misconception="no_scale",
        )
    answer(
        session,
        learner,
        other,
        NOW - timedelta(hours=1),
        correct=False,
        misconception="softmax_over_queries",
    )
    answer(session, learner, other, NOW - timedelta(minutes=30), correct=False)
    answer(session, learner, other, NOW - timedelta(minutes=10), correct=True)
    mistakes = insights.recent_mistakes(session, learner, NOW, examples=3)
    assert [g.misconception for g in mistakes.groups] == [
        "no_scale",
        "softmax_over_queries",
    ]
    first = mistakes.groups[0]
    assert first.count == 4 and len(first.examples) == 3
    assert first.examples[0].reviewed_at == NOW - timedelta(hours=2)
    assert (mistakes.total, mistakes.unnamed) == (6, 1)


def test_mistake_examples_keep_the_generated_problem(session, learner, real_bank):
    generated = next(q for q in real_bank.questions.values() if q.type == "generated")
    answer(
        session,
        learner,
        generated.id,
        NOW - timedelta(hours=1),
        correct=False,
        misconception="no_scale",
        problem_kind=generated.data["kind"],
        problem_level=generated.data["level"],
        problem_seed=42,
    )
    example = insights.recent_mistakes(session, learner, NOW).groups[0].examples[0]
    assert example.to_dict()["problem"] == {
        "kind": generated.data["kind"],
        "level": generated.data["level"],
        "seed": 42,
    }


def test_report_counts_every_answer_of_this_learner_only(session, learner, real_bank):
    item = graded_items(real_bank, "temperature")[0]
    other = create_user(session, "bo")
    for days in (200, 2, 1):
        answer(session, learner, item, NOW - timedelta(days=days))
    answer(session, other, item, NOW - timedelta(days=1))
    report = insights.progress_report(session, learner, NOW)
    assert report.reviews_total == 3
    assert report.calendar.total == 2
    assert report.streak == 2  # yesterday and the day before; today still open
