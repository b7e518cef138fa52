"""The SQLite fast path of the reviews CSV writes exactly what the generic path does."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import update

from quizsvc.exports import iter_csv
from quizsvc.models import Explanation, Membership, Review
from quizsvc.services import sqlite_exports
from quizsvc.services.exports import ExportOptions, class_export, parse_date_range
from tests.exportutil import build_class_history, export_bank

# Scores whose SQLite text differs from Python's repr, or that need exponents.
AWKWARD_SCORES = (1 / 3, 0.1 + 0.2, 1e-05, 0.0001, 0.0, 1.0, 0.5, 2 / 3, 0.7)
AWKWARD_TEXTS = (
    "+1", "-", "\tTab", "\rCR", "@me", "a,b", 'say "x"', "line\nbreak", "", "学生",
    "-0.5", "=SUM(A1)",
)  # fmt: skip


@pytest.fixture
def history(db_session, make_bank):
    if db_session.get_bind().dialect.name != "sqlite":
        pytest.skip("the fast path is SQLite's")
    return build_class_history(db_session, export_bank(make_bank))


def both_paths(session, classroom, **options) -> tuple[str, str]:
    """The reviews CSV through the SQLite fast path and through the generic one."""
    options.setdefault("base_url", "https://quiz.example/")
    (fast,) = class_export(session, classroom, "reviews", ExportOptions(**options))
    (generic,) = class_export(session, classroom, "reviews", ExportOptions(**options))
    assert fast.csv_lines is not None
    generic.csv_lines = None
    return "".join(iter_csv(fast, "en")), "".join(iter_csv(generic, "en"))


@pytest.mark.parametrize(
    "zone", ["America/New_York", "Asia/Shanghai", "Asia/Kathmandu", "UTC"]
)
def test_fast_csv_is_byte_identical_with_awkward_values(db_session, history, zone):
    """Do floats, formulas, quotes, line breaks and DST come out as the writer's?"""
    ids = [i for ids in history.reviews.values() for i in ids]
    for n, review_id in enumerate(ids):
        db_session.execute(
            update(Review)
            .where(Review.id == review_id)
            .values(
                score=AWKWARD_SCORES[n % len(AWKWARD_SCORES)],
                answer_text=AWKWARD_TEXTS[n % len(AWKWARD_TEXTS)],
                # Reviews on both sides of New York's change to summer time.
                reviewed_at=datetime(2026, 3, 8, 6, 30, 59, 999_999, tzinfo=UTC)
                + timedelta(minutes=15 * n),
            )
        )
    db_session.execute(update(Membership).values(student_number="+86-138"))
    db_session.execute(update(Explanation).values(body='=1, "two"\r\nthree'))
    history.classroom.timezone = zone
    db_session.flush()
    fast, generic = both_paths(db_session, history.classroom)
    assert fast == generic
    assert "'+86-138" in fast and ",0.3333333333333333," in fast


def test_fast_csv_honours_the_date_range(db_session, history):
    """Does the fast path select the same days as the generic one?"""
    dates = parse_date_range("2026-03-01", None)
    fast, generic = both_paths(db_session, history.classroom, dates=dates)
    assert fast == generic and fast.count("\r\n") < both_paths(
        db_session, history.classroom
    )[0].count("\r\n")


@settings(max_examples=40, deadline=None)
@given(
    zone=st.sampled_from(["America/New_York", "Europe/London", "Australia/Lord_Howe"]),
    start=st.datetimes(datetime(2000, 1, 1), datetime(2040, 1, 1)),
    days=st.integers(0, 800),
)
def test_offsets_change_where_the_zone_says(zone, start, days):
    """Does every instant in the span fall in a period with the zone's offset?"""
    zone_info = ZoneInfo(zone)
    first = start.replace(tzinfo=UTC)
    last = first + timedelta(days=days)
    periods = sqlite_exports.utc_offsets(first, last, zone_info)
    assert periods[0][0] == first
    for (begins, offset), following in zip(periods, [*periods[1:], None], strict=True):
        assert begins.astimezone(zone_info).utcoffset() == offset
        if following is not None:
            just_before = following[0] - timedelta(seconds=1)
            assert just_before.astimezone(zone_info).utcoffset() == offset
            assert following[1] != offset
    assert last.astimezone(zone_info).utcoffset() == periods[-1][1]
