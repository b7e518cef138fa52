"""The plain gradebook: 学号, 姓名, 成绩, which the LMSs used in China import.

超星学习通, 雨课堂, Moodle and Blackboard each read a plain sheet of student
number, name and score. One row per roster entry or learner of the class:
a roster entry under the roster's name (the learner's score once they have
joined with that number, else 0), a learner not on the roster under the name
they gave the class. Scores follow the same rule as Canvas's
(quizsvc.services.grades).
"""

from __future__ import annotations

from collections.abc import Iterator

from sqlalchemy.orm import Session

from quizsvc.exports.options import ExportOptions
from quizsvc.exports.tables import Table, column
from quizsvc.models import Classroom
from quizsvc.services import resolve_now
from quizsvc.services.classes import class_learners, learner_name, roster_entries
from quizsvc.services.grades import grade_lesson, grade_shares

GRADEBOOK_COLUMNS = (
    column("student_number", "Student number", "学号"),
    column("name", "Name", "姓名"),
    column("score", "Score", "成绩", "float"),
)


def gradebook_table(
    session: Session, classroom: Classroom, options: ExportOptions
) -> Table:
    """Return one row per roster entry or learner: number, name, score by the rule."""
    now = resolve_now(options.now)
    lesson = grade_lesson(session, options.lesson_id)

    def rows() -> Iterator[tuple]:
        period = options.dates.period(classroom.timezone)
        shares = grade_shares(
            session, classroom, options.rule, lesson, period=period, now=now
        )
        learners = class_learners(session, classroom)
        by_number = {m.student_number: m for m in learners if m.student_number}
        listed = []
        for entry in roster_entries(session, classroom):
            member = by_number.get(entry.student_number)
            share = shares.get(member.user_id, 0.0) if member else 0.0
            listed.append((entry.student_number, entry.name, share))
        on_roster = {number for number, _name, _share in listed}
        for member in learners:
            if not member.student_number or member.student_number not in on_roster:
                share = shares.get(member.user_id, 0.0)
                listed.append((member.student_number, learner_name(member), share))
        # By student number (learners without one last), then name.
        listed.sort(key=lambda row: (row[0] is None, row[0] or "", row[1]))
        for number, name, share in listed:
            yield number, name, round(share * options.points, 2)

    return Table(
        "gradebook",
        {"en": "Grades", "zh-CN": "成绩"},
        GRADEBOOK_COLUMNS,
        rows(),
    )
