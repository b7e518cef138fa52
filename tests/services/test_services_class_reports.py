"""What the class dashboard reports, checked against the learners' own views."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import event

from quizsvc import scheduling
from quizsvc.services import InvalidInput, class_reports, insights
from quizsvc.services.bank_sync import sync_bank
from quizsvc.services.classes import create_class, join_class
from quizsvc.services.drill import learning_streak
from quizsvc.services.progress import skill_progress
from quizsvc.services.reviews import record_explanation
from quizsvc.services.self_assessments import record_self_assessment
from quizsvc.services.users import create_user
from tests.factories import record_answer

NOW = datetime(2026, 11, 20, 6, 0, tzinfo=UTC)


def answer(session, user, item, correct, ago, **extra):
    return record_answer(
        session,
        user,
        item,
        graded=scheduling.GradedAnswer(correct=correct),
        now=NOW - ago,
        **extra,
    )


@pytest.fixture
def room(db_session, small_bank):
    """A class of three learners with histories, and an outsider with one too."""
    sync_bank(db_session, small_bank, now=NOW - timedelta(days=60))
    teacher = create_user(db_session, "wang", role="teacher")
    classroom = create_class(db_session, teacher, "班", now=NOW - timedelta(days=50))
    people = {
        name: create_user(db_session, name) for name in ("ana", "bo", "cy", "eve")
    }
    for number, name in enumerate(("ana", "bo", "cy"), 1):
        code = classroom.join_code
        join_class(db_session, people[name], code, student_number=f"0{number}",
                   now=NOW - timedelta(days=45))  # fmt: skip
    day = timedelta(days=1)
    ana, bo, eve = people["ana"], people["bo"], people["eve"]
    answer(db_session, ana, "scores-1", False, 40 * day, misconception="no_scale",
           answer_text="[1 0]", duration_ms=4000)  # fmt: skip
    answer(db_session, ana, "scores-1", True, 20 * day, duration_ms=2000)
    wrong = answer(db_session, ana, "weights-1", False, 2 * day,
                   misconception="no_scale", duration_ms=9000,
                   problem_kind="weights", problem_seed=7, problem_level=1)  # fmt: skip
    record_explanation(db_session, ana, wrong.id, "忘了除以 √d <b>", now=NOW - 2 * day)
    answer(db_session, ana, "output-1", True, timedelta(hours=20), duration_ms=1000)
    answer(db_session, ana, "output-1", True, timedelta(hours=2), duration_ms=3000)
    answer(db_session, bo, "scores-1", False, 3 * day, misconception="transposed",
           duration_ms=5000)  # fmt: skip
    answer(db_session, bo, "scores-1", True, 1 * day, duration_ms=6000)
    answer(db_session, eve, "scores-1", False, 1 * day, misconception="no_scale")
    record_self_assessment(db_session, ana, "scores", 3, now=NOW - 30 * day)
    record_self_assessment(db_session, ana, "weights", 3, now=NOW - day)
    record_self_assessment(db_session, bo, "scores", 0, now=NOW - day)
    db_session.commit()
    return classroom, people


def test_overview_rows_count_each_learners_answers(db_session, room):
    classroom, people = room
    overview = class_reports.class_overview(db_session, classroom, now=NOW)
    rows = {row.username: row for row in overview.rows}
    assert [row.username for row in overview.rows] == ["ana", "bo", "cy"]
    ana, bo, cy = rows["ana"], rows["bo"], rows["cy"]
    assert (ana.reviews_7d, ana.reviews_30d, ana.reviews_in_period) == (3, 4, 5)
    assert ana.correct_in_period == 3 and ana.accuracy == pytest.approx(0.6)
    assert ana.last_active == NOW - timedelta(hours=2)
    assert (bo.reviews_7d, bo.accuracy) == (2, 0.5)
    assert (cy.reviews_30d, cy.accuracy, cy.last_active, cy.mean_recall) == (
        0,
        None,
        None,
        None,
    )
    assert cy.streak == 0 and cy.cards == 0


def test_streaks_and_recall_agree_with_the_learners_own_pages(db_session, room):
    """Is each row's streak the Today page's, and its recall the progress page's?"""
    classroom, people = room
    for now in (NOW, NOW + timedelta(hours=22), NOW + timedelta(days=3)):
        overview = class_reports.class_overview(db_session, classroom, now=now)
        for row in overview.rows:
            user = people[row.username]
            assert row.streak == learning_streak(db_session, user, now), row.username
            own = {p.skill_id: p for p in skill_progress(db_session, user, now)}
            for j, skill in enumerate(overview.heatmap.skills):
                i = overview.heatmap.user_ids.index(row.user_id)
                # Both show recall RECALL_HORIZON_DAYS ahead, not "now".
                mine = own[skill.id].recall_at_horizon
                cell = overview.heatmap.recall[i, j]
                assert (mine is None and np.isnan(cell)) or cell == pytest.approx(mine)


def test_overdue_counts_started_cards_past_due(db_session, room):
    classroom, _people = room
    later = NOW + timedelta(days=365)
    rows = class_reports.class_overview(db_session, classroom, now=later).rows
    assert {row.username: row.overdue for row in rows} == {"ana": 3, "bo": 1, "cy": 0}


def test_a_period_limits_accuracy_to_its_days(db_session, room):
    classroom, _people = room
    period = class_reports.parse_period(
        (NOW - timedelta(days=3)).date().isoformat(), NOW.date().isoformat(), "UTC"
    )
    rows = class_reports.class_overview(db_session, classroom, period=period, now=NOW)
    ana = next(row for row in rows.rows if row.username == "ana")
    assert (ana.reviews_in_period, ana.correct_in_period) == (3, 2)


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [
        ("2026-13-01", "", "not a date"),
        ("yesterday", "", "not a date"),
        ("2026-11-02", "2026-11-01", "after the end"),
    ],
)
def test_bad_periods_are_refused(start, end, message):
    with pytest.raises(InvalidInput, match=message):
        class_reports.parse_period(start, end, "Asia/Shanghai")


