"""The SQLite fast paths of the reviews export write what the generic path does.

CSV byte for byte; XLSX cell for cell (value, type, style) as openpyxl reads it.
"""

from __future__ import annotations

import io
import re
import zipfile
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import openpyxl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select, text, update

from quizsvc.exports import iter_csv, queries, write_workbook
from quizsvc.exports.kinds import class_export
from quizsvc.exports.options import ExportOptions, parse_date_range
from quizsvc.exports.sqlite_fast import shared
from quizsvc.models import Explanation, Membership, Review, User
from tests.factories import assert_same_workbook, build_class_history, export_bank

# Scores whose SQLite text differs from Python's repr, or that need exponents.
AWKWARD_SCORES = (1 / 3, 0.1 + 0.2, 1e-05, 0.0001, 0.0, 1.0, 0.5, 2 / 3, 0.7)
AWKWARD_TEXTS = (
    "+1", "-", "\tTab", "\rCR", "@me", "a,b", 'say "x"', "line\nbreak", "", "学生",
    "-0.5", "=SUM(A1)",
)  # fmt: skip
# Text the XLSX cells must escape, keep or cut, besides the CSV's.
XML_TEXTS = (
    "a & b < c > d", "</t></is></c>", "nul\x00byte", "bell\x07", "\x1f", "_x0041_",
    " lead", "trail ", "\u3000全角", "尾\u3000", "\xa0", "\ufffe", "😀", "x" * 20_000,
    "😀" * 17_000, "学生 王小明", "plain", None,
)  # fmt: skip
# Integers a float cannot hold exactly are written as 16 significant digits.
AWKWARD_SEEDS = (2**53, 2**53 + 1, -(2**62), -7, 0, None)


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
    assert fast.finished is not None
    generic.finished = None
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


# Student numbers and names a teacher may type (or paste).
LEARNER_TEXTS = (
    "=1+2", "+86 138", "-5", "@ali", "\tTab", "\rCR", 'say "hi"', "a,b",
    "two\nlines", "王小明", "nul\x00,byte", None, "", "-0.5", "学号 2026001",
)  # fmt: skip


def store_learner_texts(session, history, shift):
    """Give each learner of the class a different awkward student number and name."""
    members = session.scalars(
        select(Membership)
        .where(
            Membership.class_id == history.classroom.id, Membership.role == "learner"
        )
        .order_by(Membership.user_id)
    ).all()
    for n, member in enumerate(members, shift):
        member.student_number = LEARNER_TEXTS[n % len(LEARNER_TEXTS)]
        member.display_name = LEARNER_TEXTS[(n + 5) % len(LEARNER_TEXTS)]
    session.flush()
    return members


@pytest.mark.parametrize("shift", range(len(LEARNER_TEXTS)))
def test_fast_csv_writes_each_learners_cells_as_the_writer(db_session, history, shift):
    """Do formulas, quotes, line breaks, NULs and CJK in student numbers and names
    come out as the writer's, each on its own learner's rows?"""
    members = store_learner_texts(db_session, history, shift)
    assert len(members) > 1
    db_session.execute(
        update(User)
        .where(User.id == members[0].user_id)
        .values(username=LEARNER_TEXTS[shift] or "=u", display_name="=账户名")
    )
    fast, generic = both_paths(db_session, history.classroom)
    assert fast == generic


def test_fast_csv_keeps_nul_characters(db_session, history):
    """Does text holding a NUL (which SQLite's printf would cut) come out whole?"""
    ids = [i for ids in history.reviews.values() for i in ids]
    db_session.execute(
        update(Review)
        .where(Review.id.in_(ids[::2]))
        .values(answer_text="a\x00,b", misconception="x\x00y", problem_kind="k\x00")
    )
    db_session.execute(update(Explanation).values(body="=\x00\r\n"))
    db_session.flush()
    fast, generic = both_paths(db_session, history.classroom)
    assert fast == generic and "a\x00,b" in fast


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    number=st.text(max_size=12) | st.none(),
    name=st.text(max_size=12) | st.none(),
    answer=st.text(max_size=20) | st.none(),
    body=st.text(max_size=20),
)
def test_fast_csv_matches_for_any_text(db_session, history, number, name, answer, body):
    """Whatever text is stored, is the fast CSV the writer's, byte for byte?"""
    db_session.execute(
        update(Membership).values(student_number=number, display_name=name)
    )
    db_session.execute(update(Review).values(answer_text=answer))
    db_session.execute(update(Explanation).values(body=body))
    db_session.flush()
    fast, generic = both_paths(db_session, history.classroom)
    assert fast == generic


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
    periods = shared.utc_offsets(first, last, zone_info)
    assert periods[0][0] == first
    for (begins, offset), following in zip(periods, [*periods[1:], None], strict=True):
        assert begins.astimezone(zone_info).utcoffset() == offset
        if following is not None:
            just_before = following[0] - timedelta(seconds=1)
            assert just_before.astimezone(zone_info).utcoffset() == offset
            assert following[1] != offset
    assert last.astimezone(zone_info).utcoffset() == periods[-1][1]


