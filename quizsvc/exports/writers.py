"""File formats for export tables: CSV, XLSX (one or several sheets), JSON lines.

- CSV is what Excel and WPS open without an import dialog: UTF-8 with a byte
  order mark (so Chinese is not read as GBK), RFC 4180 quoting and CRLF line
  ends (Python's csv module, "excel" dialect). Text that starts like a formula
  (`=`, `+`, `-`, `@`, tab, CR) gets a leading apostrophe so a spreadsheet shows
  it instead of running it; a text that is a plain number ("-0.5") is not a
  formula and stays as it is, and numeric cells are never touched.
- XLSX cells are typed (numbers, booleans, dates; text is always a string cell,
  never a formula, so it needs no apostrophe); the header row is frozen. Written
  with XlsxWriter in constant-memory mode: each row goes to disk as it comes;
  or, when the database made the rows' XML (SQLite), directly as zipped XML
  with the same cells (`quizsvc.exports.xlsx`).
- JSON lines: one object per row keyed by the column keys (datetimes as ISO
  8601 with milliseconds and the UTC offset, as in CSV), or, for a table of
  one "object" column (xAPI), that object itself.

CSV and JSON lines are produced as an iterator of text chunks, so the same code
fills a file and a streamed HTTP response.
"""

from __future__ import annotations

import csv
import io
import json
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from typing import IO, Any

from quizsvc.exports.tables import Table

FORMULA_TRIGGERS = frozenset("=+-@\t\r")
# A number as a spreadsheet reads it: harmless even with a leading sign.
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\Z")
CHUNK_ROWS = 2000
BOM = "\ufeff"
# Excel's limits: rows per sheet (the header included) and characters per cell.
XLSX_MAX_ROWS = 1_048_576
XLSX_MAX_TEXT = 32_767


def neutralize(text: str) -> str:
    """Prefix an apostrophe to text a spreadsheet would run as a formula."""
    if text[:1] in FORMULA_TRIGGERS and not _PLAIN_NUMBER.match(text):
        return "'" + text
    return text


def csv_field(value: Any) -> str:
    """One value as the CSV writer writes it in a record of several fields."""
    buffer = io.StringIO()
    # The line end matters: the writer quotes fields holding its characters.
    csv.writer(buffer, dialect="excel", lineterminator="\r\n").writerow((value, None))
    return buffer.getvalue().removesuffix(",\r\n")


def _row_converter(table: Table, *, neutralized: bool) -> Callable[[tuple], list]:
    """Build a function that turns a row's values into what CSV or JSON writes.

    Called once per exported row, so the columns of each type are found once
    and the common case (text that needs no apostrophe) costs no call.
    """
    types = [col.type for col in table.columns]
    texts = [i for i, t in enumerate(types) if t == "text"] if neutralized else []
    times = [i for i, t in enumerate(types) if t == "datetime"]
    flags = [i for i, t in enumerate(types) if t == "bool"] if neutralized else []

    def convert(row: tuple) -> list:
        cells = list(row)
        for index in texts:
            value = cells[index]
            if value and value[0] in FORMULA_TRIGGERS:
                cells[index] = neutralize(value)
        for index in times:
            value = cells[index]
            if value is not None:
                cells[index] = value.isoformat(timespec="milliseconds")
        for index in flags:
            value = cells[index]
            if value is not None:
                cells[index] = "true" if value else "false"
        return cells

    return convert


def iter_csv(table: Table, language: str = "zh-CN") -> Iterator[str]:
    """Yield the table as CSV text in chunks, the byte order mark first."""
    if table.csv_lines is not None:
        for block in _csv_blocks(table, language):
            yield block.decode("utf-8")
        return
    buffer = io.StringIO()
    writer = csv.writer(buffer, dialect="excel", lineterminator="\r\n")
    buffer.write(BOM)
    writer.writerow([neutralize(col.heading(language)) for col in table.columns])
    convert = _row_converter(table, neutralized=True)
    rows = iter(table)
    while True:
        chunk = list(islice(rows, CHUNK_ROWS))
        if not chunk:
            break
        writer.writerows(map(convert, chunk))
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
    if buffer.tell():
        yield buffer.getvalue()


def _csv_blocks(table: Table, language: str) -> Iterator[bytes]:
    """Yield the CSV of a table whose records are finished (`csv_lines`) as UTF-8."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, dialect="excel", lineterminator="\r\n")
    buffer.write(BOM)
    writer.writerow([neutralize(col.heading(language)) for col in table.columns])
    writer.writerows(map(_row_converter(table, neutralized=True), table.preamble))
    head = buffer.getvalue().encode("utf-8")
    lines = iter(table.csv_lines)
    # The records are bytes with their line ends: joined, never decoded. The
    # head goes with the first of them, as in the generic path.
    while chunk := list(islice(lines, CHUNK_ROWS)):
        yield head + b"".join(chunk)
        head = b""
    if head:
        yield head


def iter_jsonl(table: Table) -> Iterator[str]:
    """Yield the table as JSON lines (UTF-8 text, no BOM) in chunks."""
    keys = [col.key for col in table.columns]
    if len(keys) == 1 and table.columns[0].type == "object":
        objects: Iterable[Any] = (row[0] for row in table)
    else:
        convert = _row_converter(table, neutralized=False)
        objects = (dict(zip(keys, convert(row), strict=True)) for row in table)
    encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    while True:
        chunk = list(islice(objects, CHUNK_ROWS))
        if not chunk:
            return
        yield "".join(encode(obj) + "\n" for obj in chunk)


def iter_json_document(parts: dict[str, Table], head: dict[str, Any]) -> Iterator[str]:
    """Yield one JSON object: `head`'s fields, then each table as an array of rows."""
    yield json.dumps(head, ensure_ascii=False)[:-1]
    separator = ", " if head else ""
    for name, table in parts.items():
        yield f"{separator}{json.dumps(name)}: ["
        separator = ", "
        first = True
        for chunk in iter_jsonl(table):
            lines = chunk.rstrip("\n").replace("\n", ",\n")
            yield ("\n" if first else ",\n") + lines
            first = False
        yield "\n]"
    yield "}\n"