def test_a_period_covers_whole_days_in_the_class_time_zone():
    period = class_reports.parse_period("2026-11-01", "2026-11-01", "Asia/Shanghai")
    assert period.bounds() == (
        datetime(2026, 10, 31, 16, tzinfo=UTC),
        datetime(2026, 11, 1, 16, tzinfo=UTC),
    )


def test_misconceptions_are_counted_per_skill_and_learner_in_the_class_only(
    db_session, room
):
    classroom, people = room
    reports = class_reports.class_misconceptions(db_session, classroom)
    assert [(r.misconception, r.count) for r in reports] == [
        ("no_scale", 2),
        ("transposed", 1),
    ]
    no_scale = reports[0]
    assert no_scale.by_skill == {"scores": 1, "weights": 1}
    assert no_scale.by_learner == {people["ana"].id: 2}  # not eve: not in the class
    newest = no_scale.examples[0]
    assert (newest.problem_kind, newest.problem_seed, newest.problem_level) == (
        "weights",
        7,
        1,
    )
    assert [e.reviewed_at for e in no_scale.examples] == sorted(
        (e.reviewed_at for e in no_scale.examples), reverse=True
    )


def test_items_report_first_try_accuracy_lapses_and_median_time(db_session, room):
    classroom, _people = room
    reports = {r.item_id: r for r in class_reports.class_items(db_session, classroom)}
    scores = reports["scores-1"]
    assert (scores.attempts, scores.first_tries, scores.first_try_correct) == (4, 2, 0)
    assert scores.median_ms == 4500  # 2000, 4000, 5000, 6000
    output = reports["output-1"]
    assert (output.first_try_accuracy, output.median_ms) == (1.0, 2000)
    order = list(reports)
    assert order.index("scores-1") < order.index("output-1")  # hardest first


def test_explanations_are_the_class_learners_newest_first(db_session, room):
    classroom, people = room
    entries = class_reports.class_explanations(db_session, classroom)
    assert [(e.user_id, e.body) for e in entries] == [
        (people["ana"].id, "忘了除以 √d <b>")
    ]
    assert class_reports.group_by_item(entries)[0][0] == "weights-1"


def test_calibration_matches_each_learners_self_assessment_page(db_session, room):
    """Does the class view give the verdicts the learners see themselves?"""
    classroom, people = room
    report = class_reports.class_calibration(db_session, classroom, now=NOW)
    for i, user_id in enumerate(report.user_ids):
        user = next(u for u in people.values() if u.id == user_id)
        own = {r.skill_id: r for r in insights.skill_records(db_session, user, NOW)}
        for j, skill in enumerate(report.skills):
            cell = report.cells[i][j]
            assert cell.verdict == own[skill.id].calibration, (user.username, skill.id)
            assert cell.level == own[skill.id].self_level
            assert cell.recent_answers == own[skill.id].recent_answers
    ana = report.user_ids.index(people["ana"].id)
    weights = [s.id for s in report.skills].index("weights")
    assert report.cells[ana][weights].verdict == "overrated"


def test_reports_cost_the_same_queries_for_any_class_size(db_session, db_engine, room):
    """Are the dashboard's queries set-based (no query per learner)?"""
    classroom, people = room

    def statements() -> int:
        seen = []
        listener = lambda *args: seen.append(1)  # noqa: E731
        event.listen(db_engine, "before_cursor_execute", listener)
        try:
            class_reports.class_overview(db_session, classroom, now=NOW)
            class_reports.class_misconceptions(db_session, classroom)
            class_reports.class_items(db_session, classroom)
            class_reports.class_calibration(db_session, classroom, now=NOW)
        finally:
            event.remove(db_engine, "before_cursor_execute", listener)
        return len(seen)

    before = statements()
    for n in range(6):
        user = create_user(db_session, f"extra{n}")
        join_class(db_session, user, classroom.join_code)
        answer(db_session, user, "scores-1", n % 2 == 0, timedelta(days=n + 1))
    db_session.commit()
    assert statements() == before


@given(st.dates(date(2000, 1, 1), date(2100, 1, 1)), st.integers(0, 400))
def test_any_ordered_pair_of_dates_is_a_period(start, days):
    end = start + timedelta(days=days)
    period = class_reports.parse_period(start.isoformat(), end.isoformat(), "UTC")
    lower, upper = period.bounds()
    assert upper - lower == timedelta(days=days + 1)


@pytest.mark.parametrize("answers", [1, 2, 17, 40])
def test_median_times_are_exact(db_session, small_bank, answers):
    """Is the median read from the per-second histogram the true median?"""
    import random
    import statistics

    sync_bank(db_session, small_bank, now=NOW - timedelta(days=60))
    teacher = create_user(db_session, "wang", role="teacher")
    classroom = create_class(db_session, teacher, "班")
    learner = create_user(db_session, "ana")
    join_class(db_session, learner, classroom.join_code, now=NOW - timedelta(days=9))
    rng = random.Random(answers)
    # Times cluster in a few seconds so that medians often share a second.
    durations = [rng.choice([900, 4000, 4999, 5000, 12000]) + rng.randrange(999)
                 for _ in range(answers)]  # fmt: skip
    for n, duration in enumerate(durations):
        answer(db_session, learner, "scores-1", n % 2 == 0,
               timedelta(hours=answers - n), duration_ms=duration)  # fmt: skip
    db_session.commit()
    (report,) = class_reports.class_items(db_session, classroom)
    assert report.median_ms == statistics.median(durations)
