"""Canvas's gradebook import: one assignment column scored by the teacher's rule.

Student, ID, SIS User ID, SIS Login ID, Section, the assignment column, and
the "Points Possible" row under the header. Canvas finds each row's student
by ID, then SIS User ID (the student number), then SIS Login ID (the
username), then the name, comparing them exactly as it stores them: those
columns are written as they are, without the CSV formula guard (roster
imports refuse student numbers that start like a formula instead). The
column headers stay in English whatever the language, as Canvas matches them
by name; the assignment's default title is in the export's language.
"""

from __future__ import annotations

from collections.abc import Iterator

from sqlalchemy.orm import Session

from quizsvc.exports import queries
from quizsvc.exports.options import ExportOptions, check_assignment_title
from quizsvc.exports.tables import Table, column
from quizsvc.models import Classroom, Lesson
from quizsvc.services import resolve_now
from quizsvc.services.classes import class_learners, learner_name
from quizsvc.services.errors import InvalidInput
from quizsvc.services.grades import grade_lesson, grade_shares

CANVAS_COLUMNS = (
    column("student", "Student", "Student", "identity"),
    column("id", "ID", "ID", "identity"),
    column("sis_user_id", "SIS User ID", "SIS User ID", "identity"),
    column("sis_login_id", "SIS Login ID", "SIS Login ID", "identity"),
    column("section", "Section", "Section"),
)
LANGUAGES = ("zh-CN", "en")


def assignment_titles(
    lesson: Lesson | None, options: ExportOptions, classroom: Classroom
) -> dict[str, str]:
    """Return the assignment column's title in each language.

    The teacher's title, else "quizsvc <lesson> (<rule>)" in the language: the
    lesson's title, or its id when the title is one Canvas would misread.
    """
    if options.assignment is not None:
        return dict.fromkeys(LANGUAGES, options.assignment)
    titles = {}
    for language in LANGUAGES:
        rule = options.rule.title(language, classroom.timezone, options.now)
        wrap = "（{}）" if language == "zh-CN" else " ({})"
        names = [lesson.title.get(language), lesson.id] if lesson else []
        for name in [*filter(None, names), None]:
            candidate = f"quizsvc {name}" if name else "quizsvc"
            candidate += wrap.format(rule)
            try:
                titles[language] = check_assignment_title(candidate)
                break
            except InvalidInput:
                continue
    return titles


def canvas_table(
    session: Session, classroom: Classroom, options: ExportOptions
) -> Table:
    """Return Canvas's gradebook import: one row per learner, scored by the rule."""
    now = resolve_now(options.now)
    lesson = grade_lesson(session, options.lesson_id)
    title = assignment_titles(lesson, options, classroom)
    columns = (*CANVAS_COLUMNS, column("score", title["en"], title["zh-CN"], "float"))
    section = classroom.name

    def rows() -> Iterator[tuple]:
        period = options.dates.period(classroom.timezone)
        shares = grade_shares(
            session, classroom, options.rule, lesson, period=period, now=now
        )
        for member in class_learners(session, classroom):
            yield (
                learner_name(member), None, member.student_number,
                member.user.username, section,
                round(shares.get(member.user_id, 0.0) * options.points, 2),
            )  # fmt: skip

    return Table(
        "canvas",
        {"en": "Canvas", "zh-CN": "Canvas 成绩"},
        columns,
        rows(),
        count=queries.learner_count(session, classroom),
        preamble=(("Points Possible", None, None, None, None, points(options)),),
    )


def points(options: ExportOptions) -> float | int:
    """Return the points possible, as a whole number when it is one."""
    value = options.points
    return int(value) if float(value).is_integer() else value
