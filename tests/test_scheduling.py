"""The scheduling policy, without a database: FSRS transitions, ratings, the queue."""

from __future__ import annotations

import csv
import math
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from unittest import mock
from zoneinfo import ZoneInfo

import fsrs
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from quizsvc import scheduling
from quizsvc.scheduling import (
    DEFAULT_PARAMETERS,
    STATE_LEARNING,
    STATE_RELEARNING,
    STATE_REVIEW,
    CardState,
    DueCard,
    GradedAnswer,
    Histories,
    LessonProgress,
    LoggedReview,
    NewItem,
    QueueEntry,
    Rating,
)

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
REVIEW_LOG = DATA / "review-log-dev.csv"
T0 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)

moments = st.datetimes(
    min_value=datetime(2020, 1, 1),
    max_value=datetime(2035, 1, 1),
    timezones=st.just(UTC),
)
ratings = st.sampled_from([1, 2, 3, 4])


def read_review_log() -> list[LoggedReview]:
    if not REVIEW_LOG.exists():
        pytest.skip(f"the shared review log is not at {REVIEW_LOG}")
    with REVIEW_LOG.open(newline="") as handle:
        return [
            LoggedReview(
                int(row["card_id"]),
                datetime.fromisoformat(row["review_time"]),
                int(row["review_rating"]),
            )
            for row in csv.DictReader(handle)
        ]


# --- retrievability ------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(
    stability=st.floats(0.001, 36500),
    last=moments,
    ahead=st.timedeltas(timedelta(days=-3), timedelta(days=4000)),
    decay=st.floats(0.1, 0.8),
)
def test_vectorized_retrievability_agrees_with_py_fsrs(stability, last, ahead, decay):
    """Does the NumPy retrievability equal py-fsrs's, card by card, to 1e-9?"""
    parameters = (*DEFAULT_PARAMETERS[:20], decay)
    now = last + ahead
    card = fsrs.Card(
        card_id=1,
        state=fsrs.State.Review,
        stability=stability,
        difficulty=5.0,
        due=last,
        last_review=last,
    )
    expected = fsrs.Scheduler(parameters=parameters).get_card_retrievability(card, now)
    days = scheduling.elapsed_days(scheduling.to_datetime64([last]), now)
    got = scheduling.retrievability_many([stability], days, decay)
    assert got[0] == pytest.approx(expected, abs=1e-9)


def test_retrievability_of_many_cards_with_gaps_and_own_decays():
    """Are never-reviewed cards 0 and each card's own decay used, all at once?"""
    now = T0
    last = [now - timedelta(days=10), None, now - timedelta(hours=5), now]
    stability = np.array([3.0, np.nan, 1.0, 20.0])
    decay = np.array([0.1542, 0.3, 0.5, 0.2])
    got = scheduling.retrievability_many(
        stability, scheduling.elapsed_days(scheduling.to_datetime64(last), now), decay
    )
    assert got[1] == 0.0
    assert got[2] == 1.0 and got[3] == 1.0  # less than a whole day elapsed
    scheduler = fsrs.Scheduler(parameters=(*DEFAULT_PARAMETERS[:20], 0.1542))
    card = fsrs.Card(
        card_id=1,
        state=fsrs.State.Review,
        stability=3.0,
        difficulty=5,
        last_review=last[0],
    )
    assert got[0] == pytest.approx(scheduler.get_card_retrievability(card, now), 1e-12)


def test_whole_days_turn_over_at_exactly_24_hours():
    """Is a day counted at exactly 24 h, not a microsecond earlier (as py-fsrs)?"""
    now = T0
    last = [now - timedelta(days=k) + timedelta(microseconds=e)
            for k in (1, 7, 365, 36500) for e in (0, 1)]  # fmt: skip
    days = scheduling.elapsed_days(scheduling.to_datetime64(last), now)
    assert days.tolist() == [(now - moment).days for moment in last]
    assert days.tolist() == [1, 0, 7, 6, 365, 364, 36500, 36499]


