"""Answers a teacher can read, in every export: option texts, matrices as rows
of plain numbers, orderings as step texts, with `answer_raw` beside them."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta

import openpyxl
import pytest

from quizsvc.exports import iter_csv, iter_jsonl, write_workbook
from quizsvc.exports.kinds import class_export
from quizsvc.exports.options import ExportOptions
from quizsvc.scheduling import GradedAnswer
from quizsvc.services.bank_sync import sync_bank
from quizsvc.services.classes import create_class, join_class
from quizsvc.services.users import create_user
from tests.factories import record_answer

NOW = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)


def text(zh: str, en: str) -> dict[str, str]:
    return {"zh-CN": zh, "en": en}


def option(key, zh, en, correct=False):
    return {"id": key, "text": text(zh, en), "correct": correct,
            "misconception": None, "why": None}  # fmt: skip


READABLE_ITEMS = {
    "q-choice": (
        "lesson-16", "choice", ["scores"],
        {"multiple": True, "options": [
            option("a", "查询 Q", "the query Q", True),
            option("b", "键 K", "the key K"),
            option("c", "值 V", "the value V", True),
        ]},
    ),
    "q-ordering": (
        "lesson-16", "ordering", ["scores"],
        {"steps": [
            {"id": "dot", "text": text("点积", "dot products")},
            {"id": "scale", "text": text("除以 √d", "divide by √d")},
            {"id": "softmax", "text": text("按行 softmax", "softmax per row")},
        ]},
    ),
    "q-generated": (
        "lesson-16", "generated", ["scores"], {"kind": "scores", "level": 1},
    ),
    "q-numeric": (
        "lesson-16", "numeric", ["scores"], {"answer": 0.5, "tolerance": 0.01},
    ),
}  # fmt: skip
ANSWERS = [
    ("q-choice", "a,c"),
    ("q-ordering", json.dumps(["scale", "dot", "softmax"])),
    ("q-generated", json.dumps({"S": [["0", "4"], ["0", "２"]]})),
    ("q-numeric", "=1/2"),
]
READABLE = {
    "zh-CN": ["查询 Q；值 V", "除以 √d → 点积 → 按行 softmax", "S = [[0, 4], [0, 2]]"],
    "en": [
        "the query Q; the value V",
        "divide by √d → dot products → softmax per row",
        "S = [[0, 4], [0, 2]]",
    ],
}


@pytest.fixture
def classroom(db_session, make_bank):
    bank = make_bank(
        lessons={"lesson-16": {"number": 16}},
        skills={"scores": {"lesson": "lesson-16", "order": 1}},
        questions=READABLE_ITEMS,
    )
    sync_bank(db_session, bank, now=NOW - timedelta(days=9))
    teacher = create_user(db_session, "teach", role="teacher")
    room = create_class(db_session, teacher, "高二（3）班", now=NOW - timedelta(days=8))
    ana = create_user(db_session, "ana")
    join_class(
        db_session,
        ana,
        room.join_code,
        student_number="01",
        now=NOW - timedelta(days=8),
    )
    for n, (item_id, typed) in enumerate(ANSWERS):
        record_answer(
            db_session, ana, item_id, graded=GradedAnswer(correct=False),
            answer_text=typed, now=NOW - timedelta(days=5 - n),
        )  # fmt: skip
    db_session.commit()
    return room


def tables(session, room):
    """The reviews table twice: as the export makes it, and without the SQLite
    fast path (the generic writers)."""
    options = ExportOptions(base_url="https://quiz.example/")
    (made,) = class_export(session, room, "reviews", options)
    (generic,) = class_export(session, room, "reviews", options)
    generic.finished = None
    return made, generic


@pytest.mark.parametrize("lang", ["zh-CN", "en"])
def test_csv_shows_readable_answers_beside_the_raw_ones(db_session, classroom, lang):
    for table in tables(db_session, classroom):
        rows = list(csv.reader(io.StringIO("".join(iter_csv(table, lang)))))
        header, body = rows[0], rows[1:]
        readable = header.index("作答" if lang == "zh-CN" else "Answer")
        raw = header.index("作答原始数据" if lang == "zh-CN" else "Answer as stored")
        assert raw == readable + 1
        assert [row[readable] for row in body[:3]] == READABLE[lang]
        assert [row[raw] for row in body] == [typed for _, typed in ANSWERS[:3]] + [
            "'=1/2"  # the formula guard, as every typed text has it
        ]
        assert body[3][readable] == "'=1/2"


def test_xlsx_shows_readable_answers_beside_the_raw_ones(db_session, classroom):
    for table in tables(db_session, classroom):
        buffer = io.BytesIO()
        write_workbook([table], buffer, "en")
        sheet = openpyxl.load_workbook(buffer).active
        header = [cell.value for cell in sheet[1]]
        readable, raw = header.index("Answer"), header.index("Answer as stored")
        values = [[cell.value for cell in row] for row in sheet.iter_rows(min_row=2)]
        assert [row[readable] for row in values[:3]] == READABLE["en"]
        assert [row[raw] for row in values[:3]] == [typed for _, typed in ANSWERS[:3]]


def test_json_lines_and_xapi_keep_both_languages(db_session, classroom):
    (table, _generic) = tables(db_session, classroom)
    rows = [json.loads(line) for line in "".join(iter_jsonl(table)).splitlines()]
    assert rows[0]["answer"] == {"zh-CN": READABLE["zh-CN"][0], "en": READABLE["en"][0]}
    assert rows[0]["answer_raw"] == "a,c"
    options = ExportOptions(base_url="https://quiz.example/")
    (statements,) = class_export(db_session, classroom, "xapi", options)
    first = next(iter(statements))[0]
    readable = first["context"]["extensions"]
    (shown,) = [v for k, v in readable.items() if k.endswith("readable-response")]
    assert shown == {"zh-CN": READABLE["zh-CN"][0], "en-US": READABLE["en"][0]}
    assert first["result"]["response"] == "a,c"  # the ids, as xAPI reads them
