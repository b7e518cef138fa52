"""Export formats: CSV that spreadsheets open safely, typed XLSX, JSON lines, xAPI."""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import UTC, datetime
from decimal import Decimal
from zoneinfo import ZoneInfo

import openpyxl
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from quizsvc.exports import (
    Table,
    column,
    iter_csv,
    iter_json_document,
    iter_jsonl,
    neutralize,
    render,
    write_workbook,
    xlsx,
)
from quizsvc.exports.xapi import iso_duration, statement_id

NEW_YORK = ZoneInfo("America/New_York")
COLUMNS = (
    column("name", "Name", "姓名"),
    column("count", "Count", "次数", "int"),
    column("score", "Score", "得分", "float"),
    column("right", "Correct", "是否正确", "bool"),
    column("at", "At", "时间", "datetime"),
)
MOMENT = datetime(2026, 3, 1, 15, 4, 5, 250_000, tzinfo=UTC)
ROWS = [
    ("=1+1", 3, -0.5, True, MOMENT),
    ("-0.5", -7, 0.25, False, MOMENT.astimezone(NEW_YORK)),
    ('say "hi", then\r\nleave', 0, 1e-05, None, None),
    ("学号 2026001", None, None, True, MOMENT),
]


def table(rows=ROWS, columns=COLUMNS, **extra) -> Table:
    return Table("t", {"en": "Table", "zh-CN": "表"}, columns, iter(rows), **extra)


def read_csv(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline="")))


# --- CSV ---------------------------------------------------------------------------


def test_csv_is_utf8_with_bom_crlf_and_rfc4180_quoting():
    """Does Excel get a BOM, CRLF line ends and quoted fields it can split?"""
    data = b"".join(render([table()], "csv", "zh-CN"))
    assert data.startswith("\ufeff".encode())
    text = data.decode("utf-8")
    assert text.count("\r\n") == 1 + len(ROWS) + 1  # one embedded CRLF, quoted
    assert '"say ""hi"", then\r\nleave"' in text
    rows = read_csv(text)
    assert rows[0] == ["姓名", "次数", "得分", "是否正确", "时间"]
    assert len(rows) == 1 + len(ROWS)


def test_csv_values_round_trip():
    """Does every value read back as written, with only the apostrophe added?"""
    rows = read_csv("".join(iter_csv(table(), "en")))
    assert rows[0] == ["Name", "Count", "Score", "Correct", "At"]
    assert rows[1] == ["'=1+1", "3", "-0.5", "true", "2026-03-01T15:04:05.250+00:00"]
    assert rows[2] == ["-0.5", "-7", "0.25", "false", "2026-03-01T10:04:05.250-05:00"]
    assert rows[3] == ['say "hi", then\r\nleave', "0", "1e-05", "", ""]
    assert rows[4] == ["学号 2026001", "", "", "true", "2026-03-01T15:04:05.250+00:00"]
    assert float(rows[1][2]) == -0.5 and int(rows[2][1]) == -7


@pytest.mark.parametrize(
    "text, written",
    [
        ("=SUM(A1:A9)", "'=SUM(A1:A9)"),
        ("+1+1", "'+1+1"),
        ("-2+3", "'-2+3"),
        ("@cmd", "'@cmd"),
        ("\tindented", "'\tindented"),
        ("\rcarriage", "'\rcarriage"),
        ("-0.5", "-0.5"),
        ("+3", "+3"),
        ("-1e-3", "-1e-3"),
        ("-inf", "'-inf"),
        ("a=b", "a=b"),
        ("", ""),
    ],
)
def test_neutralize_prefixes_formula_starts_only(text, written):
    """Is a formula start neutralized while a signed plain number stays as it is?"""
    assert neutralize(text) == written


@settings(max_examples=300)
@given(st.lists(st.text(), min_size=1, max_size=4))
def test_any_text_round_trips_through_csv(texts):
    """Does arbitrary typed text come back intact, except the apostrophe rule?"""
    columns = tuple(column(f"c{i}", f"C{i}", f"C{i}") for i in range(len(texts)))
    rows = read_csv("".join(iter_csv(table([tuple(texts)], columns), "en")))
    assert rows[1] == [neutralize(text) for text in texts]
    for text, back in zip(texts, rows[1], strict=True):
        if back != text:
            assert back == "'" + text and text[0] in "=+-@\t\r"


@given(st.one_of(st.integers(), st.floats(allow_nan=False, allow_infinity=False)))
def test_numbers_are_never_altered(number):
    """Is a numeric cell written as the number itself (−0.5 stays a number)?"""
    columns = (column("n", "N", "N", "float"),)
    rows = read_csv("".join(iter_csv(table([(number,)], columns), "en")))
    assert type(number)(rows[1][0]) == number
    assert not rows[1][0].startswith("'")


# --- XLSX ---------------------------------------------------------------------------


def excel_text(value):
    """Text as Excel reads it: XLSX escapes control characters as _xHHHH_."""
    if not isinstance(value, str):
        return value
    return re.sub(r"_x([0-9A-F]{4})_", lambda m: chr(int(m[1], 16)), value)


def open_xlsx(tables, language="zh-CN"):
    buffer = io.BytesIO()
    write_workbook(tables, buffer, language)
    buffer.seek(0)
    return openpyxl.load_workbook(buffer)


