"""The XLSX writer: every value reads back in openpyxl as what it was.

openpyxl is the oracle: each workbook is read back whole, cell by cell, and
compared with the typed values written (text as Excel stores it, numbers to
16 significant digits, datetimes as their wall time to the millisecond).
"""

from __future__ import annotations

import io
import re
import zipfile
from datetime import UTC, date, datetime, time, timedelta, timezone

import openpyxl
from hypothesis import given, settings
from hypothesis import strategies as st

from quizsvc.exports import Table, column, write_workbook, xlsx

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
# From March 1900 on: Excel's serial numbers before it count a day that never
# was, which test_the_first_months_of_1900_read_as_before pins.
moments = st.one_of(
    st.datetimes(datetime(1900, 3, 1), datetime(2100, 1, 1)),
    st.dates(date(1900, 3, 1), date(2100, 1, 1)),
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
DATE_FORMAT = "yyyy-mm-dd hh:mm:ss"


def table(rows, columns=COLUMNS) -> Table:
    return Table("t", {"en": "Rows", "zh-CN": "行"}, columns, list(rows))


def written(tables, language="zh-CN") -> tuple[openpyxl.Workbook, bytes]:
    buffer = io.BytesIO()
    write_workbook(tables, buffer, language)
    return openpyxl.load_workbook(buffer), buffer.getvalue()


def as_stored(text: str) -> str:
    """Text as Excel stores it: characters XML cannot hold as _xHHHH_ escapes
    (a literal escape keeps its underscore as _x005F_; tab, CR and LF are
    kept), at most 32,767 UTF-16 units."""
    units, cut = 0, len(text)
    for index, char in enumerate(text):
        units += 2 if ord(char) > 0xFFFF else 1
        if units > 32_767:
            cut = index
            break
    text = re.sub("(_x[0-9a-fA-F]{4}_)", r"_x005F\1", text[:cut])
    text = re.sub(
        "[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]",
        lambda match: f"_x{ord(match[0]):04X}_",
        text,
    )
    return text


def check_cell(cell, value) -> None:
    """Check one cell read back by openpyxl against the value written there."""
    if value is None or value == "":
        assert cell.value is None
    elif isinstance(value, str):
        assert (cell.data_type, cell.value) == ("s", as_stored(value))
    elif isinstance(value, bool):
        assert (cell.data_type, cell.value) == ("b", value)
    elif isinstance(value, int | float):
        assert cell.data_type == "n" and not cell.is_date
        assert cell.value == float(f"{value:.16G}")
    else:
        if isinstance(value, datetime):
            wall = value.replace(tzinfo=None)
        else:
            wall = datetime.combine(value, time())
        assert cell.is_date and cell.number_format == DATE_FORMAT
        assert abs(cell.value - wall) <= timedelta(milliseconds=1)


def check_sheet(sheet, columns, rows, language) -> None:
    """Check a sheet holds the header and exactly these rows, cell by cell."""
    header = list(sheet.iter_rows(max_row=1))[0]
    assert [c.value for c in header] == [col.heading(language) for col in columns]
    assert all(c.font.b for c in header)
    assert sheet.freeze_panes == "A2"
    # A row of empty values has no cells, so openpyxl does not count it.
    assert sheet.max_row <= 1 + len(rows) and sheet.max_column <= len(columns)
    last = 1 + len(rows)
    read = list(sheet.iter_rows(min_row=2, max_row=last, max_col=len(columns)))
    for cells, row in zip(read, rows, strict=bool(rows)):
        for cell, value in zip(cells, row, strict=True):
            check_cell(cell, value)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(*[values] * 5), min_size=1, max_size=8))
def test_any_row_reads_back_as_its_values(rows):
    """Do typed values of every kind read back with their value and type?"""
    workbook, _ = written([table(rows)])
    check_sheet(workbook["行"], COLUMNS, rows, "zh-CN")


def test_hostile_text_is_escaped_not_run():
    """Are formulas, control characters and XML specials plain text cells?"""
    rows = [(text, None, None, None, None) for text in HOSTILE_TEXTS]
    workbook, data = written([table(rows)], "en")
    check_sheet(workbook["Rows"], COLUMNS, rows, "en")
    sheet = workbook["Rows"]
    assert sheet["A2"].value.startswith("=HYPERLINK") and sheet["A2"].data_type == "s"
    assert sheet["A11"].value == "nul_x0000_byte"
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        assert "<f>" not in package.read("xl/worksheets/sheet1.xml").decode()


def test_line_breaks_read_back_as_typed():
    """Do CR, LF and CRLF inside a cell come back as typed, not as _x000D_?"""
    rows = [("x\r\ny", "a\rb", "line\n", "\r\n\r\n", " \r")]
    workbook, data = written([table(rows)])
    assert next(workbook["行"].iter_rows(min_row=2, values_only=True)) == rows[0]
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        sheet = package.read("xl/worksheets/sheet1.xml").decode()
    assert "x&#13;\ny" in sheet and "_x000D_" not in sheet


