"""Which tables each kind of class export holds, built for one class."""

from __future__ import annotations

from sqlalchemy.orm import Session

from quizsvc.exports.canvas import canvas_table
from quizsvc.exports.gradebook import gradebook_table
from quizsvc.exports.options import ExportOptions, check_kind
from quizsvc.exports.reviews import reviews_table, xapi_table
from quizsvc.exports.summary import summary_table
from quizsvc.exports.tables import Table
from quizsvc.models import Classroom
from quizsvc.services.grades import grade_lesson

_TABLES = {
    "reviews": (reviews_table,),
    "summary": (summary_table,),
    "canvas": (canvas_table,),
    "gradebook": (gradebook_table,),
    "xapi": (xapi_table,),
    # One XLSX file, a sheet each: the plain grades, not Canvas's import.
    "workbook": (reviews_table, summary_table, gradebook_table),
}
# The tables scored by a grade rule.
_GRADED = {canvas_table, gradebook_table}


def class_export(
    session: Session, classroom: Classroom, kind: str, options: ExportOptions
) -> list[Table]:
    """Return the tables of one export kind for a class (one per sheet)."""
    check_kind(kind, None)
    return [build(session, classroom, options) for build in _TABLES[kind]]


def check_class_export(
    session: Session, classroom: Classroom, kind: str, options: ExportOptions
) -> None:
    """Refuse, with one query, what only the class or the database can tell.

    An unknown lesson, or a retention day before the class's today, for a
    kind that grades; every other option was checked when it was read.
    """
    if _GRADED.intersection(_TABLES[kind]):
        if options.lesson_id is not None:
            grade_lesson(session, options.lesson_id)
        options.rule.check_day(classroom.timezone, options.now)