def test_the_offsets_span_holds_the_class_learners_reviews_only(db_session, history):
    """Do the zone's offsets come from the span of the class's own reviews?"""
    learners = [user.id for user in history.learners.values()]
    mine = Review.user_id.in_(learners)
    # Others' reviews (an outsider, a leaver, the teacher) years before and after.
    others = db_session.scalars(select(Review.id).where(~mine).order_by(Review.id))
    for review_id, year in zip(others, (1999, 2039, 2039), strict=True):
        db_session.execute(
            update(Review)
            .where(Review.id == review_id)
            .values(reviewed_at=datetime(year, 1, 1, tzinfo=UTC))
        )
    stored = text(f"SELECT reviewed_at FROM reviews WHERE user_id IN {tuple(learners)}")
    times = sorted(db_session.scalars(stored))
    learners = queries.class_learners(history.classroom)
    span = shared.stored_span(db_session, learners)
    assert span == (times[0], times[-1])


def both_workbooks(session, classroom, **options):
    """The reviews XLSX through the SQLite fast path and through the generic one."""
    options.setdefault("base_url", "https://quiz.example/&x=<1>")
    workbooks, sheets = [], []
    for fast in (True, False):
        (table,) = class_export(session, classroom, "reviews", ExportOptions(**options))
        assert table.finished is not None
        if not fast:
            table.finished = None
        buffer = io.BytesIO()
        write_workbook([table], buffer, "zh-CN")
        workbooks.append(openpyxl.load_workbook(buffer))
        with zipfile.ZipFile(buffer) as package:
            sheets.append(package.read("xl/worksheets/sheet1.xml"))
    # One writer: the rows SQL finished are the bytes Python would write.
    assert sheets[0] == sheets[1]
    return workbooks


def store_awkward_values(session, history, n_offset=0, start=None):
    """Give every review of the class awkward text, numbers and times."""
    ids = [i for ids in history.reviews.values() for i in ids]
    start = start or datetime(2026, 3, 8, 6, 30, 59, 999_999, tzinfo=UTC)
    for n, review_id in enumerate(ids, n_offset):
        texts = [*AWKWARD_TEXTS, *XML_TEXTS]
        session.execute(
            update(Review)
            .where(Review.id == review_id)
            .values(
                score=AWKWARD_SCORES[n % len(AWKWARD_SCORES)],
                answer_text=texts[n % len(texts)],
                problem_kind=(None, "weights", "a&b", "")[n % 4],
                problem_seed=AWKWARD_SEEDS[n % len(AWKWARD_SEEDS)],
                problem_level=(2, None, -1)[n % 3],
                misconception=(None, "no_scale", "no_x0041_")[n % 3],
                reviewed_at=start + timedelta(minutes=15 * n),
            )
        )


@pytest.mark.parametrize(
    "zone", ["America/New_York", "Asia/Shanghai", "Asia/Kathmandu", "UTC"]
)
def test_fast_xlsx_matches_the_generic_rows_cell_for_cell(db_session, history, zone):
    """Do hostile text, big integers, fractions and DST read back as the generic
    path's?"""
    store_awkward_values(db_session, history)
    db_session.execute(update(Membership).values(student_number=" +86-138 "))
    db_session.execute(update(Explanation).values(body='=1, "two"\r\n<three>'))
    db_session.execute(
        update(User).where(User.username == "bo").values(username="bo_x0001_")
    )
    # A time stored without its fraction: Python reads it instead of SQL.
    db_session.execute(
        text("UPDATE reviews SET reviewed_at = '2026-03-08 07:00:01' WHERE id = :id"),
        {"id": history.reviews["bo"][0]},
    )
    history.classroom.timezone = zone
    db_session.flush()
    fast, generic = both_workbooks(db_session, history.classroom)
    assert_same_workbook(generic, fast)
    sheet = fast["答题记录"]
    assert sheet["J2"].is_date and sheet["K2"].is_date
    assert sheet["D2"].value.startswith("=HYPERLINK") and sheet["D2"].data_type == "s"


