"""The reviews export's XLSX rows written by SQLite itself.

Each review comes as a finished `<row>` of cells as
`quizsvc.exports.xlsx.row_xml` writes them. Integers, 0 and 1 scores,
booleans and plain text are cut in SQL; other values (text with XML's special
characters, control characters or edge spaces, fractional scores) and the
datetimes' serial numbers go to Python's `cell` functions. Empty values have
no cell; a cell that may follow one carries its reference when it does (a
CASE on the value before it).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import (
    ColumnElement,
    Integer,
    LargeBinary,
    String,
    bindparam,
    case,
    cast,
    func,
    literal,
    true,
)
from sqlalchemy import type_coerce as as_type
from sqlalchemy.orm import Session

from quizsvc.exports import xlsx
from quizsvc.exports.queries import Bounds, in_range
from quizsvc.exports.sqlite_fast import shared
from quizsvc.models import Explanation, Review
from quizsvc.services.sharing import answer_for_teachers


def rows_query(
    session: Session,
    learners: Any,
    bounds: Bounds,
    zone: ZoneInfo,
    base: str,
    items: dict[str, tuple[str, str, str]],
    span: tuple[str | None, str | None],
    shown: shared.Shown,
) -> shared.PerLearner:
    """The reviews export's SELECT of one XLSX `<row>` per row, per learner.

    `items` holds each item's type, skills and lesson; `span` is
    `shared.stored_span`.
    Registers the Python functions the SELECT calls on the session's connection.
    """
    connection = session.connection()
    # Columns B to E: the learner's id, student number, name and username;
    # then whether the username is empty (the item's first cell says where
    # it is).
    since = shared.sharing_starts(connection, learners)
    people = [
        {
            "user_id": user_id,
            "since": since[user_id],
            "learner": xlsx.cells((user_id, *row), 1, gap=False),
            "username_gap": int(not xlsx.cell(row[-1])),
        }
        for user_id, *row in connection.execute(shared.people(learners))
    ]
    _register_xlsx_functions(
        connection.connection.driver_connection,
        zone,
        base,
        shown,
        # Columns F to I: the item's id, type, skills and lesson, after a
        # username or after a gap; and whether the lesson is empty.
        {
            key: (
                _utf8(xlsx.cells((key, *row), 5, gap=False)),
                _utf8(xlsx.cells((key, *row), 5)),
                not xlsx.cell(row[-1]),
            )
            for key, row in items.items()
        },
    )
    stored = shared.stored(Review.reviewed_at)
    # One printf makes the row (its cells hold no NUL: XML escapes it); as
    # bytes: Python neither decodes the row nor encodes it again to write it.
    fields = _xlsx_fields(stored, zone, span, shown)
    template = f'<row r="{xlsx.ROW}">' + "%s" * len(fields) + "</row>"
    row = func.printf(template, *fields, type_=String)
    query = shared.learner_select(cast(row, LargeBinary))
    return shared.PerLearner(in_range(query, bounds), people)


def _xlsx_fields(
    moment: ColumnElement[str], zone: ZoneInfo, span: tuple, shown: shared.Shown
) -> list[ColumnElement[str]]:
    """The row's cells: the ones SQL makes carry their reference (any may
    follow an empty value, which has no cell)."""
    kind, misconception = Review.problem_kind, Review.misconception
    answer = answer_for_teachers()
    no_answer = answer.is_(None) | (answer == "")
    return [
        _xml_int(Review.id),
        # The learner's cells (B to E), made once each.
        bindparam("learner", type_=String),
        # The item's cells (F to I), made once each, and both times (J, K).
        func.qz_xlsx_middle(
            Review.item_id,
            moment,
            _offset_seconds(moment, zone, span),
            bindparam("username_gap", type_=Integer),
            type_=String,
        ),
        # Rating, correct: never empty, nor the times before them.
        _xml_int(Review.rating),
        _xml_bool(Review.correct, shown),
        # The score, a ratio: a percentage.
        _xml_real(Review.score, xlsx.PERCENT_STYLE),
        _xml_int(Review.duration_ms, Review.score.is_(None), "O"),
        # The answer as people read it and as stored (P, Q): Python's.
        case(
            (no_answer, xlsx.EMPTY),
            else_=func.qz_xlsx_answers(
                Review.item_id,
                answer,
                Review.duration_ms.is_(None),
                type_=String,
            ),
        ),
        # Misconception, kind, seed, level and permalink (R to V): Python's
        # when there is a problem or a misconception, which are few and repeat.
        case(
            (
                misconception.is_(None) & kind.is_(None),
                _xml_int(Review.problem_seed, true(), "T")
                + _xml_int(Review.problem_level, Review.problem_seed.is_(None), "U"),
            ),
            else_=func.qz_xlsx_problem(
                misconception,
                kind,
                Review.problem_seed,
                Review.problem_level,
                no_answer,
                type_=String,
            ),
        ),
        # No permalink without a problem kind.
        _xml_text(Explanation.body, func.coalesce(kind, "") == "", "W"),
    ]


# Text inline as it is holds none of XML's specials, no control character
# (XlsxWriter writes them as _xHHHH_; tab and line ends are sent to Python too,
# which keeps them) and no "_x" (which XlsxWriter may escape). GLOB stops
# reading at a NUL: instr finds it.
_XML_SPECIAL = "*[\x01-\x1f&<>\ufffe\uffff]*"
# Leading or trailing white space makes XlsxWriter add xml:space="preserve".
_SPACES = "".join(ch for ch in map(chr, range(0x3001)) if ch.isspace())
_PLAIN_LENGTH = xlsx.MAX_TEXT // 2
_INT_EXACT = 2**53


def _reference(gap: ColumnElement[bool] | None, column: str) -> Any:
    """A cell's `r` attribute: there when the cell before it may be empty."""
    if gap is None:
        return ""
    return case((gap, f' r="{column}{xlsx.ROW}"'), else_="")