# --- XLSX ----------------------------------------------------------------------


def _xlsx_cell(value: Any) -> Any:
    # Cut here, in UTF-16 units as Excel counts: a string XlsxWriter has to cut
    # makes write_row stop, leaving the rest of the row empty.
    if isinstance(value, str) and len(value) > XLSX_MAX_TEXT // 2:
        from quizsvc.exports.xlsx import utf16_truncate

        return utf16_truncate(value)
    return value


def _column_width(heading: str) -> float:
    # CJK characters take about two columns of Excel's width unit.
    units = sum(2 if ord(ch) > 0x2E7F else 1 for ch in heading)
    return min(60, max(10, units + 2))


def write_xlsx(tables: Iterable[Table], target: str | IO[bytes], language: str) -> None:
    """Write tables as the sheets of one workbook (a file path or binary file).

    When a table's rows come as finished XML (`Table.xlsx_rows`), the workbook
    is written directly (`quizsvc.exports.xlsx`), its other tables too.
    """
    tables = list(tables)
    if any(table.xlsx_rows is not None for table in tables):
        from quizsvc.exports.xlsx import write_workbook

        write_workbook(tables, target, language)
        return
    import xlsxwriter

    workbook = xlsxwriter.Workbook(
        target,
        {
            "constant_memory": True,
            # Text stays text: "=1+1" or "007" typed by a learner is not
            # turned into a formula or a number.
            "strings_to_formulas": False,
            "strings_to_numbers": False,
            "strings_to_urls": False,
            # Excel has no time zones: each datetime is written as the wall
            # time of its own zone (UTC or the class's), which its column names.
            "remove_timezone": True,
            "default_date_format": "yyyy-mm-dd hh:mm:ss",
        },
    )
    header = workbook.add_format({"bold": True, "bg_color": "#E8EEF4"})
    try:
        for table in tables:
            _write_sheets(workbook, table, language, header)
    finally:
        workbook.close()


def _write_sheets(workbook: Any, table: Table, language: str, header: Any) -> None:
    headings = [col.heading(language) for col in table.columns]
    text_columns = [
        i for i, col in enumerate(table.columns) if col.type in ("text", "key")
    ]
    base = table.sheet_name(language)[:25]
    part, row_index, sheet = 1, XLSX_MAX_ROWS, None
    for row in table:
        if row_index == XLSX_MAX_ROWS:
            # A full sheet continues on the next one, with its own header.
            name = base if part == 1 else f"{base} ({part})"
            sheet = _add_sheet(workbook, name, headings, header)
            part, row_index = part + 1, 1
        if text_columns:
            row = list(row)
            for index in text_columns:
                row[index] = _xlsx_cell(row[index])
        sheet.write_row(row_index, 0, row)
        row_index += 1
    if sheet is None:
        _add_sheet(workbook, base, headings, header)


def _add_sheet(workbook: Any, name: str, headings: list[str], header: Any) -> Any:
    sheet = workbook.add_worksheet(name)
    sheet.write_row(0, 0, headings, header)
    sheet.freeze_panes(1, 0)
    for index, heading in enumerate(headings):
        sheet.set_column(index, index, _column_width(heading))
    return sheet


# --- any format ----------------------------------------------------------------

MEDIA_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "jsonl": "application/x-ndjson; charset=utf-8",
    "json": "application/json; charset=utf-8",
}


def render(tables: Sequence[Table], file_format: str, language: str) -> Iterator[bytes]:
    """Yield the export's bytes: CSV and JSON lines as rows come, XLSX when built.

    XLSX is a zip whose index comes last, so it is built in a temporary file
    first (XlsxWriter keeps memory flat) and then read out in blocks.
    """
    if file_format == "xlsx":
        with tempfile.TemporaryFile() as spool:
            write_xlsx(tables, spool, language)
            spool.seek(0)
            while block := spool.read(1 << 16):
                yield block
        return
    (table,) = tables
    if file_format == "csv" and table.csv_lines is not None:
        yield from _csv_blocks(table, language)
        return
    chunks = iter_csv(table, language) if file_format == "csv" else iter_jsonl(table)
    for chunk in chunks:
        yield chunk.encode("utf-8")


def write_file(
    tables: Sequence[Table], file_format: str, target: IO[bytes], language: str
) -> None:
    """Write the export to a binary file."""
    if file_format == "xlsx":
        write_xlsx(tables, target, language)
        return
    for block in render(tables, file_format, language):
        target.write(block)
