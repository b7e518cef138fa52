"""Canvas's gradebook import: one assignment column scored by the teacher's rule.

Student, ID, SIS User ID, SIS Login ID, Section, the assignment column, and
the "Points Possible" row under the header.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from sqlalchemy.orm import Session

from quizsvc.exports import queries
from quizsvc.exports.options import ExportOptions
from quizsvc.exports.tables import Table, column
from quizsvc.models import Classroom
from quizsvc.services import resolve_now
from quizsvc.services.class_reports import class_overview

CANVAS_COLUMNS = (
    column("student", "Student", "Student"),
    column("id", "ID", "ID"),
    column("sis_user_id", "SIS User ID", "SIS User ID"),
    column("sis_login_id", "SIS Login ID", "SIS Login ID"),
    column("section", "Section", "Section"),
)


def canvas_table(
    session: Session, classroom: Classroom, options: ExportOptions
) -> Table:
    """Return Canvas's gradebook import, one assignment scored by `options.rule`.

    - mastery: the mean, over the lesson's skills, of the learner's predicted
      recall now (a skill not started counts 0), times the points;
    - accuracy: the share of right answers to the lesson's items in the date
      range, times the points (no answers: 0).

    Headers stay in English whatever the language: Canvas matches them by name.
    """
    now = resolve_now(options.now)
    period = options.dates.period(classroom.timezone)
    lesson = queries.lesson(session, options.lesson_id)
    lesson_name = f" {lesson.title.get('en') or lesson.id}" if lesson else ""
    title = options.assignment or f"quizsvc{lesson_name} ({options.rule})"
    columns = (*CANVAS_COLUMNS, column("score", title, title, "float"))
    section = classroom.name

    def rows() -> Iterator[tuple]:
        overview = class_overview(session, classroom, period=period, now=now)
        heatmap = overview.heatmap
        if options.rule == "mastery":
            lesson_skills = [
                j
                for j, skill in enumerate(heatmap.skills)
                if lesson is not None and skill.lesson_id == lesson.id
            ]
            recall = np.where(heatmap.cards > 0, heatmap.recall, 0.0)
            shares = {
                user_id: float(recall[i, lesson_skills].sum()) / len(lesson_skills)
                for i, user_id in enumerate(heatmap.user_ids)
                if lesson_skills
            }
        elif lesson is not None:
            shares = queries.lesson_accuracy(
                session, classroom, lesson.id, period.bounds()
            )
        else:
            shares = {}
        for learner in overview.rows:
            yield (
                learner.name, None, learner.student_number, None, section,
                round(shares.get(learner.user_id, 0.0) * options.points, 2),
            )  # fmt: skip

    return Table(
        "canvas",
        {"en": "Canvas", "zh-CN": "Canvas 成绩"},
        columns,
        rows(),
        count=queries.learner_count(session, classroom),
        preamble=(("Points Possible", None, None, None, None, _points(options)),),
    )


def _points(options: ExportOptions) -> float | int:
    points = options.points
    return int(points) if float(points).is_integer() else points
