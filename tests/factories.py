"""Factories for tests: learners signed in, answers recorded, a class with a history,
and the checks more than one test module shares."""

from __future__ import annotations

import gettext
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import openpyxl
from sqlalchemy.orm import Session

from quizsvc import bank, bank_source, scheduling
from quizsvc.db import get_session
from quizsvc.models import Classroom, Item, Review, User
from quizsvc.services.accounts import hash_password, register
from quizsvc.services.bank_sync import sync_bank
from quizsvc.services.classes import create_class, join_class, leave_class
from quizsvc.services.reviews import (
    check_key,
    lock_learner,
    open_item,
    record_explanation,
    store_answer,
)
from quizsvc.services.self_assessments import record_self_assessment
from quizsvc.services.users import create_user

# --- Recording an answer as the drill stores it. `submit_answer` is the one way
# quizsvc records an answer (it opens, grades, stores and replays a retried key);
# tests that only need a history store through the same `store_answer` here,
# skipping opening and grading. It never replays a key: retry tests use
# `submit_answer`.


def record_answer(
    session: Session,
    user: User,
    item_id: str,
    *,
    graded: scheduling.GradedAnswer | None = None,
    self_rating: str | scheduling.Rating | None = None,
    idempotency_key: str | None = None,
    now: datetime | None = None,
    **fields: Any,
) -> Review:
    """Store one answer to `item_id` and reschedule its card; return the review.

    Auto-graded items take `graded`; recall items the learner's `self_rating`.
    `fields` are the review's other columns (duration_ms, answer_text,
    problem_kind/seed/level, misconception, verdict).
    """
    item = session.get(Item, item_id)
    assert item is not None, f"no item {item_id!r} in the test bank"
    key = check_key(idempotency_key)
    lock_learner(session, user)
    return store_answer(
        session,
        user,
        item,
        graded=graded,
        self_rating=self_rating,
        idempotency_key=key,
        now=now,
        **fields,
    )


# --- Helpers for tests of the pages and the API: learners, sign-in, open items.

PASSWORD = "correct horse battery"
CATALOG = (
    Path(__file__).resolve().parents[1]
    / "quizsvc/translations/zh_Hans_CN/LC_MESSAGES/messages.mo"
)


@cache
def _chinese_catalog() -> gettext.GNUTranslations:
    with open(CATALOG, "rb") as handle:
        return gettext.GNUTranslations(handle)


def in_chinese(error) -> str:
    """A quizsvc error (or Message) as a zh-CN page or API response shows it."""
    return error.render(_chinese_catalog().gettext, "zh-CN")


def make_learner(app, username: str) -> int:
    """Create a learner with the shared test password and return the id."""
    with app.app_context():
        session = get_session()
        user = register(session, username, PASSWORD)
        session.commit()
        return user.id


def make_teacher(app, username: str = "wang") -> int:
    """Create a teacher with the shared test password and return the id."""
    with app.app_context():
        session = get_session()
        user = create_user(
            session, username, role="teacher", password_hash=hash_password(PASSWORD)
        )
        session.commit()
        return user.id


def sign_in(client, username: str) -> None:
    """Log in through the JSON API (sets the session cookie)."""
    response = client.post(
        "/api/v1/auth/login", json={"username": username, "password": PASSWORD}
    )
    assert response.status_code == 200, response.json


def open_for(app, user_id: int, item_id: str, **problem) -> None:
    """Open an item in a learner's drill, as GET /drill would."""
    with app.app_context():
        session = get_session()
        open_item(session, session.get(User, user_id), item_id, **problem)
        session.commit()


def csrf_token(html: str) -> str:
    """The CSRF token embedded in a page."""
    return re.search(
        r'name="csrf_token" (?:type="hidden" )?value="([^"]+)"', html
    ).group(1)


# --- Helpers for tests of the learner's pages and API: the bank, answers on record.


@cache
def real_bank() -> bank.Bank:
    """The question bank in questions/, read once per test run."""
    return bank.load()


def sync_real_bank(app) -> None:
    """Load the real bank into the app's database; the app serves that bank."""
    with app.app_context():
        session = get_session()
        sync_bank(session, real_bank())
        session.commit()
    # The bank read once per run, rather than again by each test's app.
    if not app.config.get("QUESTIONS_PATH"):
        app.extensions.setdefault(bank_source.EXTENSION_KEY, real_bank())


def graded_item(skill_id: str) -> str:
    """An auto-graded bank item whose only skill is `skill_id`."""
    return next(
        q.id
        for q in real_bank().questions_for_skill(skill_id)
        if q.skills == (skill_id,) and q.type in ("choice", "numeric", "cloze")
    )


def generated_question() -> bank.Question:
    """The bank's first generated-problem item."""
    return next(q for q in real_bank().questions.values() if q.type == "generated")


def record(
    app, user_id: int, item_id: str, correct: bool, ago: timedelta, **extra
) -> None:
    """Store one auto-graded answer given `ago` before now."""
    with app.app_context():
        session = get_session()
        record_answer(
            session,
            session.get(User, user_id),
            item_id,
            graded=scheduling.GradedAnswer(correct=correct),
            now=datetime.now(UTC) - ago,
            **extra,
        )
        session.commit()