# --- card transitions ------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    answers=st.lists(
        st.tuples(ratings, st.timedeltas(timedelta(0), timedelta(days=90))),
        min_size=1,
        max_size=12,
    )
)
def test_transitions_follow_py_fsrs_exactly_without_fuzz(answers):
    """Without a seed, is every transition py-fsrs's own (same steps, no fuzz)?"""
    reference = fsrs.Scheduler(
        learning_steps=scheduling.LEARNING_STEPS,
        relearning_steps=scheduling.RELEARNING_STEPS,
        enable_fuzzing=False,
    )
    theirs, ours, now = fsrs.Card(card_id=1, due=T0), CardState(), T0
    for rating, wait in answers:
        now = now + wait
        theirs, _ = reference.review_card(theirs, fsrs.Rating(rating), now)
        ours = scheduling.review_card(ours, rating, now)
        assert (ours.state, ours.step, ours.due) == (
            int(theirs.state),
            theirs.step,
            theirs.due,
        )
        assert ours.stability == pytest.approx(theirs.stability, rel=1e-12)
        assert ours.difficulty == pytest.approx(theirs.difficulty, rel=1e-12)
        assert ours.last_review == now
    assert ours.reps == len(answers)


@settings(max_examples=300, deadline=None)
@given(days=st.integers(1, 36500), uniform=st.floats(0, 1, exclude_max=True))
def test_fuzz_spreads_intervals_exactly_as_py_fsrs(days, uniform):
    """Given the same uniform draw, is the fuzzed interval py-fsrs's?"""
    with mock.patch.object(fsrs.scheduler, "random", lambda: uniform):
        expected = fsrs.Scheduler()._get_fuzzed_interval(interval=timedelta(days=days))
    assert scheduling.fuzz_interval_days(days, uniform) == expected.days


def test_fuzz_is_seeded_so_the_same_review_gets_the_same_due():
    """Does one seed always give one due date, and different seeds spread them?"""
    card = CardState()
    now = T0
    for rating in (3, 3):
        card = scheduling.review_card(card, rating, now)
        now += timedelta(minutes=10)
    review = scheduling.review_card(card, 3, T0 + timedelta(days=6))
    assert review.state == STATE_REVIEW
    unfuzzed = (review.due - (T0 + timedelta(days=6))).days
    dues = {
        scheduling.review_card(card, 3, T0 + timedelta(days=6), seed=f"s{i}").due
        for i in range(40)
    }
    again = scheduling.review_card(card, 3, T0 + timedelta(days=6), seed="s1").due
    assert (
        again == scheduling.review_card(card, 3, T0 + timedelta(days=6), seed="s1").due
    )
    assert len(dues) > 1
    spread = {(due - (T0 + timedelta(days=6))).days for due in dues}
    assert min(spread) >= 2 and max(spread) <= unfuzzed + 2 + unfuzzed * 0.15


def test_replaying_a_log_rebuilds_the_card_that_was_scheduled_live():
    """Does replaying a card's log with its fuzz seeds give the live card back?"""
    rng = random.Random(7)
    live, now = CardState(), T0
    log = []
    for _ in range(15):
        now += timedelta(
            days=rng.choice([0, 1, 3, 10, 40]), minutes=rng.randint(1, 600)
        )
        rating = rng.choice([1, 3, 3, 3, 4, 2])
        live = scheduling.review_card(
            live, rating, now, seed=scheduling.fuzz_seed(42, live.reps)
        )
        log.append((now, rating))
    assert scheduling.replay_card(log, card_id=42) == live


def test_lapses_count_forgotten_reviews_only():
    """Is a lapse counted when a Review card is forgotten, not during learning?"""
    card = scheduling.review_card(CardState(), 1, T0)  # Again while learning
    assert card.lapses == 0 and card.state == STATE_LEARNING
    card = scheduling.review_card(card, 4, T0 + timedelta(minutes=1))
    assert card.state == STATE_REVIEW
    card = scheduling.review_card(card, 1, T0 + timedelta(days=20))
    assert card.lapses == 1 and card.state == STATE_RELEARNING