def _python_cell(
    value: Any, gap: ColumnElement[bool] | None, column: str, style: int = 0
) -> ColumnElement[str]:
    where = "" if gap is None else case((gap, column), else_="")
    return func.qz_xlsx_cell(value, where, style, type_=String)


def _xml_text(
    text: Any, gap: ColumnElement[bool] | None = None, column: str = ""
) -> ColumnElement[str]:
    """A text cell: inline as it is, or written by Python when it needs escapes."""
    plain = (
        (func.typeof(text) == "text")
        & (func.length(text) <= _PLAIN_LENGTH)
        & ~text.op("GLOB", is_comparison=True)("*_x*")
        & (func.instr(text, func.char(0)) == 0)
        & (func.trim(text, _SPACES) == text)
        & ~text.op("GLOB", is_comparison=True)(_XML_SPECIAL)
    )
    inline = literal("<c") + _reference(gap, column) + ' t="inlineStr"><is><t>'
    return case(
        (text.is_(None) | (text == ""), xlsx.EMPTY),
        (plain, inline + as_type(text, String) + "</t></is></c>"),
        else_=_python_cell(text, gap, column),
    )


def _xml_int(
    value: Any, gap: ColumnElement[bool] | None = None, column: str = ""
) -> ColumnElement[str]:
    """An integer cell: SQLite's digits where a float holds the integer exactly."""
    start = literal("<c") + _reference(gap, column) + "><v>"
    return case(
        (value.is_(None), xlsx.EMPTY),
        (
            (func.typeof(value) == "integer") & value.between(-_INT_EXACT, _INT_EXACT),
            start + as_type(value, String) + "</v></c>",
        ),
        else_=_python_cell(value, gap, column),
    )


def _xml_real(value: Any, style: int) -> ColumnElement[str]:
    """A float cell in a style: 0 and 1 in SQL, others as Python formats them."""
    real = func.typeof(value) == "real"
    return case(
        (value.is_(None), xlsx.EMPTY),
        (real & (value == 1.0), xlsx.cell(1.0, style)),
        (real & (value == 0.0), xlsx.cell(0.0, style)),
        else_=_python_cell(value, None, "", style),
    )


def _xml_bool(value: Any, shown: shared.Shown) -> ColumnElement[str]:
    """Right or wrong as the file's language shows it (a word, or a boolean)."""
    number = as_type(value, Integer)
    integer = func.typeof(number) == "integer"
    return case(
        (integer & (number != 0), xlsx.cell(shown.correct(True))),
        (integer, xlsx.cell(shown.correct(False))),
        else_=func.qz_xlsx_bool(number, type_=String),
    )


