"""The direct XLSX writer makes the workbook XlsxWriter makes, as openpyxl reads it."""

from __future__ import annotations

import io
import zipfile
from datetime import UTC, date, datetime, timedelta, timezone

import openpyxl
from hypothesis import given, settings
from hypothesis import strategies as st

from quizsvc.exports import Table, column, write_xlsx, writers, xlsx
from tests.exportutil import assert_same_workbook

HOSTILE_TEXTS = (
    "=HYPERLINK(\"http://evil.example\",\"click\")", "+1", "-0.5", "@sum", "007",
    "a & b < c > d", 'say "x" and \'y\'', "tab\there", "line\nbreak\r\n",
    "nul\x00byte", "bell\x07", "\x1f unit separator", "_x0041_ stays literal",
    "_x00e9_", " leading space", "trailing space ", "\u3000全角空格", "学生\u3000",
    "\xa0nbsp", "\ufffe\uffff", "学生 王小明", "😀 astral", "", "</t></is></c>",
)  # fmt: skip

texts = st.one_of(
    st.sampled_from(HOSTILE_TEXTS),
    st.text(st.characters(exclude_categories=["Cs"]), max_size=40),
)
moments = st.one_of(
    st.datetimes(datetime(1900, 1, 1), datetime(2100, 1, 1)),
    st.dates(date(1900, 1, 1), date(2100, 1, 1)),
    st.datetimes(
        datetime(1901, 1, 1),
        datetime(2099, 1, 1),
        timezones=st.sampled_from([UTC, timezone(timedelta(hours=-5, minutes=-30))]),
    ),
)
values = st.one_of(
    st.none(),
    texts,
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([-0.0, 0.0, 1.0, 1 / 3, 0.1 + 0.2, 1e-5, 1e15, 1e16, 2.0**53 + 2]),
    moments,
)
COLUMNS = tuple(column(f"c{i}", f"Column {i}", f"第{i}列") for i in range(5))


def table(rows, columns=COLUMNS) -> Table:
    return Table("t", {"en": "Rows", "zh-CN": "行"}, columns, list(rows))


def both_workbooks(make_tables, language="zh-CN"):
    """The same tables through XlsxWriter and through the direct writer."""
    generic, direct = io.BytesIO(), io.BytesIO()
    write_xlsx(make_tables(), generic, language)
    xlsx.write_workbook(make_tables(), direct, language)
    return (
        openpyxl.load_workbook(generic),
        openpyxl.load_workbook(direct),
        direct.getvalue(),
    )


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(*[values] * 5), max_size=8))
def test_any_row_reads_back_as_xlsxwriter_writes_it(rows):
    """Do typed values of every kind read back with XlsxWriter's value and type?"""
    generic, direct, _ = both_workbooks(lambda: [table(rows)])
    assert_same_workbook(generic, direct)


def test_hostile_text_is_escaped_not_run():
    """Are formulas, control characters and XML specials plain text cells?"""
    rows = [(text, None, None, None, None) for text in HOSTILE_TEXTS]
    generic, direct, data = both_workbooks(lambda: [table(rows)], "en")
    assert_same_workbook(generic, direct)
    sheet = direct["Rows"]
    assert sheet["A2"].value.startswith("=HYPERLINK") and sheet["A2"].data_type == "s"
    assert sheet["A11"].value == "nul_x0000_byte"
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        assert "<f>" not in package.read("xl/worksheets/sheet1.xml").decode()


def test_long_text_is_cut_at_excels_limit_in_utf16_units():
    """Is text beyond 32,767 UTF-16 units cut where XlsxWriter cuts it?"""
    rows = [("x" * 40_000, "😀" * 20_000, "a" + "😀" * 16_383, "b" * 32_767, None)]
    generic, direct, _ = both_workbooks(lambda: [table(rows)])
    assert_same_workbook(generic, direct)
    assert len(direct["行"]["B2"].value) == 16_383


LAST_MICROSECOND = datetime(2026, 3, 8, 6, 59, 59, 999_999)


def test_numbers_and_times_keep_their_types():
    """Do big integers, -0.0, fractions and dates stay numbers and dates?"""
    rows = [
        (2**53 + 1, -(2**62), -0.0, 0.1 + 0.2, LAST_MICROSECOND),
        (-7, 1e-5, True, False, datetime(1900, 1, 1, 12, tzinfo=UTC)),
        (0, 1.0, date(1900, 1, 1), "", datetime(1900, 3, 1)),
    ]
    generic, direct, _ = both_workbooks(lambda: [table(rows)])
    assert_same_workbook(generic, direct)
    assert direct["行"]["E2"].value == datetime(2026, 3, 8, 7, 0)  # read to the ms
    assert direct["行"]["A4"].value == 0 and direct["行"]["B4"].value == 1
    assert direct["行"]["C4"].is_date


def test_several_tables_and_an_empty_one_are_sheets_with_headers():
    """Does each table get its sheet, a frozen bold header, even with no rows?"""
    second = Table("s", {"en": "Second", "zh-CN": "第二"}, COLUMNS[:2], [])
    generic, direct, _ = both_workbooks(
        lambda: [table([(1, "a", None, None, None)]), second], "en"
    )
    assert direct.sheetnames == ["Rows", "Second"]
    assert_same_workbook(generic, direct)


def test_a_full_sheet_continues_on_the_next(monkeypatch):
    """Past Excel's row limit, do the rows go on in "<title> (2)" with a header?"""
    monkeypatch.setattr(writers, "XLSX_MAX_ROWS", 3)
    monkeypatch.setattr(xlsx, "MAX_ROWS", 3)
    rows = [(n, None, None, None, None) for n in range(5)]
    generic, direct, _ = both_workbooks(lambda: [table(rows)], "en")
    assert direct.sheetnames == ["Rows", "Rows (2)", "Rows (3)"]
    assert_same_workbook(generic, direct)
    exact, _, _ = both_workbooks(lambda: [table(rows[:4])], "en")
    assert exact.sheetnames == ["Rows", "Rows (2)"]


def test_rows_made_elsewhere_go_in_as_they_are():
    """Are a table's ready `<row>`s written after its preamble, unchanged?"""
    ready = Table(
        "t", {"en": "Rows"}, COLUMNS[:2], rows=[], preamble=(("first", 1),),
        xlsx_rows=iter([b"<row><c><v>5</v></c><c/></row>"]),
    )  # fmt: skip
    buffer = io.BytesIO()
    write_xlsx([ready], buffer, "en")
    sheet = openpyxl.load_workbook(buffer)["Rows"]
    assert [list(r) for r in sheet.iter_rows(values_only=True)] == [
        ["Column 0", "Column 1"],
        ["first", 1],
        [5, None],
    ]


def test_empty_values_have_no_cell_and_the_next_cell_its_reference():
    """Does a row skip empty values, the cell after a gap saying where it is?"""
    row = xlsx.row_xml((1, None, "a", "", None, 2.5, True))
    assert row == (
        f'<row r="{xlsx.ROW}"><c><v>1</v></c>'
        f'<c r="C{xlsx.ROW}" t="inlineStr"><is><t>a</t></is></c>'
        f'<c r="F{xlsx.ROW}"><v>2.5</v></c><c t="b"><v>1</v></c></row>'
    )
    letters = [xlsx.column_letter(i) for i in (0, 25, 26, 701, 702)]
    assert letters == ["A", "Z", "AA", "ZZ", "AAA"]