# --- A class with a known history, for tests of exports (services, CLI, API).

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
    # Teachers see answers from joining on: everyone joins before answering.
    joined = NOW - timedelta(days=30)
    join_class(session, ana, classroom.join_code, student_number="2026001",
               display_name=HOSTILE_NAME, now=joined)  # fmt: skip
    join_class(session, bo, classroom.join_code, student_number="2026002", now=joined)
    join_class(session, cy, classroom.join_code, student_number="2026003", now=joined)
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
    join_class(
        session, leaver, classroom.join_code, student_number="2026009", now=joined
    )
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


# --- helpers more than one test module uses

INTERACTION_TYPES = {
    "true-false", "choice", "fill-in", "long-fill-in", "matching", "performance",
    "sequencing", "likert", "numeric", "other",
}  # fmt: skip


UUID = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\Z"
)


TIMESTAMP = re.compile(
    r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})\Z"
)


DURATION = re.compile(
    r"P(?!$)(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?\Z"
)


LANGUAGE_TAG = re.compile(r"[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*\Z")


def check_iri(value):
    parts = urlsplit(value)
    assert parts.scheme and parts.netloc, f"not an absolute IRI: {value!r}"
    assert not re.search(r"\s", value)


def check_language_map(value):
    assert isinstance(value, dict) and value
    for tag, text in value.items():
        assert LANGUAGE_TAG.match(tag), tag
        assert isinstance(text, str)


def check_activity(activity):
    assert activity.get("objectType", "Activity") == "Activity"
    check_iri(activity["id"])
    definition = activity.get("definition", {})
    if "type" in definition:
        check_iri(definition["type"])
    for key in ("name", "description"):
        if key in definition:
            check_language_map(definition[key])
    if "interactionType" in definition:
        assert definition["interactionType"] in INTERACTION_TYPES


def validate_statement(statement):
    """Check a statement against xAPI 1.0.3's rules for what quizsvc sends."""
    assert set(statement) <= {
        "id", "actor", "verb", "object", "result", "context", "timestamp",
        "stored", "authority", "version", "attachments",
    }  # fmt: skip
    assert UUID.match(statement["id"]), statement["id"]
    actor = statement["actor"]
    assert actor.get("objectType", "Agent") == "Agent"
    identifiers = [
        k for k in ("mbox", "mbox_sha1sum", "openid", "account") if k in actor
    ]
    assert identifiers == ["account"]  # exactly one inverse functional identifier
    check_iri(actor["account"]["homePage"])
    assert isinstance(actor["account"]["name"], str) and actor["account"]["name"]
    verb = statement["verb"]
    check_iri(verb["id"])
    check_language_map(verb["display"])
    check_activity(statement["object"])
    result = statement.get("result", {})
    assert set(result) <= {"score", "success", "completion", "response", "duration",
                           "extensions"}  # fmt: skip
    for flag in ("success", "completion"):
        if flag in result:
            assert isinstance(result[flag], bool)
    if "score" in result:
        score = result["score"]
        assert -1 <= score["scaled"] <= 1
        if "min" in score and "max" in score:
            assert score["min"] < score["max"]
            assert score["min"] <= score.get("raw", score["min"]) <= score["max"]
    if "response" in result:
        assert isinstance(result["response"], str)
        if statement["object"]["definition"].get("interactionType") == "numeric":
            # A number, or a range min[:]max (xAPI 1.0.3, response patterns).
            number = r"-?(\d+(\.\d*)?|\.\d+)"
            assert re.fullmatch(rf"{number}(\[:\]{number})?", result["response"])
    if "duration" in result:
        assert DURATION.match(result["duration"]), result["duration"]
    context = statement.get("context", {})
    for kind, activities in context.get("contextActivities", {}).items():
        assert kind in ("parent", "grouping", "category", "other")
        assert isinstance(activities, list)
        for activity in activities:
            check_activity(activity)
    for key in context.get("extensions", {}):
        check_iri(key)
    assert TIMESTAMP.match(statement["timestamp"]), statement["timestamp"]
    assert "version" not in statement or statement["version"] == "1.0.0"


def fill_placeholders(rule_text: str) -> str:
    """A concrete path for a URL rule: 1 for int placeholders, "x" for others."""

    def value(match: re.Match) -> str:
        return "1" if (match.group(1) or "").startswith("int") else "x"

    return re.sub(r"<(?:([^:>]+):)?[^>]+>", value, rule_text)


def answer_body(item: dict) -> dict:
    if item["type"] == "recall":
        return {"item_id": item["item_id"], "rating": "good"}
    if item["type"] == "generated":
        return {"item_id": item["item_id"], "answer": {"S": "[[0, 0]]"}}
    if item["type"] == "ordering":
        return {"item_id": item["item_id"], "answer": ["x"]}
    return {"item_id": item["item_id"], "answer": "a"}


# --- Colour contrast as WCAG 2 defines it (relative luminance), for a11y tests.


def luminance(rgb: tuple[int, int, int]) -> float:
    channels = [c / 255 for c in rgb]
    linear = [
        c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels
    ]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(one: tuple[int, int, int], two: tuple[int, int, int]) -> float:
    high, low = sorted((luminance(one), luminance(two)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def rgb(colour: str) -> tuple[int, int, int]:
    if colour.startswith("#"):
        return tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]
    return tuple(int(x) for x in re.findall(r"\d+", colour))  # type: ignore[return-value]
