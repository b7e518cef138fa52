"""The reviews export's rows finished by SQLite itself: the one fast-path hook.

A class can hold a million reviews. On SQLite (through Python's sqlite3
module), the SELECT makes each review's finished CSV record
(`csv_records`) or XLSX `<row>` (`xlsx_rows`), and Python only joins them:
`bench/export.py` measures what that buys against the generic writers. Any
other database, and any other format, writes the typed rows generically.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy.orm import Session

from quizsvc.exports import queries
from quizsvc.exports.sqlite_fast import csv_records, xlsx_rows
from quizsvc.exports.sqlite_fast.shared import Shown, lines, stored_span, supported
from quizsvc.exports.tables import Column, FinishedRows

_BUILDERS = {"csv": csv_records.records_query, "xlsx": xlsx_rows.rows_query}


def review_records(
    session: Session,
    learners: Any,
    bounds: queries.Bounds,
    zone: ZoneInfo,
    base: str,
    columns: Sequence[Column],
) -> FinishedRows | None:
    """Return how to make the reviews export's finished rows, or None off SQLite.

    `learners` is the class's learners subquery; the rows are those of
    `queries.review_rows` over `queries.reviews_query(learners, bounds)`,
    with each value shown as its column (of `columns`) shows it.
    """
    if not supported(session):
        return None
    shows = {col.key: col.show for col in columns}

    def finished(file_format: str, language: str) -> Iterator[bytes] | None:
        build = _BUILDERS.get(file_format)
        if build is None:
            return None

        def show(key: str) -> Any:
            function = shows.get(key)
            if function is None:
                return lambda value: value
            return lru_cache(maxsize=256)(lambda value: function(value, language))

        item_type, skills, lesson = show("item_type"), show("skills"), show("lesson")
        items = {
            item_id: (item_type(info.type), skills(info.skills), lesson(info.lesson_id))
            for item_id, info in queries.items(session).items()
        }
        readable, show_answer = queries.readable_answers(session), shows["answer"]
        shown = Shown(
            show("correct"),
            show("misconception"),
            show("problem_kind"),
            lambda item_id, text: show_answer(readable(item_id, text), language),
        )
        span = stored_span(session, learners)
        query = build(session, learners, bounds, zone, base, items, span, shown)
        return lines(session, query)

    return finished