def test_naive_times_are_refused():
    """Is a naive datetime refused instead of silently taken as UTC?"""
    with pytest.raises(ValueError, match="naive"):
        scheduling.review_card(CardState(), 3, datetime(2026, 1, 1))


def test_parameters_are_checked_and_clipped_into_fsrs_bounds():
    """Are fitted parameters kept inside py-fsrs's bounds, and wrong lengths refused?"""
    too_big = list(DEFAULT_PARAMETERS)
    too_big[0] = 1e6
    assert scheduling.check_parameters(too_big)[0] == 100.0
    with pytest.raises(ValueError, match="21"):
        scheduling.check_parameters([0.1] * 19)
    with pytest.raises(ValueError):
        scheduling.check_parameters([math.nan] * 21)


# --- the rating policy -----------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "duration", "typical", "expected"),
    [
        (GradedAnswer(correct=False, score=0.0), 1000, 5000.0, Rating.AGAIN),
        (GradedAnswer(correct=False, score=0.6), 1000, 5000.0, Rating.AGAIN),
        (GradedAnswer(correct=True, score=0.5), 1000, 5000.0, Rating.HARD),
        (GradedAnswer(correct=True, hint_used=True), 1000, 5000.0, Rating.HARD),
        (GradedAnswer(correct=True, attempts=2), 1000, 5000.0, Rating.HARD),
        (GradedAnswer(correct=True), 9000, 5000.0, Rating.GOOD),
        (GradedAnswer(correct=True), 5000, 5000.0, Rating.GOOD),
        (GradedAnswer(correct=True), 1000, None, Rating.GOOD),
        (GradedAnswer(correct=True), None, 5000.0, Rating.GOOD),
        (GradedAnswer(correct=True), 4999, 5000.0, Rating.EASY),
    ],
)
def test_graded_answers_are_rated_by_the_policy(answer, duration, typical, expected):
    """Wrong → Again; partial, hinted or retried → Hard; right → Good, fast → Easy?"""
    rating = scheduling.rate_graded_answer(
        answer, duration_ms=duration, typical_ms=typical
    )
    assert rating == expected


@given(
    correct=st.booleans(),
    score=st.floats(0, 1),
    hint=st.booleans(),
    attempts=st.integers(1, 5),
    duration=st.none() | st.integers(0, 10**6),
    typical=st.none() | st.floats(1, 10**6),
)
def test_rating_policy_laws(correct, score, hint, attempts, duration, typical):
    """Is a wrong answer always Again, and Easy only when right, clean and fast?"""
    answer = GradedAnswer(
        correct=correct, score=score, hint_used=hint, attempts=attempts
    )
    rating = scheduling.rate_graded_answer(
        answer, duration_ms=duration, typical_ms=typical
    )
    if not correct:
        assert rating == Rating.AGAIN
    if rating == Rating.EASY:
        assert correct and score == 1 and not hint and attempts == 1
        assert duration is not None and typical is not None and duration < typical
    if hint or attempts > 1 or score < 1:
        assert rating in (Rating.AGAIN, Rating.HARD)


def test_graded_answer_refuses_impossible_scores():
    """Is a score outside 0..1 (or NaN) refused?"""
    for bad in (-0.1, 1.5, math.nan):
        with pytest.raises(ValueError, match="score"):
            GradedAnswer(correct=True, score=bad)


def test_typical_duration_needs_enough_answers():
    """Is "fast" judged only once the learner has five timed answers?"""
    assert scheduling.typical_duration_ms([1000, 2000, None, 3000, 4000]) is None
    assert scheduling.typical_duration_ms([1000, 2000, 9000, 3000, 4000]) == 3000


