"""CSV that Excel and WPS open without an import dialog, safe to open.

UTF-8 with a byte order mark (so Chinese is not read as GBK), RFC 4180 quoting
and CRLF line ends (Python's csv module, "excel" dialect). Values are shown
as their columns say in the file's language (see quizsvc.exports.labels).
Text that starts like a formula (`=`, `+`, `-`, `@`, tab, CR) gets a leading
apostrophe so a spreadsheet shows it instead of running it; a text that is a
plain number ("-0.5") is not a formula and stays as it is, and numeric cells
are never touched. The file is produced as an iterator of chunks, so the same
code fills a file and a streamed HTTP response.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Iterator
from itertools import islice
from typing import Any

from quizsvc.exports.tables import Table

FORMULA_TRIGGERS = frozenset("=+-@\t\r")
# A number as a spreadsheet reads it: harmless even with a leading sign.
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\Z")
CHUNK_ROWS = 2000
BOM = "\ufeff"


def neutralize(text: str) -> str:
    """Prefix an apostrophe to text a spreadsheet would run as a formula."""
    if text[:1] in FORMULA_TRIGGERS and not _PLAIN_NUMBER.match(text):
        return "'" + text
    return text


def csv_field(value: Any) -> str:
    """Return one value as the CSV writer writes it in a record of several fields."""
    buffer = io.StringIO()
    # The line end matters: the writer quotes fields holding its characters.
    csv.writer(buffer, dialect="excel", lineterminator="\r\n").writerow((value, None))
    return buffer.getvalue().removesuffix(",\r\n")


def row_converter(
    table: Table, *, neutralized: bool, language: str | None = None
) -> Callable[[tuple], list]:
    """Build a function that turns a row's values into what CSV or JSON writes.

    CSV (`neutralized`, a `language`) shows each value as its column says in
    that language, guards text that may be a formula and spells truth values;
    JSON keeps the values. Called once per exported row, so the columns of
    each type are found once and the common case (text that needs no
    apostrophe) costs no call.
    """
    types = [col.type for col in table.columns]
    texts = [i for i, t in enumerate(types) if t == "text"] if neutralized else []
    times = [i for i, t in enumerate(types) if t == "datetime"]
    flags = [i for i, t in enumerate(types) if t == "bool"] if neutralized else []
    shown = table.shown(language) if language else None

    def convert(row: tuple) -> list:
        cells = list(shown(row) if shown else row)
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
            if value is not None and not isinstance(value, str):
                cells[index] = "true" if value else "false"
        return cells

    return convert


def _head(table: Table, language: str) -> tuple[io.StringIO, Any]:
    """A buffer holding the BOM and the header, and the csv writer on it."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, dialect="excel", lineterminator="\r\n")
    buffer.write(BOM)
    writer.writerow([neutralize(col.heading(language)) for col in table.columns])
    return buffer, writer


def csv_bytes(table: Table, language: str = "zh-CN") -> Iterator[bytes]:
    """Yield the table as a CSV file, UTF-8 with its byte order mark, in chunks."""
    finished = table.finished_rows("csv", language)
    if finished is not None:
        yield from _finished_blocks(table, language, finished)
        return
    for chunk in iter_csv(table, language):
        yield chunk.encode("utf-8")


def iter_csv(table: Table, language: str = "zh-CN") -> Iterator[str]:
    """Yield the table as CSV text in chunks, the byte order mark first."""
    finished = table.finished_rows("csv", language)
    if finished is not None:
        for block in _finished_blocks(table, language, finished):
            yield block.decode("utf-8")
        return
    buffer, writer = _head(table, language)
    convert = row_converter(table, neutralized=True, language=language)
    rows = iter(table)
    while chunk := list(islice(rows, CHUNK_ROWS)):
        writer.writerows(map(convert, chunk))
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
    if buffer.tell():
        yield buffer.getvalue()


def _finished_blocks(
    table: Table, language: str, finished: Iterator[bytes]
) -> Iterator[bytes]:
    """Yield the CSV of a table whose records come finished, as UTF-8."""
    buffer, writer = _head(table, language)
    convert = row_converter(table, neutralized=True, language=language)
    writer.writerows(map(convert, table.preamble))
    head = buffer.getvalue().encode("utf-8")
    lines = iter(finished)
    # The records are bytes with their line ends: joined, never decoded. The
    # head goes with the first of them, as in the generic path.
    while chunk := list(islice(lines, CHUNK_ROWS)):
        yield head + b"".join(chunk)
        head = b""
    if head:
        yield head
