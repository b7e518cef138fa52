"""A class with a known history, for tests of exports (services, CLI, API)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import openpyxl
from sqlalchemy.orm import Session

from quizsvc import scheduling
from quizsvc.models import Classroom, User
from quizsvc.services.bank_sync import sync_bank
from quizsvc.services.classes import create_class, join_class, leave_class
from quizsvc.services.reviews import record_explanation
from quizsvc.services.self_assessments import record_self_assessment
from quizsvc.services.users import create_user
from tests.factories import record_answer

# Every export test looks at the class from here.
NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
CLASS_ZONE = "America/New_York"
# Typed text that a spreadsheet would run, and text that only looks like it.
HOSTILE_NAME = '=HYPERLINK("http://evil.example","click")'
TRICKY_ANSWERS = ("=1+1", "-0.5", '"quoted", with a comma\nand a new line', "@sum")


def export_bank(make_bank):
    """One lesson, two skills, one item of each of the six types."""
    return make_bank(
        lessons={"lesson-16": {"number": 16}},
        skills={
            "scores": {"lesson": "lesson-16", "order": 1},
            "weights": {"lesson": "lesson-16", "order": 2},
        },
        questions={
            "q-choice": ("lesson-16", "choice", ["scores"]),
            "q-numeric": ("lesson-16", "numeric", ["scores"]),
            "q-cloze": ("lesson-16", "cloze", ["weights"]),
            "q-recall": ("lesson-16", "recall", ["weights"]),
            "q-ordering": ("lesson-16", "ordering", ["weights", "scores"]),
            "q-generated": ("lesson-16", "generated", ["weights"]),
        },
    )


@dataclass
class ClassHistory:
    """What was stored: the class, its people and the reviews by learner."""

    classroom: Classroom
    teacher: User
    learners: dict[str, User]
    reviews: dict[str, list[int]] = field(default_factory=dict)
    outsider_reviews: list[int] = field(default_factory=list)


def answer(session, user, item_id, at, *, correct=True, score=None, **extra) -> int:
    """Store one answer at `at`; return the review id."""
    if item_id == "q-recall":
        result = record_answer(
            session, user, item_id, self_rating="good" if correct else "again",
            now=at, **extra,
        )  # fmt: skip
    else:
        graded = scheduling.GradedAnswer(
            correct=correct, score=(1.0 if correct else 0.0) if score is None else score
        )
        result = record_answer(session, user, item_id, graded=graded, now=at, **extra)
    return result.id


def build_class_history(session: Session, bank) -> ClassHistory:
    """A teacher's class in New York time with three learners and an outsider."""
    sync_bank(session, bank, now=NOW - timedelta(days=60))
    teacher = create_user(session, "teach", role="teacher")
    classroom = create_class(
        session,
        teacher,
        "高二（3）班",
        timezone=CLASS_ZONE,
        now=NOW - timedelta(days=40),
    )
    ana = create_user(session, "ana")
    bo = create_user(session, "bo", display_name="Bo from the profile")
    cy = create_user(session, "cy")
    outsider = create_user(session, "dan")
    join_class(session, ana, classroom.join_code, student_number="2026001",
               display_name=HOSTILE_NAME)  # fmt: skip
    join_class(session, bo, classroom.join_code, student_number="2026002")
    join_class(session, cy, classroom.join_code, student_number="2026003")
    history = ClassHistory(classroom, teacher, {"ana": ana, "bo": bo, "cy": cy})

    start = NOW - timedelta(days=20)
    ana_reviews = []
    for offset, (item_id, typed) in enumerate(
        [("q-choice", "b"), ("q-numeric", TRICKY_ANSWERS[1]),
         ("q-cloze", TRICKY_ANSWERS[0]), ("q-recall", None),
         ("q-ordering", '["dot", "scale-mask"]'), ("q-generated", TRICKY_ANSWERS[2])]
    ):  # fmt: skip
        ana_reviews.append(
            answer(
                session,
                ana,
                item_id,
                start + timedelta(days=offset, hours=3),
                answer_text=typed,
                duration_ms=4200 + offset,
            )  # fmt: skip
        )
    wrong = answer(
        session, ana, "q-generated", NOW - timedelta(days=2), correct=False,
        answer_text=TRICKY_ANSWERS[3], problem_kind="weights", problem_seed=42,
        problem_level=2, misconception="no_scale", duration_ms=61_500,
    )  # fmt: skip
    record_explanation(
        session, ana, wrong, "=我忘了除以 √d", now=NOW - timedelta(days=2)
    )
    ana_reviews.append(wrong)
    history.reviews["ana"] = ana_reviews
    # Bo answers at 03:30 UTC on 1 March: still 28 February in New York.
    history.reviews["bo"] = [
        answer(session, bo, "q-choice", datetime(2026, 3, 1, 3, 30, tzinfo=UTC),
               answer_text="a", correct=False, duration_ms=900),
        answer(session, bo, "q-numeric", datetime(2026, 3, 1, 15, 0, tzinfo=UTC),
               answer_text="0.67", score=0.5, duration_ms=120_000),
    ]  # fmt: skip
    record_self_assessment(session, ana, "scores", 1, now=NOW - timedelta(days=5))
    record_self_assessment(session, ana, "scores", 3, now=NOW - timedelta(days=1))
    # A learner who left: the teacher no longer sees their answers.
    leaver = create_user(session, "eve")
    join_class(session, leaver, classroom.join_code, student_number="2026009")
    answer(session, leaver, "q-choice", NOW - timedelta(days=3), answer_text="b")
    leave_class(session, leaver, classroom.id)
    history.outsider_reviews.append(
        answer(session, outsider, "q-choice", NOW - timedelta(days=3), answer_text="c")
    )
    # The teacher's own practice is not a learner's record either.
    answer(session, teacher, "q-choice", NOW - timedelta(days=3), answer_text="b")
    session.commit()
    return history


# --- comparing workbooks ------------------------------------------------------


def cells(workbook, rows: int, columns: int) -> dict[str, list[list[tuple]]]:
    """Every cell of every sheet: value, type, date-ness, style when a date, bold."""
    return {
        sheet.title: [
            [
                (
                    c.value,
                    type(c.value),
                    c.data_type,
                    c.is_date,
                    c.number_format if c.is_date else None,
                    c.font.b,
                )
                for c in row
            ]  # fmt: skip
            for row in sheet.iter_rows(max_row=rows, max_col=columns)
        ]
        for sheet in workbook.worksheets
    }


def assert_same_workbook(generic, direct) -> None:
    """Check two openpyxl workbooks hold the same sheets, cells, panes and widths."""
    assert direct.sheetnames == generic.sheetnames
    # The same extent: a row of empty values may be written as empty cells or
    # not at all; both read as empty.
    rows = max(sheet.max_row for sheet in [*direct, *generic])
    columns = max(sheet.max_column for sheet in [*direct, *generic])
    assert cells(direct, rows, columns) == cells(generic, rows, columns)
    for mine, theirs in zip(direct.worksheets, generic.worksheets, strict=True):
        assert mine.freeze_panes == theirs.freeze_panes == "A2"
        widths = {k: d.width for k, d in mine.column_dimensions.items()}
        for key, dimension in theirs.column_dimensions.items():
            for index in range(dimension.min, dimension.max + 1):
                letter = openpyxl.utils.get_column_letter(index)
                assert widths[letter] == dimension.width, (key, letter)