def test_recall_ratings_with_four_or_two_buttons():
    """Do recall items take Again..Easy, or only Pass/Fail in two-button mode?"""
    assert scheduling.rate_recall("Good") == Rating.GOOD
    assert scheduling.rate_recall(" easy ") == Rating.EASY
    assert scheduling.rate_recall("pass", two_button=True) == Rating.GOOD
    assert scheduling.rate_recall("fail", two_button=True) == Rating.AGAIN
    assert scheduling.rate_recall("again", two_button=True) == Rating.AGAIN
    with pytest.raises(ValueError, match="pass, fail"):
        scheduling.rate_recall("hard", two_button=True)
    with pytest.raises(ValueError, match="again, hard, good, easy"):
        scheduling.rate_recall("pass")


# --- the learner's day -------------------------------------------------------------


def test_learner_day_starts_at_the_local_rollover_hour():
    """In Shanghai with a 4 a.m. rollover, does 3:30 a.m. still belong to yesterday?"""
    now = datetime(2026, 3, 10, 19, 30, tzinfo=UTC)  # 03:30 on 11 March in Shanghai
    start, end = scheduling.learner_day(now, "Asia/Shanghai", 4)
    assert start == datetime(2026, 3, 9, 20, 0, tzinfo=UTC)  # 04:00 on 10 March
    assert end == datetime(2026, 3, 10, 20, 0, tzinfo=UTC)


@settings(max_examples=300, deadline=None)
@given(
    now=moments,
    zone=st.sampled_from(
        [
            "Asia/Shanghai",
            "America/New_York",
            "Europe/London",
            "Australia/Lord_Howe",
            "America/Santiago",
            "UTC",
        ]
    ),
    rollover=st.integers(0, 23),
)
def test_learner_day_always_contains_now(now, zone, rollover):
    """Across time zones and DST changes, does the day contain now and last ~24 h?"""
    start, end = scheduling.learner_day(now, zone, rollover)
    assert start <= now < end
    assert timedelta(hours=22) <= end - start <= timedelta(hours=26)
    local_start = start.astimezone(ZoneInfo(zone))
    # The start is the rollover hour unless a DST jump skipped that hour (the
    # offset changes within an hour either side of the start).
    offsets = {
        (start + timedelta(hours=shift)).astimezone(ZoneInfo(zone)).utcoffset()
        for shift in (-1, 0, 1)
    }
    assume(len(offsets) == 1)
    assert local_start.hour == rollover and local_start.minute == 0


# --- the daily queue ---------------------------------------------------------------


def due(item, skill, retrievability, *, state=STATE_REVIEW, at=T0):
    return DueCard(item, skill, state, at, retrievability)


def new(item, skill, lesson, order):
    return NewItem(item, skill, lesson, order)


OPEN_LESSON = {"L": LessonProgress((), 0, 10)}


def queue(
    due_cards=(), new_items=(), lessons=None, *, reviews=100, news=10, now=T0, **after
):
    """The queue for these cards; `after` names the latest answer's skill or item."""
    return scheduling.build_queue(
        due_cards,
        new_items,
        OPEN_LESSON if lessons is None else lessons,
        now=now,
        day_end=now + timedelta(hours=12),
        reviews_remaining=reviews,
        new_remaining=news,
        **after,
    )


def test_due_reviews_come_first_least_remembered_first():
    """Are due reviews ordered by retrievability, before any new item?"""
    entries = queue(
        [due("a", "s1", 0.9), due("b", "s2", 0.4), due("c", "s3", 0.7)],
        [new("n", "s4", "L", (0, 0, 0))],
    )
    assert [e.item_id for e in entries] == ["b", "c", "a", "n"]
    assert [e.kind for e in entries] == ["review", "review", "review", "new"]


def test_which_cards_count_as_due_now():
    """Reviews due later today count; learning steps only within the learn-ahead."""
    entries = queue(
        [
            due("later-today", "s1", 0.9, at=T0 + timedelta(hours=11)),
            due("tomorrow", "s2", 0.5, at=T0 + timedelta(hours=13)),
            due(
                "step-soon",
                "s3",
                1.0,
                state=STATE_LEARNING,
                at=T0 + timedelta(minutes=10),
            ),
            due(
                "step-later",
                "s4",
                1.0,
                state=STATE_RELEARNING,
                at=T0 + timedelta(hours=2),
            ),
        ]
    )
    assert {e.item_id for e in entries} == {"later-today", "step-soon"}


