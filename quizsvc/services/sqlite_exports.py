"""The reviews export's CSV records written by SQLite itself: the fast path.

A class can hold a million reviews. Turning each value into CSV text in Python
(timestamps parsed, shifted to the class's zone and formatted again; booleans
spelled out; every user-typed text checked; the csv module's quoting) costs
far more than reading it. Here the SELECT does that work and returns each
review as one finished CSV record, UTF-8 bytes with the line end, which Python
only joins.
It runs once per learner (`PerLearner`), in the generic order, with the
learner's cells (student number, name, username: typed text, checked once)
as a parameter; a record's fields are joined by one printf:

- the UTC time is cut from the stored text ("2026-03-01 15:04:05.250000" ->
  "2026-03-01T15:04:05.250+00:00");
- the class's local time shifts the same text by the zone's UTC offset, chosen
  by a CASE over the zone's offset changes (daylight saving) within the span
  of the stored reviews;
- floats are SQLite's text where that reads back as the same number (then it
  is Python's repr too), else Python's repr;
- text is copied as it is unless it may start a formula (user-typed columns)
  or needs quotes: only those rare values go to a Python function that
  neutralizes and quotes them as the csv module does;
- each item's four fields (id, type, skills, lesson), finished, come from a
  Python dict.

Values stored in a form the cuts do not expect go through the generic path's
own conversion, so the output is byte for byte `iter_csv`'s over the typed
rows (tests/test_sqlite_exports.py). PostgreSQL keeps the generic path.

The XLSX rows are made the same way: each review as a finished `<row>` of
cells as `quizsvc.exports.xlsx.row_xml` writes them. Integers, 0 and 1 scores,
booleans and plain text are cut in SQL; other values (text with XML's special
characters, control characters or edge spaces, fractional scores) and the
datetimes' serial numbers go to Python's `cell` functions. Empty values have
no cell; a cell that may follow one carries its reference when it does (a
CASE on the value before it).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import (
    ColumnElement,
    Float,
    Integer,
    LargeBinary,
    Select,
    String,
    bindparam,
    case,
    cast,
    func,
    literal,
    select,
    true,
)
from sqlalchemy import type_coerce as as_type
from sqlalchemy.orm import Session

from quizsvc.exports import xlsx
from quizsvc.exports.writers import FORMULA_TRIGGERS, csv_field, neutralize
from quizsvc.models import Explanation, Review, User

BATCH_ROWS = 5000
# SQLAlchemy's SQLite text form of a datetime: "YYYY-MM-DD HH:MM:SS.ffffff".
STORED_LENGTH = 26
DAY = 86_400


def supported(session: Session) -> bool:
    """Whether the session's database is SQLite through Python's sqlite3 module."""
    dialect = session.get_bind().dialect
    return dialect.name == "sqlite" and dialect.driver == "pysqlite"


@dataclass(frozen=True)
class PerLearner:
    """A SELECT of one learner's finished rows, run for each learner in turn.

    Its parameters, one dict per learner, are the learner's `user_id` and
    `learner`, their cells (student number, name, username) made once in
    Python, and what else the query needs of them; learners come in id
    order, each one's rows in time order: the generic path's order.
    """

    query: Select
    learners: list[dict[str, Any]]


def review_cells_query(
    session: Session,
    learners: Any,
    bounds: tuple[datetime | None, datetime | None],
    zone: ZoneInfo,
    base: str,
    items: dict[str, tuple[str, str, str]],
    span: tuple[str | None, str | None],
) -> PerLearner:
    """The reviews export's SELECT of one CSV record per row, per learner.

    `items` holds each item's type, skills and lesson; `span` is `stored_span`.
    Registers the Python functions the SELECT calls on the session's connection.
    """
    from quizsvc.services.exports import _in_range

    connection = session.connection()
    people = [
        {"user_id": user_id, "learner": "," + ",".join(map(_typed_field, row))}
        for user_id, *row in connection.execute(_people(learners))
    ]
    # The item's four fields, as the CSV writer writes its key columns.
    item_fields = {
        key: ",".join(csv_field(value) for value in (key, kind, skills, lesson))
        for key, (kind, skills, lesson) in items.items()
    }
    _register_functions(connection.connection.driver_connection, zone, item_fields)
    # printf's %s stops at a NUL, which text here may hold in theory only.
    whole = all("\0" not in learner["learner"] for learner in people) and all(
        "\0" not in text for text in item_fields.values()
    )
    fields = _csv_fields(zone, span, base)
    record = case(
        (_any_nul(_USER_TEXTS), _concatenated(fields)),
        else_=_printed(fields),
    ) if whole else _concatenated(fields)  # fmt: skip
    # As bytes, as the XLSX rows are: Python neither decodes nor encodes them.
    query = _learner_select(cast(record, LargeBinary))
    return PerLearner(_in_range(query, bounds), people)


def stored_span(session: Session, learners: Any) -> tuple[str | None, str | None]:
    """The learners' first and last review times as stored (text), for the
    zone's offsets."""
    stored = _stored(Review.reviewed_at)
    # Each learner's own first and last: two seeks in the (user_id,
    # reviewed_at) index, where the whole table's min and max read every
    # review of every class.
    mine = Review.user_id == learners.c.user_id
    first = select(func.min(stored)).where(mine).scalar_subquery()
    last = select(func.max(stored)).where(mine).scalar_subquery()
    query = select(func.min(first), func.max(last)).select_from(learners)
    return session.execute(query).one()


