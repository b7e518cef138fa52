"""The reviews export's CSV records written by SQLite itself.

Turning each value into CSV text in Python (timestamps parsed, shifted to the
class's zone and formatted again; booleans spelled out; every user-typed text
checked; the csv module's quoting) costs far more than reading it. Here the
SELECT does that work and returns each review as one finished CSV record,
UTF-8 bytes with the line end, which Python only joins. It runs once per
learner (`shared.PerLearner`), with the learner's cells (student number, name,
username: typed text, checked once) as a parameter; a record's fields are
joined by one printf:

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
own conversion, so the output is byte for byte the CSV writer's over the
typed rows (tests/exports/test_sqlite_exports.py).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import (
    ColumnElement,
    Float,
    LargeBinary,
    String,
    bindparam,
    case,
    cast,
    func,
)
from sqlalchemy import type_coerce as as_type
from sqlalchemy.orm import Session

from quizsvc.exports.csv import FORMULA_TRIGGERS, csv_field, neutralize
from quizsvc.exports.queries import Bounds, in_range
from quizsvc.exports.sqlite_fast import shared
from quizsvc.models import Explanation, Review
from quizsvc.services.sharing import answer_for_teachers


def records_query(
    session: Session,
    learners: Any,
    bounds: Bounds,
    zone: ZoneInfo,
    base: str,
    items: dict[str, tuple[str, str, str]],
    span: tuple[str | None, str | None],
    shown: shared.Shown,
) -> shared.PerLearner:
    """The reviews export's SELECT of one CSV record per row, per learner.

    `items` holds each item's type, skills and lesson; `span` is
    `shared.stored_span`.
    Registers the Python functions the SELECT calls on the session's connection.
    """
    connection = session.connection()
    since = shared.sharing_starts(connection, learners)
    people = [
        {
            "user_id": user_id,
            "since": since[user_id],
            "learner": "," + ",".join(map(_typed_field, row)),
        }
        for user_id, *row in connection.execute(shared.people(learners))
    ]
    # The item's four fields, as the CSV writer writes its key columns.
    item_fields = {
        key: ",".join(csv_field(value) for value in (key, kind, skills, lesson))
        for key, (kind, skills, lesson) in items.items()
    }
    _register_functions(
        connection.connection.driver_connection, zone, item_fields, shown
    )
    # printf's %s stops at a NUL, which text here may hold in theory only.
    whole = all("\0" not in learner["learner"] for learner in people) and all(
        "\0" not in text for text in item_fields.values()
    )
    fields = _csv_fields(zone, span, base, shown)
    record = case(
        (_any_nul(_USER_TEXTS), _concatenated(fields)),
        else_=_printed(fields),
    ) if whole else _concatenated(fields)  # fmt: skip
    # As bytes, as the XLSX rows are: Python neither decodes nor encodes them.
    query = shared.learner_select(cast(record, LargeBinary))
    return shared.PerLearner(in_range(query, bounds), people)


def _typed_field(value: Any) -> str:
    return csv_field(neutralize(value) if isinstance(value, str) else value)


# The review's text columns, which users or quizsvc filled in.
_USER_TEXTS = (answer_for_teachers(), Review.misconception, Review.problem_kind)


def _csv_fields(
    zone: ZoneInfo, span: tuple, base: str, shown: shared.Shown
) -> list[ColumnElement[str]]:
    """The CSV record's fields; `learner` (a parameter) holds its three cells
    with the comma before each."""
    moment = shared.stored(Review.reviewed_at)
    return [
        _number(Review.id),
        _number(Review.user_id) + bindparam("learner", type_=String),
        func.qz_item(Review.item_id, type_=String),
        _utc_text(moment),
        _local_text(moment, zone, span),
        _number(Review.rating),
        case(
            (Review.correct, _flag_field(shown.correct(True))),
            else_=_flag_field(shown.correct(False)),
        ),
        _real(Review.score),
        _number(Review.duration_ms),
        case(
            (answer_for_teachers().is_(None), ""),
            else_=func.qz_answer(Review.item_id, answer_for_teachers(), type_=String),
        ),
        _typed_text(answer_for_teachers()),
        _shown_key(Review.misconception, "qz_misconception"),
        _shown_key(Review.problem_kind, "qz_problem_kind"),
        _number(Review.problem_seed),
        _number(Review.problem_level),
        _key(shared.permalink(base)),
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


def _shown_key(text: Any, function: str) -> ColumnElement[str]:
    """Text quizsvc made, shown in the file's language by Python (these values
    are few and repeat)."""
    return case((text.is_(None), ""), else_=getattr(func, function)(text, type_=String))


def _flag_field(value: Any) -> str:
    """A truth value's field as the CSV writer writes it: spelled, or shown."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return csv_field(value)


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
        (func.length(moment) == shared.STORED_LENGTH, cut),
        else_=func.qz_utc(moment, type_=String),
    )


def _local_text(
    moment: ColumnElement[str], zone: ZoneInfo, span: tuple
) -> ColumnElement[str]:
    """The stored UTC text as the zone's local ISO 8601 time, in SQL."""
    periods = shared.span_offsets(span, zone)
    if periods is None:
        return func.qz_local(moment, type_=String)
    unexpected = func.length(moment) != shared.STORED_LENGTH
    branches = [(unexpected, func.qz_local(moment, type_=String))]
    for (_start, offset), (following, _next) in zip(periods, periods[1:], strict=False):
        boundary = following.strftime("%Y-%m-%d %H:%M:%S.%f")
        branches.append((moment < boundary, _shifted(moment, offset)))
    return case(*branches, else_=_shifted(moment, periods[-1][1]))


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


def _register_functions(
    driver: Any, zone: ZoneInfo, item_fields: dict[str, str], shown: shared.Shown
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

    driver.create_function(
        "qz_misconception",
        1,
        lambda text: csv_field(shown.misconception(text)),
        deterministic=True,
    )
    driver.create_function(
        "qz_problem_kind",
        1,
        lambda text: csv_field(shown.problem_kind(text)),
        deterministic=True,
    )
    driver.create_function("qz_typed", 1, _typed_field, deterministic=True)
    driver.create_function(
        "qz_answer",
        2,
        lambda item_id, text: _typed_field(shown.answer(item_id, text)),
        deterministic=True,
    )
    driver.create_function("qz_field", 1, csv_field, deterministic=True)
    driver.create_function("qz_real", 1, lambda value: repr(float(value)))
    driver.create_function("qz_utc", 1, utc_text, deterministic=True)
    driver.create_function("qz_local", 1, local_text)
    # An unknown item fails as the generic path's look-up does.
    driver.create_function("qz_item", 1, item_fields.__getitem__, deterministic=True)