def test_a_step_not_yet_due_waits_behind_other_work():
    """Is a card just failed asked again only after what is already waiting?"""
    soon = due(
        "failed", "s1", 0.2, state=STATE_RELEARNING, at=T0 + timedelta(minutes=9)
    )
    ready_step = due("step-now", "s2", 0.95, state=STATE_LEARNING, at=T0)
    entries = queue([soon, ready_step], [new("n", "s3", "L", (0, 0, 0))])
    assert [e.item_id for e in entries] == ["step-now", "n", "failed"]
    # With nothing else to do, the step is learned ahead rather than left out.
    assert [e.item_id for e in queue([soon])] == ["failed"]


def test_limits_cap_reviews_and_new_items_share_the_review_budget():
    """Do the review limit and new limit hold, new items using what reviews left?"""
    cards = [due(f"r{i}", f"s{i}", i / 10) for i in range(5)]
    fresh = [new(f"n{i}", f"t{i}", "L", (0, 0, i)) for i in range(5)]
    assert [e.kind for e in queue(cards, fresh, reviews=3, news=10)] == ["review"] * 3
    mixed = queue(cards, fresh, reviews=7, news=10)
    assert [e.kind for e in mixed].count("new") == 2
    assert [e.kind for e in queue(cards, fresh, reviews=100, news=1)].count("new") == 1
    assert queue(cards, fresh, reviews=-4, news=-1) == []


def test_new_items_follow_lesson_prerequisites_and_skill_order():
    """Does lesson 16 wait for lesson 15, and scores come before weights and output?"""
    lessons = {
        "l15": LessonProgress((), introduced=1, total=2),
        "l16": LessonProgress(("l15", "l14-not-in-bank"), introduced=0, total=3),
    }
    items = [
        new("out", "output", "l16", (1, 3, 0)),
        new("wts", "weights", "l16", (1, 2, 1)),
        new("scr", "scores", "l16", (1, 1, 2)),
        new("shape", "shapes", "l15", (0, 1, 0)),
    ]
    assert [e.item_id for e in queue(new_items=items, lessons=lessons)] == ["shape"]
    lessons["l15"] = LessonProgress((), introduced=2, total=2)
    assert [e.item_id for e in queue(new_items=items, lessons=lessons)] == [
        "shape",
        "scr",
        "wts",
        "out",
    ]


def test_the_same_skill_never_comes_twice_in_a_row_when_avoidable():
    """With two scores cards first by retrievability, is a weights card put between?"""
    entries = queue(
        [due("s1", "scores", 0.1), due("s2", "scores", 0.2), due("w1", "weights", 0.3)]
    )
    assert [e.item_id for e in entries] == ["s1", "w1", "s2"]


def test_a_failed_item_waits_for_other_work():
    """After a wrong answer, is the item asked again only once other work is done?"""
    failed = due(
        "failed", "s1", 0.1, state=STATE_LEARNING, at=T0 - timedelta(minutes=2)
    )
    waiting = [new("n1", "s2", "L", (0, 0, 0)), new("n2", "s3", "L", (0, 1, 0))]
    entries = queue([failed], waiting, just_answered="failed")
    assert [e.item_id for e in entries] == ["n1", "n2", "failed"]
    # Alone, it is asked again rather than left out.
    alone = queue([failed])
    assert [e.item_id for e in alone] == ["failed"]


def test_new_skills_are_staggered_in_the_lessons_order():
    """With many new items, does the next skill start before the first runs out?"""
    items = [
        new(f"{skill}-{n}", skill, "L", (0, rank, n))
        for rank, skill in enumerate(["roles", "scores", "scaling"])
        for n in range(6)
    ]
    entries = queue(new_items=items, news=40)
    order = [e.item_id for e in entries]
    firsts = [order.index(f"{skill}-0") for skill in ("roles", "scores", "scaling")]
    assert firsts == sorted(firsts) and firsts[1] < order.index("roles-5")
    assert firsts[2] < order.index("scores-5")
    # The daily cut takes the first skills' first items, in the lesson's order.
    cut = [e.item_id for e in queue(new_items=items, news=3)]
    assert cut == ["roles-0", "scores-0", "roles-1"]