def test_xlsx_cells_are_typed_and_header_frozen():
    """Are numbers numbers, times dates, text text (never formulas), headers frozen?"""
    workbook = open_xlsx([table()])
    sheet = workbook["表"]
    assert sheet.freeze_panes == "A2"
    rows = list(sheet.iter_rows(values_only=True))
    assert rows[0] == ("姓名", "次数", "得分", "是否正确", "时间")
    assert rows[1] == ("=1+1", 3, -0.5, True, datetime(2026, 3, 1, 15, 4, 5, 250_000))
    # Local times keep their own wall time (New York here).
    assert rows[2][4] == datetime(2026, 3, 1, 10, 4, 5, 250_000)
    assert excel_text(rows[3][0]) == 'say "hi", then\r\nleave'
    assert rows[3][1:4] == (0, 1e-05, None)
    cells = list(sheet.iter_rows(min_row=2, max_row=2))[0]
    assert [cell.data_type for cell in cells] == ["s", "n", "n", "b", "d"]


def test_xlsx_workbook_has_one_sheet_per_table_in_english_too():
    """Does a class workbook hold each table as its own sheet?"""
    second = Table("u", {"en": "Other", "zh-CN": "另一个"}, COLUMNS, iter(ROWS[:1]))
    workbook = open_xlsx([table(), second], "en")
    assert workbook.sheetnames == ["Table", "Other"]
    assert next(workbook["Other"].iter_rows(values_only=True))[0] == "Name"


def test_xlsx_continues_on_a_new_sheet_past_the_row_limit(monkeypatch):
    """Does a table longer than a sheet continue on the next sheet with a header?"""
    monkeypatch.setattr(xlsx, "MAX_ROWS", 3)
    rows = [("x", n, 0.0, True, MOMENT) for n in range(5)]
    workbook = open_xlsx([table(rows)], "en")
    assert workbook.sheetnames == ["Table", "Table (2)", "Table (3)"]
    counts = [
        [row[1] for row in sheet.iter_rows(min_row=2, values_only=True)]
        for sheet in workbook
    ]
    assert counts == [[0, 1], [2, 3], [4]]


def test_xlsx_of_an_empty_table_still_has_its_header():
    """Does an export with no rows give a sheet with its header, not an empty file?"""
    workbook = open_xlsx([table([])], "en")
    assert list(workbook["Table"].iter_rows(values_only=True)) == [
        ("Name", "Count", "Score", "Correct", "At")
    ]


@settings(max_examples=60, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",)), min_size=1))
@example("_x0041_ looks escaped \x00")
def test_any_text_round_trips_through_xlsx(text):
    """Does typed text come back from XLSX exactly, with no apostrophe needed?"""
    columns = (column("t", "T", "T"),)
    rows = list(
        open_xlsx([table([(text,)], columns)])["表"].iter_rows(values_only=True)
    )
    assert excel_text(rows[1][0]) == text


# --- JSON ----------------------------------------------------------------------------


def test_jsonl_is_one_object_per_row_keyed_by_column():
    """Does each JSON line hold one row with ISO times and real numbers?"""
    lines = "".join(iter_jsonl(table())).splitlines()
    assert len(lines) == len(ROWS)
    first = json.loads(lines[0])
    assert first == {
        "name": "=1+1",
        "count": 3,
        "score": -0.5,
        "right": True,
        "at": "2026-03-01T15:04:05.250+00:00",
    }


def test_json_document_holds_every_table():
    """Is the learner's JSON history one valid document with both lists?"""
    second = Table("u", {"en": "Other", "zh-CN": "另一个"}, COLUMNS, iter(ROWS[:1]))
    empty = Table("v", {"en": "Empty", "zh-CN": "空"}, COLUMNS, iter([]))
    document = json.loads(
        "".join(iter_json_document({"a": table(), "b": second, "c": empty}, {"x": 1}))
    )
    assert document["x"] == 1
    assert [len(document[key]) for key in "abc"] == [len(ROWS), 1, 0]
    assert document["a"][2]["name"] == 'say "hi", then\r\nleave'
    alone = json.loads("".join(iter_json_document({"c": table([])}, {})))
    assert alone == {"c": []}


# --- xAPI pieces --------------------------------------------------------------------

DURATION = re.compile(r"PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?\Z")


@given(st.integers(min_value=0, max_value=10**9))
def test_iso_duration_reads_back_to_the_centisecond(milliseconds):
    """Does the ISO 8601 duration say the same time, to 0.01 s?"""
    text = iso_duration(milliseconds)
    match = DURATION.match(text)
    assert match and text != "PT"
    hours, minutes, seconds = (Decimal(part or 0) for part in match.groups())
    # Decimal: in floats, 8352.36 s is 8352360.000000001 ms, just over the bound.
    total_ms = (hours * 3600 + minutes * 60 + seconds) * 1000
    assert abs(total_ms - milliseconds) <= 5


def test_iso_duration_examples():
    """Are the durations the ones a person would write?"""
    assert iso_duration(4200) == "PT4.2S"
    assert iso_duration(0) == "PT0S"
    assert iso_duration(61_500) == "PT1M1.5S"
    assert iso_duration(3_600_000) == "PT1H"


def test_statement_ids_are_stable_uuid5_per_review_and_service():
    """Does re-exporting give the same id, and another review another id?"""
    first = statement_id("https://quiz.example/", 7)
    assert first == statement_id("https://quiz.example", 7)
    assert first != statement_id("https://quiz.example/", 8)
    assert first != statement_id("https://other.example/", 7)
    assert first[14] == "5"