def _offset_seconds(
    moment: ColumnElement[str], zone: ZoneInfo, span: tuple
) -> ColumnElement[int]:
    """The zone's UTC offset in seconds at the stored time; NULL where Python
    must find it (an unexpected form, a sub-second offset)."""
    periods = shared.span_offsets(span, zone)
    if periods is None:
        return literal(None, Integer)

    def seconds(offset: timedelta) -> ColumnElement[int]:
        whole = int(offset.total_seconds())
        return literal(whole if whole == offset.total_seconds() else None, Integer)

    unexpected = func.length(moment) != shared.STORED_LENGTH
    branches = [(unexpected, literal(None, Integer))]
    for (_start, offset), (following, _next) in zip(periods, periods[1:], strict=False):
        boundary = following.strftime("%Y-%m-%d %H:%M:%S.%f")
        branches.append((moment < boundary, seconds(offset)))
    return case(*branches, else_=seconds(periods[-1][1]))


def _register_xlsx_functions(
    driver: Any,
    zone: ZoneInfo,
    base: str,
    shown: shared.Shown,
    items: dict[str, tuple[bytes, bytes, bool]],
) -> None:
    parse = datetime.fromisoformat
    time = f'<c s="{xlsx.DATE_STYLE}"><v>%.16G</v></c>'
    # Column J carries its reference after an empty lesson.
    times = {False: time * 2, True: xlsx.referenced(time, "J") + time}

    def middle(
        item_id: str, text: str | None, offset: int | None, username_gap: int
    ) -> bytes:
        """The item's cells, then the UTC and the local time.

        The times' serial numbers are XlsxWriter's (`xlsx.excel_serial`),
        computed from the day number and the seconds of the stored UTC time
        and the zone's offset (found in SQL) without a time-zone conversion.
        """
        after_username, after_gap, no_lesson = items[item_id]
        head = after_gap if username_gap else after_username
        moment = None if text is None else parse(text)
        days = 0 if moment is None else moment.toordinal() - _EPOCH_ORDINAL
        if offset is None or days < 61 or moment.tzinfo is not None:
            return head + _utf8(_time_cells(moment, zone, no_lesson))
        seconds = moment.hour * 3600 + moment.minute * 60 + moment.second
        fraction = moment.microsecond / 1e6
        local_days, local_seconds = days, seconds + offset
        if not 0 <= local_seconds < 86_400:
            local_days, local_seconds = divmod(days * 86_400 + local_seconds, 86_400)
        # The + 1: Excel's serials count a 29 February 1900 that never was.
        utc = days + (seconds + fraction) / 86_400 + 1
        local = local_days + (local_seconds + fraction) / 86_400 + 1
        return head + (times[no_lesson] % (utc, local)).encode("ascii")

    def problem(
        misconception: Any, kind: Any, seed: Any, level: Any, no_answer: int
    ) -> str:
        # As the generic path makes the permalink.
        permalink = f"{base}practice/{kind}/{level}/{seed}" if kind else None
        values = (
            shown.misconception(misconception), shown.problem_kind(kind), seed,
            level, permalink,
        )  # fmt: skip
        return xlsx.cells(values, 17, gap=bool(no_answer))

    def as_bool(value: Any) -> str:
        # As SQLAlchemy's Boolean reads it; never empty in practice (NOT NULL).
        return xlsx.cell(None if value is None else shown.correct(bool(value)))

    def cell(value: Any, column: str, style: int) -> str:
        if column:
            return xlsx.cell_at(value, column, style)
        return xlsx.cell(value, style)

    def answers(item_id: str, text: Any, gap: int) -> str:
        return xlsx.cells((shown.answer(item_id, text), text), 15, gap=bool(gap))

    driver.create_function("qz_xlsx_answers", 3, answers)
    driver.create_function("qz_xlsx_cell", 3, cell, deterministic=True)
    driver.create_function("qz_xlsx_bool", 1, as_bool, deterministic=True)
    driver.create_function("qz_xlsx_problem", 5, problem)
    driver.create_function("qz_xlsx_middle", 4, middle)


def _utf8(text: str) -> bytes:
    return text.encode("utf-8")


# Days from XlsxWriter's epoch (1899-12-31) to the proleptic Gregorian day 1.
_EPOCH_ORDINAL = datetime(1899, 12, 31).toordinal()


def _time_cells(moment: datetime | None, zone: ZoneInfo, gap: bool) -> str:
    """A stored UTC time as two date cells, UTC and local, the general way."""
    if moment is None:
        return xlsx.EMPTY
    moment = moment.replace(tzinfo=UTC)
    utc = xlsx.date_cell(moment)
    if gap:
        utc = xlsx.referenced(utc, "J")
    return utc + xlsx.date_cell(moment.astimezone(zone))