def test_the_latest_answers_skill_is_not_repeated_first():
    """Does the queue start with another skill than the one just answered?"""
    cards = [due("a", "scores", 0.1), due("b", "weights", 0.5)]
    entries = queue(cards, previous_skill="scores")
    assert [e.item_id for e in entries] == ["b", "a"]


SKILLS = ["roles", "scores", "scaling", "weights", "output"]


@settings(max_examples=80, deadline=None)
@given(
    reviews=st.lists(
        st.tuples(
            st.sampled_from(SKILLS),
            st.sampled_from([STATE_REVIEW, STATE_LEARNING, STATE_RELEARNING]),
            st.integers(-600, 30),
            st.floats(0.01, 0.99),
        ),
        max_size=12,
    ),
    per_skill=st.lists(st.integers(0, 6), min_size=len(SKILLS), max_size=len(SKILLS)),
    news=st.integers(0, 25),
    wrong=st.lists(st.booleans(), max_size=60),
)
def test_a_day_of_answers_keeps_skills_apart_and_the_lessons_order(
    reviews, per_skill, news, wrong
):
    """Over a simulated day (each answer taken from the queue's head, some wrong),
    is a skill never asked twice in a row while another waits, a failed item
    never asked again straight away while other work waits, each skill's new
    items asked in bank order, and are the new items offered the first ones of
    the staggered lesson order?"""
    cards = {
        f"r{i}": due(f"r{i}", skill, p, state=state, at=T0 + timedelta(minutes=m))
        for i, (skill, state, m, p) in enumerate(reviews)
    }
    fresh = {
        f"{skill}-{n}": NewItem(f"{skill}-{n}", skill, "L", (0, rank, n), n)
        for rank, (skill, count) in enumerate(zip(SKILLS, per_skill, strict=True))
        for n in range(count)
    }
    now, last, introduced = T0, None, 0
    answers = iter(wrong)
    for _step in range(60):
        entries = scheduling.build_queue(
            list(cards.values()),
            list(fresh.values()),
            {"L": LessonProgress((), 0, 100)},
            now=now,
            day_end=T0 + timedelta(hours=12),
            reviews_remaining=200,
            new_remaining=news - introduced,
            previous_skill=last.skill_id if last else None,
            just_answered=last.item_id if last else None,
        )
        if not entries:
            break
        head = entries[0]
        offered = [e.item_id for e in entries if e.kind == "new"]
        staggered = scheduling.introduction_order(fresh.values())
        assert offered == sorted(offered, key=offered.index)  # no duplicates
        assert set(offered) == {i.item_id for i in staggered[: len(offered)]}
        if last is not None:
            if any(e.skill_id != last.skill_id for e in entries):
                assert head.skill_id != last.skill_id
            if head.item_id == last.item_id:
                assert len(entries) == 1
        if head.kind == "new":
            same_skill = [i for i in fresh.values() if i.skill_id == head.skill_id]
            assert fresh[head.item_id] == min(same_skill, key=lambda i: i.order)
            del fresh[head.item_id]
            introduced += 1
        now += timedelta(minutes=1)
        if next(answers, False):
            cards[head.item_id] = due(
                head.item_id, head.skill_id, 0.05, state=STATE_LEARNING, at=now
            )
        else:
            cards.pop(head.item_id, None)
        last = head


entries_strategy = st.lists(
    st.builds(
        QueueEntry,
        item_id=st.uuids().map(str),
        skill_id=st.sampled_from(["scores", "weights", "output", None]),
        kind=st.sampled_from(["review", "new"]),
    ),
    max_size=30,
)