def lines(session: Session, per_learner: PerLearner) -> Iterator[Any]:
    """Run a per-learner query for each learner; yield its finished rows."""
    learners = iter(per_learner.learners)
    first = next(learners, None)
    if first is None:
        return
    result = session.connection().execute(per_learner.query, first)
    try:
        # SQLAlchemy runs the first learner's query; the others reuse its SQL
        # and parameters through the cursor: its per-call work (about 0.3 ms)
        # would be a tenth of the export's time over a thousand learners.
        context = result.context
        statement, parameters = context.statement, list(context.parameters[0])
        names = list(context.compiled.positiontup)
        cursor = result.cursor
        yield from _fetched(cursor)
        for values in learners:
            for index, name in enumerate(names):
                if name in values:
                    parameters[index] = values[name]
            cursor.execute(statement, parameters)
            yield from _fetched(cursor)
    finally:
        result.close()


def _fetched(cursor: Any) -> Iterator[Any]:
    # The rows are final: SQLAlchemy's per-row handling would be pure cost.
    while batch := cursor.fetchmany(BATCH_ROWS):
        for (line,) in batch:
            yield line


def review_rows_query(
    session: Session,
    learners: Any,
    bounds: tuple[datetime | None, datetime | None],
    zone: ZoneInfo,
    base: str,
    items: dict[str, tuple[str, str, str]],
    span: tuple[str | None, str | None],
) -> PerLearner:
    """The reviews export's SELECT of one XLSX `<row>` per row, per learner.

    `items` holds each item's type, skills and lesson; `span` is `stored_span`.
    Registers the Python functions the SELECT calls on the session's connection.
    """
    from quizsvc.services.exports import _in_range

    connection = session.connection()
    # Columns B to E: the learner's id, student number, name and username;
    # then whether the username is empty (the item's first cell says where
    # it is).
    people = [
        {
            "user_id": user_id,
            "learner": xlsx.cells((user_id, *row), 1, gap=False),
            "username_gap": int(not xlsx.cell(row[-1])),
        }
        for user_id, *row in connection.execute(_people(learners))
    ]
    _register_xlsx_functions(
        connection.connection.driver_connection,
        zone,
        base,
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
    stored = _stored(Review.reviewed_at)
    # One printf makes the row (its cells hold no NUL: XML escapes it); as
    # bytes: Python neither decodes the row nor encodes it again to write it.
    fields = _xlsx_fields(stored, zone, span)
    template = f'<row r="{xlsx.ROW}">' + "%s" * len(fields) + "</row>"
    row = func.printf(template, *fields, type_=String)
    query = _learner_select(cast(row, LargeBinary))
    return PerLearner(_in_range(query, bounds), people)


def cursor_lines(session: Session, query: Select) -> Iterator[Any]:
    """Run a one-column query; yield its values, a batch fetched at a time."""
    result = session.connection().execute(query)
    try:
        yield from _fetched(result.cursor)
    finally:
        result.close()


def _stored(value: Any) -> ColumnElement[str]:
    return as_type(value, String)


def _permalink(base: str) -> ColumnElement[str]:
    kind = Review.problem_kind
    # The generic path formats these with an f-string: None would read "None".
    permalink = literal(f"{base}practice/") + kind + "/" + _text_or_none(
        Review.problem_level
    ) + "/" + _text_or_none(Review.problem_seed)  # fmt: skip
    return case((func.coalesce(kind, "") != "", permalink))


def _people(learners: Any) -> Select:
    """The learners' ids, student numbers, names and usernames, in id order."""
    return (
        select(
            learners.c.user_id,
            learners.c.student_number,
            learners.c.display_name,
            User.username,
        )
        .join(User, User.id == learners.c.user_id)
        .order_by(learners.c.user_id)
    )


def _typed_field(value: Any) -> str:
    return csv_field(neutralize(value) if isinstance(value, str) else value)


# The review's text columns, which users or quizsvc filled in.
_USER_TEXTS = (Review.answer_text, Review.misconception, Review.problem_kind)


def _csv_fields(zone: ZoneInfo, span: tuple, base: str) -> list[ColumnElement[str]]:
    """The CSV record's fields; `learner` (a parameter) holds its three cells
    with the comma before each."""
    moment = _stored(Review.reviewed_at)
    return [
        _number(Review.id),
        _number(Review.user_id) + bindparam("learner", type_=String),
        func.qz_item(Review.item_id, type_=String),
        _utc_text(moment),
        _local_text(moment, zone, span),
        _number(Review.rating),
        case((Review.correct, "true"), else_="false"),
        _real(Review.score),
        _number(Review.duration_ms),
        _typed_text(Review.answer_text),
        _key(Review.misconception),
        _key(Review.problem_kind),
        _number(Review.problem_seed),
        _number(Review.problem_level),
        _key(_permalink(base)),
        _typed_text(Explanation.body),
    ]


def _printed(fields: list[ColumnElement[str]]) -> ColumnElement[str]:
    """The record, its fields joined with commas by one printf: SQLite copies
    it once instead of once per `||`."""
    template = ",".join(["%s"] * len(fields)) + "\r\n"
    return func.printf(template, *fields, type_=String)


def _concatenated(fields: list[ColumnElement[str]]) -> ColumnElement[str]:
    """The record, its fields joined with commas by `||`, which keeps a NUL."""
    record = fields[0]
    for field in fields[1:]:
        record = record + "," + field
    return record + "\r\n"


def _any_nul(texts: tuple[Any, ...]) -> ColumnElement[bool]:
    nul = func.char(0)
    condition = func.instr(Explanation.body, nul) > 0
    for text in texts:
        condition = condition | (func.instr(text, nul) > 0)
    return condition


def _learner_select(record: ColumnElement[Any]) -> Select:
    """One learner's reviews (the `user_id` parameter), oldest first."""
    return (
        select(record)
        .select_from(Review)
        .outerjoin(Explanation, Explanation.review_id == Review.id)
        .where(Review.user_id == bindparam("user_id", type_=Integer))
        .order_by(Review.reviewed_at, Review.id)
    )


def _xlsx_fields(
    moment: ColumnElement[str], zone: ZoneInfo, span: tuple
) -> list[ColumnElement[str]]:
    """The row's cells: the ones SQL makes carry their reference (any may
    follow an empty value, which has no cell)."""
    kind, misconception = Review.problem_kind, Review.misconception
    no_answer = Review.answer_text.is_(None) | (Review.answer_text == "")
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
        _xml_bool(Review.correct),
        _xml_real(Review.score),
        _xml_int(Review.duration_ms, Review.score.is_(None), "O"),
        _xml_text(Review.answer_text, Review.duration_ms.is_(None), "P"),
        # Misconception, kind, seed, level and permalink (Q to U): Python's
        # when there is a problem or a misconception, which are few and repeat.
        case(
            (
                misconception.is_(None) & kind.is_(None),
                _xml_int(Review.problem_seed, true(), "S")
                + _xml_int(Review.problem_level, Review.problem_seed.is_(None), "T"),
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
        _xml_text(Explanation.body, func.coalesce(kind, "") == "", "V"),
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
    value: Any, gap: ColumnElement[bool] | None, column: str
) -> ColumnElement[str]:
    where = "" if gap is None else case((gap, column), else_="")
    return func.qz_xlsx_cell(value, where, type_=String)


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


def _xml_real(value: Any) -> ColumnElement[str]:
    """A float cell: scores of 0 and 1 in SQL, others as Python formats them."""
    real = func.typeof(value) == "real"
    return case(
        (value.is_(None), xlsx.EMPTY),
        (real & (value == 1.0), "<c><v>1</v></c>"),
        (real & (value == 0.0), "<c><v>0</v></c>"),
        else_=_python_cell(value, None, ""),
    )


def _xml_bool(value: Any) -> ColumnElement[str]:
    number = as_type(value, Integer)
    integer = func.typeof(number) == "integer"
    return case(
        (integer & (number != 0), xlsx.TRUE),
        (integer, xlsx.FALSE),
        else_=func.qz_xlsx_bool(number, type_=String),
    )


def _text_or_none(value: Any) -> ColumnElement[str]:
    return func.coalesce(as_type(value, String), "None")


def _number(value: Any) -> ColumnElement[str]:
    # SQLite writes integers as Python does.
    return func.ifnull(as_type(value, String), "")


def _real(value: Any) -> ColumnElement[str]:
    """A float as Python's repr: SQLite's text where it is the same number."""
    sqlite_text = cast(value, String)
    real = func.typeof(value) == "real"
    return case(
        # The common scores first, cheaply.
        (real & (value == 1.0), "1.0"),
        (real & (value == 0.0), "0.0"),
        (value.is_(None), ""),
        (
            (func.abs(value) >= 1e-4)
            & (func.abs(value) < 1e15)
            & (cast(sqlite_text, Float) == value),
            sqlite_text,
        ),
        else_=func.qz_real(value, type_=String),
    )


# A field the CSV writer quotes holds a comma, a quote or a line break.
_NEEDS_QUOTES = '*[,"\r\n]*'
# Text that may be a formula starts with one of these ("-" first: not a range).
_FORMULA_START = "[-" + "".join(sorted(FORMULA_TRIGGERS - {"-"})) + "]*"


def _key(text: Any) -> ColumnElement[str]:
    """Text quizsvc made: quoted by Python in the rare case it needs quotes."""
    return case(
        (_quoted(text), func.qz_field(text, type_=String)),
        else_=func.ifnull(text, ""),
    )


def _typed_text(text: Any) -> ColumnElement[str]:
    """Text users typed: also neutralized, by Python, when it may be a formula."""
    formula = text.op("GLOB", is_comparison=True)(_FORMULA_START)
    return case(
        (
            formula | _quoted(text),
            func.qz_typed(text, type_=String),
        ),
        else_=func.ifnull(text, ""),
    )


def _quoted(text: Any) -> ColumnElement[bool]:
    # GLOB stops reading at a NUL: instr finds it (and what follows it).
    glob = text.op("GLOB", is_comparison=True)
    return glob(_NEEDS_QUOTES) | (func.instr(text, func.char(0)) > 0)


def _utc_text(moment: ColumnElement[str]) -> ColumnElement[str]:
    cut = (
        func.substr(moment, 1, 10, type_=String)
        + "T"
        + func.substr(moment, 12, 12, type_=String)
        + "+00:00"
    )
    return case(
        (func.length(moment) == STORED_LENGTH, cut),
        else_=func.qz_utc(moment, type_=String),
    )


def _local_text(
    moment: ColumnElement[str], zone: ZoneInfo, span: tuple
) -> ColumnElement[str]:
    """The stored UTC text as the zone's local ISO 8601 time, in SQL."""
    first, last = span
    if first is None or len(first) != STORED_LENGTH or len(last) != STORED_LENGTH:
        return func.qz_local(moment, type_=String)
    periods = utc_offsets(
        datetime.fromisoformat(first).replace(tzinfo=UTC),
        datetime.fromisoformat(last).replace(tzinfo=UTC),
        zone,
    )
    branches = [
        (func.length(moment) != STORED_LENGTH, func.qz_local(moment, type_=String))
    ]
    for (_start, offset), (following, _next) in zip(periods, periods[1:], strict=False):
        boundary = following.strftime("%Y-%m-%d %H:%M:%S.%f")
        branches.append((moment < boundary, _shifted(moment, offset)))
    return case(*branches, else_=_shifted(moment, periods[-1][1]))


def _offset_seconds(
    moment: ColumnElement[str], zone: ZoneInfo, span: tuple
) -> ColumnElement[int]:
    """The zone's UTC offset in seconds at the stored time; NULL where Python
    must find it (an unexpected form, a sub-second offset)."""
    first, last = span
    if first is None or len(first) != STORED_LENGTH or len(last) != STORED_LENGTH:
        return literal(None, Integer)
    periods = utc_offsets(
        datetime.fromisoformat(first).replace(tzinfo=UTC),
        datetime.fromisoformat(last).replace(tzinfo=UTC),
        zone,
    )

    def seconds(offset: timedelta) -> ColumnElement[int]:
        whole = int(offset.total_seconds())
        return literal(whole if whole == offset.total_seconds() else None, Integer)

    branches = [(func.length(moment) != STORED_LENGTH, literal(None, Integer))]
    for (_start, offset), (following, _next) in zip(periods, periods[1:], strict=False):
        boundary = following.strftime("%Y-%m-%d %H:%M:%S.%f")
        branches.append((moment < boundary, seconds(offset)))
    return case(*branches, else_=seconds(periods[-1][1]))


def _shifted(moment: ColumnElement[str], offset: timedelta) -> ColumnElement[str]:
    seconds = int(offset.total_seconds())
    if seconds != offset.total_seconds():  # sub-second offsets: only in history
        return func.qz_local(moment, type_=String)
    suffix = datetime(2000, 1, 1, tzinfo=timezone(offset)).isoformat(
        timespec="milliseconds"
    )[23:]
    # Whole seconds are shifted, the fraction is copied: SQLite's own
    # fraction would round where Python truncates to milliseconds.
    whole = func.strftime(
        "%Y-%m-%dT%H:%M:%S", func.substr(moment, 1, 19), f"{seconds:+d} seconds",
        type_=String,
    )  # fmt: skip
    return whole + func.substr(moment, 20, 4, type_=String) + suffix


def utc_offsets(
    first: datetime, last: datetime, zone: ZoneInfo
) -> list[tuple[datetime, timedelta]]:
    """The zone's UTC offset from `first` to `last`: (UTC instant it starts, offset).

    Found by stepping a day at a time and bisecting each change to the second;
    no zone changes its offset twice in one day.
    """

    def offset(at: int) -> timedelta:
        return datetime.fromtimestamp(at, zone).utcoffset()

    start, end = int(first.timestamp()), int(last.timestamp()) + 1
    periods = [(first, offset(start))]
    at = start
    while at < end:
        step = min(DAY, end - at)
        if offset(at + step) != periods[-1][1]:
            low, high = at, at + step  # offset(low) is the old, offset(high) the new
            while high - low > 1:
                middle = (low + high) // 2
                if offset(middle) == periods[-1][1]:
                    low = middle
                else:
                    high = middle
            periods.append((datetime.fromtimestamp(high, UTC), offset(high)))
        at += step
    return periods


def _register_functions(
    driver: Any, zone: ZoneInfo, item_fields: dict[str, str]
) -> None:
    def as_utc(text: str | None) -> datetime | None:
        if text is None:
            return None
        return datetime.fromisoformat(text).replace(tzinfo=UTC)

    def utc_text(text: str | None) -> str | None:
        moment = as_utc(text)
        return None if moment is None else moment.isoformat(timespec="milliseconds")

    def local_text(text: str | None) -> str | None:
        moment = as_utc(text)
        if moment is None:
            return None
        return moment.astimezone(zone).isoformat(timespec="milliseconds")

    driver.create_function("qz_typed", 1, _typed_field, deterministic=True)
    driver.create_function("qz_field", 1, csv_field, deterministic=True)
    driver.create_function("qz_real", 1, lambda value: repr(float(value)))
    driver.create_function("qz_utc", 1, utc_text, deterministic=True)
    driver.create_function("qz_local", 1, local_text)
    # An unknown item fails as the generic path's look-up does.
    driver.create_function("qz_item", 1, item_fields.__getitem__, deterministic=True)


def _register_xlsx_functions(
    driver: Any,
    zone: ZoneInfo,
    base: str,
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
        values = (misconception, kind, seed, level, permalink)
        return xlsx.cells(values, 16, gap=bool(no_answer))

    def as_bool(value: Any) -> str:
        # As SQLAlchemy's Boolean reads it; never empty in practice (NOT NULL).
        return xlsx.cell(None if value is None else bool(value))

    def cell(value: Any, column: str) -> str:
        return xlsx.cell_at(value, column) if column else xlsx.cell(value)

    driver.create_function("qz_xlsx_cell", 2, cell, deterministic=True)
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
