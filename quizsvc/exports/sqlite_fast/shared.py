"""What the SQLite fast paths share: per-learner queries and the zone's offsets.

A per-learner SELECT (`PerLearner`) runs once per learner of the class, in
the generic path's order (learners by id, each one's reviews by time), with
the learner's cells made once in Python as a parameter; `lines` runs it for
each learner and yields the finished rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import (
    ColumnElement,
    Integer,
    Select,
    String,
    bindparam,
    case,
    func,
    literal,
    select,
)
from sqlalchemy import type_coerce as as_type
from sqlalchemy.orm import Session

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


@dataclass(frozen=True)
class Shown:
    """How the reviews' keyed values are shown in the file's language, as the
    columns' Show functions show them (quizsvc.exports.labels)."""

    correct: Callable[[Any], Any]
    misconception: Callable[[Any], Any]
    problem_kind: Callable[[Any], Any]
    # (item id, answer as stored) -> the answer as people read it.
    answer: Callable[[str, Any], Any]


def stored_span(session: Session, learners: Any) -> tuple[str | None, str | None]:
    """The learners' first and last review times as stored (text), for the
    zone's offsets."""
    moment = stored(Review.reviewed_at)
    # Each learner's own first and last: two seeks in the (user_id,
    # reviewed_at) index, where the whole table's min and max read every
    # review of every class.
    mine = Review.user_id == learners.c.user_id
    first = select(func.min(moment)).where(mine).scalar_subquery()
    last = select(func.max(moment)).where(mine).scalar_subquery()
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


def stored(value: Any) -> ColumnElement[str]:
    return as_type(value, String)


def permalink(base: str) -> ColumnElement[str]:
    kind = Review.problem_kind
    # The generic path formats these with an f-string: None would read "None".
    permalink = literal(f"{base}practice/") + kind + "/" + text_or_none(
        Review.problem_level
    ) + "/" + text_or_none(Review.problem_seed)  # fmt: skip
    return case((func.coalesce(kind, "") != "", permalink))


def people(learners: Any) -> Select:
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


def learner_select(record: ColumnElement[Any]) -> Select:
    """One learner's reviews (the `user_id` parameter), oldest first, from the
    first one they share with the class (the `since` parameter, as stored)."""
    return (
        select(record)
        .select_from(Review)
        .outerjoin(Explanation, Explanation.review_id == Review.id)
        .where(
            Review.user_id == bindparam("user_id", type_=Integer),
            stored(Review.reviewed_at) >= bindparam("since", type_=String),
        )
        .order_by(Review.reviewed_at, Review.id)
    )


def sharing_starts(connection: Any, learners: Any) -> dict[int, str]:
    """Per learner, the stored time their shared answers start at: when they
    joined, or "" (before everything) when they share their earlier history.

    As stored text, because `lines` binds the later learners' values raw.
    """
    return {
        user_id: "" if share_history else joined_at
        for user_id, joined_at, share_history in connection.execute(
            select(
                learners.c.user_id,
                stored(learners.c.joined_at),
                learners.c.share_history,
            )
        )
    }


def text_or_none(value: Any) -> ColumnElement[str]:
    return func.coalesce(as_type(value, String), "None")


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


def span_offsets(
    span: tuple[str | None, str | None], zone: ZoneInfo
) -> list[tuple[datetime, timedelta]] | None:
    """Return the zone's offsets over a `stored_span`, or None if it is not the
    stored form the SQL cuts expect (or there are no reviews)."""
    first, last = span
    if first is None or last is None:
        return None
    if len(first) != STORED_LENGTH or len(last) != STORED_LENGTH:
        return None
    return utc_offsets(
        datetime.fromisoformat(first).replace(tzinfo=UTC),
        datetime.fromisoformat(last).replace(tzinfo=UTC),
        zone,
    )