@given(entries=entries_strategy)
def test_spreading_skills_reorders_without_losing_anything(entries):
    """Is the result a permutation with a repeat only when nothing else is left?"""
    spread = scheduling.spread_skills(entries)
    assert sorted(e.item_id for e in spread) == sorted(e.item_id for e in entries)
    for i in range(1, len(spread)):
        skill = spread[i].skill_id
        if skill is not None and skill == spread[i - 1].skill_id:
            assert all(e.skill_id == skill for e in spread[i:])


@given(entries=entries_strategy)
def test_spreading_leaves_an_already_spread_queue_alone(entries):
    """When no skill repeats back to back, is the order kept as it was?"""
    assume(
        all(
            a.skill_id is None or a.skill_id != b.skill_id
            for a, b in zip(entries, entries[1:], strict=False)
        )
    )
    assert scheduling.spread_skills(entries) == entries


@settings(max_examples=150, deadline=None)
@given(
    cards=st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c"]), st.floats(0, 1), st.integers(-30, 30)
        ),
        max_size=20,
    ),
    new_count=st.integers(0, 10),
    reviews=st.integers(-5, 30),
    news=st.integers(-5, 15),
)
def test_queue_respects_limits_and_keeps_each_item_once(
    cards, new_count, reviews, news
):
    """Is every item in the queue once, within both limits?"""
    due_cards = [
        due(f"r{i}", skill, r, at=T0 + timedelta(hours=h))
        for i, (skill, r, h) in enumerate(cards)
    ]
    fresh = [new(f"n{i}", "x", "L", (0, 0, i)) for i in range(new_count)]
    entries = queue(due_cards, fresh, reviews=reviews, news=news)
    ids = [e.item_id for e in entries]
    assert len(ids) == len(set(ids))
    due_today = sum(1 for _, _, h in cards if h < 12)
    taken_reviews = min(due_today, max(reviews, 0))
    assert sum(e.kind == "review" for e in entries) == taken_reviews
    assert sum(e.kind == "new" for e in entries) == max(
        0, min(new_count, news, reviews - taken_reviews)
    )


# --- SM-2 and evaluation ---------------------------------------------------------


def test_sm2_follows_ankis_default_deck_options():
    """Do Anki's SM-2 steps, graduating interval, ease and lapses come out right?"""
    # Two learning steps, then 1 day; Good ×2.5 (at least Hard + 1); a lapse
    # relearns and restarts at 1 day with ease 2.3; Easy must beat Good's 3 days.
    ratings = [3, 3, 3, 3, 1, 3, 4]
    days = [0, 0, 1, 3, 7, 0, 1]
    assert scheduling.sm2_intervals(ratings, days) == [0, 1, 3, 7, 0, 1, 4]


@given(answers=st.lists(st.tuples(ratings, st.integers(0, 400)), max_size=40))
def test_sm2_ease_and_interval_laws(answers):
    """Does a remembered card get a longer interval (up to the cap), a lapse 1 day?"""
    card = scheduling._Sm2()
    for rating, gap in answers:
        before = card
        card = scheduling._sm2_step(card, rating, gap)
        assert card.ease >= scheduling.SM2_MINIMUM_EASE
        if before.phase == "review":
            if rating == 1:
                assert card.phase == "relearning" and card.interval == 1
            else:
                longest = scheduling.MAXIMUM_INTERVAL_DAYS
                assert card.interval > before.interval or card.interval == longest


def test_perfect_and_coin_flip_predictions_score_as_expected():
    """Is log loss ~0 for certain right predictions and ln 2 for coin flips?"""
    y = np.array([1, 0, 1, 1, 0], dtype=float)
    perfect = scheduling.score_predictions(y, y)
    assert perfect.log_loss < 1e-5 and perfect.rmse_bins < 1e-5
    coin = scheduling.score_predictions(np.full(5, 0.5), y)
    assert coin.log_loss == pytest.approx(math.log(2))
    assert coin.rmse_bins == pytest.approx(abs(0.5 - 0.6))


