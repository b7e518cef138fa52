"""Which tables each kind of class export holds, built for one class."""

from __future__ import annotations

from sqlalchemy.orm import Session

from quizsvc.exports import queries
from quizsvc.exports.canvas import canvas_table
from quizsvc.exports.options import ExportOptions, check_kind
from quizsvc.exports.reviews import reviews_table, xapi_table
from quizsvc.exports.summary import summary_table
from quizsvc.exports.tables import Table
from quizsvc.models import Classroom

_TABLES = {
    "reviews": (reviews_table,),
    "summary": (summary_table,),
    "canvas": (canvas_table,),
    "xapi": (xapi_table,),
    # One XLSX file, a sheet each.
    "workbook": (reviews_table, summary_table, canvas_table),
}


def class_export(
    session: Session, classroom: Classroom, kind: str, options: ExportOptions
) -> list[Table]:
    """Return the tables of one export kind for a class (one per sheet)."""
    check_kind(kind, None)
    return [build(session, classroom, options) for build in _TABLES[kind]]


def check_class_export(session: Session, kind: str, options: ExportOptions) -> None:
    """Refuse, with one query, what only the database can tell is wrong.

    An unknown lesson for a kind that scores one; every other option was
    checked when the options were read.
    """
    if options.lesson_id is not None and canvas_table in _TABLES[kind]:
        queries.lesson(session, options.lesson_id)