def test_one_sheet_is_selected_and_each_states_its_size():
    """Is only the first sheet selected, and does each sheet's dimension match
    its rows (openpyxl's read-only mode trusts it)?"""
    second = Table("s", {"en": "Second", "zh-CN": "第二"}, COLUMNS[:2], [(1, 2)] * 3)
    third = Table(
        "u", {"en": "Third"}, COLUMNS[:3], [(1, 2, 3)], count=1, preamble=(("p",),)
    )
    rows = [(n, None, None, None, "x") for n in range(4)]
    buffer = io.BytesIO()
    write_workbook([table(rows), second, third], buffer, "en")
    workbook = openpyxl.load_workbook(buffer)
    selected = [bool(sheet.sheet_view.tabSelected) for sheet in workbook]
    assert selected == [True, False, False]
    read_only = openpyxl.load_workbook(buffer, read_only=True)
    for sheet, (rows_, columns) in zip(
        read_only, [(5, 5), (4, 2), (3, 3)], strict=True
    ):
        assert (sheet.max_row, sheet.max_column) == (rows_, columns)
        assert len(list(sheet.rows)) == rows_


def test_long_text_is_cut_at_excels_limit_in_utf16_units():
    """Is text beyond 32,767 UTF-16 units cut, never inside a character?"""
    rows = [("x" * 40_000, "😀" * 20_000, "a" + "😀" * 16_383, "b" * 32_767, None)]
    workbook, _ = written([table(rows)])
    check_sheet(workbook["行"], COLUMNS, rows, "zh-CN")
    sheet = workbook["行"]
    assert len(sheet["A2"].value) == 32_767 and len(sheet["B2"].value) == 16_383
    assert sheet["C2"].value == "a" + "😀" * 16_383
    assert sheet["D2"].value == "b" * 32_767


LAST_MICROSECOND = datetime(2026, 3, 8, 6, 59, 59, 999_999)


def test_numbers_and_times_keep_their_types():
    """Do big integers, -0.0, fractions and dates stay numbers and dates?"""
    rows = [
        (2**53 + 1, -(2**62), -0.0, 0.1 + 0.2, LAST_MICROSECOND),
        (-7, 1e-5, True, False, datetime(1900, 3, 1, 12, tzinfo=UTC)),
        (0, 1.0, date(1900, 3, 1), "", datetime(2026, 3, 1, tzinfo=UTC)),
    ]
    workbook, _ = written([table(rows)])
    check_sheet(workbook["行"], COLUMNS, rows, "zh-CN")
    sheet = workbook["行"]
    assert sheet["E2"].value == datetime(2026, 3, 8, 7, 0)  # read to the ms
    assert sheet["A4"].value == 0 and sheet["B4"].value == 1
    assert sheet["C4"].is_date and sheet["A2"].value == 2**53


def test_the_first_months_of_1900_read_as_before():
    """Do days before 1 March 1900 keep the serial numbers Excel files had?"""
    rows = [
        (date(1900, 1, 1), datetime(1900, 1, 1, 12), datetime(1900, 2, 28, 6), None,
         None),
    ]  # fmt: skip
    workbook, _ = written([table(rows)])
    sheet = workbook["行"]
    # XlsxWriter's serials, which openpyxl reads this way: a datetime on
    # 1 January 1900 is a day earlier (serial 0.5, a time of day).
    assert sheet["A2"].value == datetime(1900, 1, 1)
    assert sheet["B2"].value == time(12)
    assert sheet["C2"].value == datetime(1900, 2, 28, 6)


def test_several_tables_and_an_empty_one_are_sheets_with_headers():
    """Does each table get its sheet, a frozen bold header, even with no rows?"""
    second = Table("s", {"en": "Second", "zh-CN": "第二"}, COLUMNS[:2], [])
    rows = [(1, "a", None, None, None)]
    workbook, _ = written([table(rows), second], "en")
    assert workbook.sheetnames == ["Rows", "Second"]
    check_sheet(workbook["Rows"], COLUMNS, rows, "en")
    check_sheet(workbook["Second"], COLUMNS[:2], [], "en")


def test_columns_are_as_wide_as_their_headings():
    """Are CJK headings given two units a character, within 10 to 60?"""
    columns = (
        column("a", "Id", "编号"),
        column("b", "A much longer English heading", "一个相当长的中文列标题啊"),
        column("c", "x" * 80, "x" * 80),
    )
    workbook, _ = written([table([(1, 2, 3)], columns)])
    widths = {k: d.width for k, d in workbook["行"].column_dimensions.items()}
    # Excel's units as XlsxWriter stored them: 10 -> 10.7109375, and so on.
    assert widths == {"A": 10.7109375, "B": 26.7109375, "C": 60.7109375}


def test_a_full_sheet_continues_on_the_next(monkeypatch):
    """Past Excel's row limit, do the rows go on in "<title> (2)" with a header?"""
    monkeypatch.setattr(xlsx, "MAX_ROWS", 3)
    rows = [(n, None, None, None, None) for n in range(5)]
    workbook, _ = written([table(rows)], "en")
    assert workbook.sheetnames == ["Rows", "Rows (2)", "Rows (3)"]
    for sheet, part in zip(workbook, (rows[:2], rows[2:4], rows[4:]), strict=True):
        check_sheet(sheet, COLUMNS, part, "en")
    exact, _ = written([table(rows[:4])], "en")
    assert exact.sheetnames == ["Rows", "Rows (2)"]


def test_rows_made_elsewhere_go_in_as_they_are():
    """Are a table's finished `<row>`s written after its preamble, unchanged?"""
    ready = Table(
        "t", {"en": "Rows"}, COLUMNS[:2], rows=[], preamble=(("first", 1),),
        finished=lambda file_format, language: iter([b"<row><c><v>5</v></c></row>"]),
    )  # fmt: skip
    workbook, _ = written([ready], "en")
    assert [list(r) for r in workbook["Rows"].iter_rows(values_only=True)] == [
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