def test_fast_xlsx_honours_the_date_range(db_session, history):
    """Does the fast XLSX select the same days as the generic one?"""
    dates = parse_date_range("2026-03-01", None)
    fast, generic = both_workbooks(db_session, history.classroom, dates=dates)
    assert_same_workbook(generic, fast)
    everything, _ = both_workbooks(db_session, history.classroom)
    assert fast["答题记录"].max_row < everything["答题记录"].max_row


def test_fast_xlsx_workbook_writes_every_sheet(db_session, history):
    """Is the workbook kind, fast reviews beside summary and grades, the generic's?"""
    options = ExportOptions(base_url="https://quiz.example/", now=datetime.now(UTC))
    workbooks = []
    for fast in (True, False):
        tables = class_export(db_session, history.classroom, "workbook", options)
        if not fast:
            tables[0].finished = None
        buffer = io.BytesIO()
        write_workbook(tables, buffer, "en")
        workbooks.append(openpyxl.load_workbook(buffer))
    assert workbooks[0].sheetnames == ["Reviews", "Class summary", "Grades"]
    assert_same_workbook(workbooks[1], workbooks[0])


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    offset=st.integers(0, 1000),
    start=st.datetimes(datetime(1900, 1, 1), datetime(2070, 1, 1)),
    zone=st.sampled_from(["America/New_York", "Europe/London", "Australia/Lord_Howe"]),
    answer=st.text(max_size=20) | st.none(),
    score=st.floats(0, 1),
)
def test_fast_xlsx_matches_for_any_values(
    db_session, history, offset, start, zone, answer, score
):
    """Whatever is stored, does the fast XLSX read back as the generic one?"""
    store_awkward_values(db_session, history, offset, start.replace(tzinfo=UTC))
    first = history.reviews["ana"][0]
    db_session.execute(
        update(Review).where(Review.id == first).values(answer_text=answer, score=score)
    )
    history.classroom.timezone = zone
    db_session.flush()
    fast, generic = both_workbooks(db_session, history.classroom)
    assert_same_workbook(generic, fast)


def test_fast_xlsx_states_its_size_and_numbers_its_rows(db_session, history):
    """Does openpyxl's read-only mode see the sheet's size, each row numbered and
    each cell after an empty value referenced?"""
    store_awkward_values(db_session, history)
    db_session.execute(update(Membership).values(student_number=None))
    db_session.flush()
    options = ExportOptions(base_url="https://quiz.example/")
    (table,) = class_export(db_session, history.classroom, "reviews", options)
    buffer = io.BytesIO()
    write_workbook([table], buffer, "en")
    with zipfile.ZipFile(buffer) as package:
        sheet = package.read("xl/worksheets/sheet1.xml").decode("utf-8")
    numbers = [int(n) for n in re.findall(r'<row r="(\d+)"', sheet)]
    assert numbers == list(range(1, table.count + 2))
    assert "<c/>" not in sheet and "\x01" not in sheet
    assert f'<dimension ref="A1:W{table.count + 1}"/>' in sheet
    # No student number: the name's cell says it is in column D.
    assert '<c r="D2" t="inlineStr">' in sheet
    read_only = openpyxl.load_workbook(buffer, read_only=True)["Reviews"]
    assert (read_only.max_row, read_only.max_column) == (table.count + 1, 23)
    whole = openpyxl.load_workbook(buffer)["Reviews"]
    assert list(read_only.values) == list(whole.values)


@pytest.mark.parametrize("gaps", range(6))
def test_fast_xlsx_cells_after_empty_values_land_in_their_columns(
    db_session, history, gaps
):
    """With scores, times taken, answers, problems, lessons or usernames missing,
    does every cell still read back in the generic path's column?"""
    store_awkward_values(db_session, history, n_offset=gaps)
    ids = [i for ids in history.reviews.values() for i in ids]
    for n, review_id in enumerate(ids, gaps):
        db_session.execute(
            update(Review)
            .where(Review.id == review_id)
            .values(
                score=(None, 0.5)[n % 2],
                duration_ms=(None, 1200, None)[n % 3],
                answer_text=(None, "", "x")[n % 3],
                problem_seed=(None, 7)[n % 2],
            )
        )
    db_session.execute(update(User).where(User.username == "bo").values(username=""))
    db_session.execute(text("UPDATE items SET lesson_id = NULL WHERE id LIKE '%1%'"))
    db_session.flush()
    fast, generic = both_workbooks(db_session, history.classroom)
    assert_same_workbook(generic, fast)