def test_review_log_histories_count_whole_days():
    """Are gaps whole elapsed days, and same-day reviews left out of the targets?"""
    log = [
        LoggedReview(1, T0, 3),
        LoggedReview(1, T0 + timedelta(hours=20), 3),
        LoggedReview(1, T0 + timedelta(hours=50), 1),
        LoggedReview(2, T0, 3),
    ]
    histories = Histories.from_log(reversed(log))
    assert histories.days[1] == (0, 0, 1)
    targets = histories.targets()
    assert [(t.card_id, t.index, t.recalled) for t in targets] == [(1, 2, False)]
    with pytest.raises(ValueError, match="rating"):
        Histories.from_log([LoggedReview(1, T0, 5)])


def test_fsrs_predictions_match_fsrs_rs_review_by_review():
    """Is each FSRS prediction the one fsrs-rs makes for the same review?"""
    from fsrs_rs_python import FSRS, FSRSItem, FSRSReview

    histories = Histories.from_log(read_review_log())
    targets = histories.targets()[::60]
    predicted = scheduling.fsrs_predictions(histories, targets, DEFAULT_PARAMETERS)
    model = FSRS(list(DEFAULT_PARAMETERS))
    for target, p in zip(targets, predicted, strict=True):
        rows = histories.reviews[target.card_id][: target.index + 1]
        gaps = histories.days[target.card_id]
        item = FSRSItem([FSRSReview(r.rating, gaps[i]) for i, r in enumerate(rows)])
        y = float(target.recalled)
        ours = -(y * math.log(p) + (1 - y) * math.log(1 - p))
        assert model.evaluate([item]).log_loss == pytest.approx(ours, abs=1e-4)


def test_fsrs_beats_sm2_on_a_real_review_log():
    """On real reviews, does FSRS-6 predict recall better than Anki's SM-2?"""
    evaluation = scheduling.evaluate_models(Histories.from_log(read_review_log()))
    scores = evaluation.scores
    assert set(scores) == {"default", "fitted", "SM-2"}
    assert scores["default"].log_loss < scores["SM-2"].log_loss
    assert scores["fitted"].log_loss < scores["SM-2"].log_loss
    assert scores["default"].count == scores["SM-2"].count > 500
    assert len(evaluation.fitted_parameters) == 21
    assert evaluation.cutoff > datetime(2024, 3, 29, tzinfo=UTC)


@settings(max_examples=150, deadline=None)
@given(
    cards=st.lists(
        st.tuples(
            st.sampled_from([STATE_LEARNING, STATE_RELEARNING, STATE_REVIEW]),
            st.sampled_from([1, 10]),  # the step, in minutes
            st.integers(0, 900),  # seconds since the last answer
        ),
        min_size=1,
        max_size=8,
    ),
    just=st.integers(0, 7),
)
def test_learning_steps_are_never_asked_before_half_their_step(cards, just):
    """Is a learning step queued only once half its step has passed (or it is
    due), the item just answered only once due, and when such steps are held
    back, does next_ready name the first moment one may be asked?"""
    now = T0
    due_cards = []
    for index, (state, minutes, since) in enumerate(cards):
        last = now - timedelta(seconds=since)
        due_cards.append(
            DueCard(
                f"c{index}",
                f"s{index}",
                state,
                last + timedelta(minutes=minutes),
                0.5,
                last,
            )
        )
    just_answered = f"c{just}"
    entries = queue(due_cards, just_answered=just_answered)
    queued = {e.item_id for e in entries}
    for card in due_cards:
        if card.state == STATE_REVIEW or card.item_id not in queued:
            continue
        step = card.due - card.last_review
        assert now - card.last_review >= step / 2 or card.due <= now
        if card.item_id == just_answered:
            assert card.due <= now and entries[-1].item_id == card.item_id
    held = [c for c in due_cards if c.state != STATE_REVIEW and c.item_id not in queued]
    ready = scheduling.next_ready(
        held, now=now, day_end=now + timedelta(hours=12), just_answered=just_answered
    )
    if held:
        assert ready is not None and ready > now
        # Moving to that moment makes at least one of them askable.
        later = queue(due_cards, just_answered=just_answered, now=ready)
        assert {e.item_id for e in later} & {c.item_id for c in held}
    else:
        assert ready is None
