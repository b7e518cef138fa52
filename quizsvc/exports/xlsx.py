"""The XLSX writer: a workbook written directly as a zip of XML parts.

Every sheet of every export, on every database, is written here. Each row
arrives as finished `<row>` XML, made by `row_xml` from typed values or, for
the reviews of a SQLite class, by the database (`Table.finished`, see
quizsvc.exports.sqlite_fast), and goes straight into the worksheet part. The
part is deflated at a low level in a second thread: zlib releases the GIL, so
compressing overlaps with producing the next rows. (XlsxWriter, which wrote
these files before, spent about 160 µs of CPU per exported review, most of it
Python work per cell; this writer about 4 µs.)

The cells are the ones XlsxWriter writes in constant-memory mode, so the files
read as before: numbers as `%.16G`, booleans as `t="b"`, datetimes as serial
numbers in the date style (their wall time), text as inline strings with
control characters escaped as `_xHHHH_`. Empty values have no cell. Each row
carries its number (`r`); a cell after an empty value carries its reference
(OOXML makes it optional for a cell that follows the previous column's). The
rows are made before their number is known, so both hold `ROW`, a character
XML cannot carry, which the writer replaces with the number. The sheet's
`<dimension>` comes from the table's row count.
"""

from __future__ import annotations

import queue
import re
import threading
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from datetime import date, datetime, time, timedelta
from itertools import islice
from typing import IO, Any
from xml.sax.saxutils import quoteattr

from quizsvc.exports.tables import Table

# Excel's limits: rows per sheet (the header included) and UTF-16 units per cell.
MAX_ROWS = 1_048_576
MAX_TEXT = 32_767
# Styles (cellXfs indexes), the first three numbered as XlsxWriter numbered
# them; a ratio (0 to 1) is shown as a percentage.
HEADER_STYLE = 1
DATE_STYLE = 2
PERCENT_STYLE = 3
DATE_FORMAT = "yyyy-mm-dd hh:mm:ss"
PERCENT_FORMAT = "0.0%"
COMPRESS_LEVEL = 1
CHUNK_ROWS = 2000
# Blocks queued for the compressing thread: bounds the memory in flight.
QUEUED_BLOCKS = 8

# Stands for the row's number in rows and cell references until it is written.
ROW = "\x01"
EMPTY = ""
TRUE = '<c t="b"><v>1</v></c>'
FALSE = '<c t="b"><v>0</v></c>'
_EPOCH = datetime(1899, 12, 31)
# Excel's escapes: control characters that XML 1.0 forbids become _xHHHH_, and
# a literal "_xHHHH_" keeps its underscore as _x005F_. A carriage return is
# allowed as a character reference (a literal one would be read as a line
# feed), which every reader turns back into CR; its _x000D_ escape, which
# XlsxWriter wrote, came back from openpyxl and pandas as those 7 characters.
_ESCAPE_LITERAL = re.compile("(_x[0-9a-fA-F]{4}_)")
_CONTROL = re.compile(r"([\x00-\x08\x0b\x0c\x0e-\x1f])")
_XML_SPECIAL = re.compile("[&<>]")


def text_cell(text: str, style: int = 0) -> str:
    """A string cell, as XlsxWriter writes it inline (truncated to Excel's limit)."""
    if len(text) > MAX_TEXT // 2:
        text = utf16_truncate(text)
    if not text:
        return EMPTY if not style else f'<c s="{style}"/>'
    text = _ESCAPE_LITERAL.sub(r"_x005F\1", text)
    text = _CONTROL.sub(lambda match: f"_x{ord(match.group(1)):04X}_", text)
    text = text.replace("\ufffe", "_xFFFE_").replace("\uffff", "_xFFFF_")
    preserve = ' xml:space="preserve"' if _edge_space(text) else ""
    if _XML_SPECIAL.search(text):
        text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if "\r" in text:
        text = text.replace("\r", "&#13;")
    styled = f' s="{style}"' if style else ""
    return f'<c{styled} t="inlineStr"><is><t{preserve}>{text}</t></is></c>'


def _edge_space(text: str) -> bool:
    return text[:1].isspace() or text[-1:].isspace()


def utf16_truncate(text: str) -> str:
    """Cut text to Excel's limit of UTF-16 units, never inside a character."""
    units = 0
    for index, char in enumerate(text):
        units += 2 if ord(char) > 0xFFFF else 1
        if units > MAX_TEXT:
            return text[:index]
    return text


def number_text(number: Any) -> str:
    """A number as XlsxWriter writes it (16 significant digits)."""
    if number != number or number in (float("inf"), float("-inf")):
        raise TypeError("NAN/INF not supported in write_number()")
    return f"{number:.16G}"


def excel_serial(moment: datetime | date | time | timedelta) -> float:
    """A date or time as Excel's serial number of days, its time zone dropped."""
    if isinstance(moment, timedelta):
        return moment.days + (moment.seconds + moment.microseconds / 1e6) / 86_400
    if isinstance(moment, datetime):
        moment = moment.replace(tzinfo=None)
        # As XlsxWriter has it: a datetime on 1 January 1900 is a day earlier.
        shift = -1 if moment.isocalendar() == (1900, 1, 1) else 0
    elif isinstance(moment, date):
        moment, shift = datetime.fromordinal(moment.toordinal()), 0
    else:
        moment, shift = datetime.combine(_EPOCH, moment.replace(tzinfo=None)), 0
    delta = moment - _EPOCH
    serial = delta.days + (delta.seconds + delta.microseconds / 1e6) / 86_400
    serial += shift
    # Excel counts a 29 February 1900 that never was.
    return serial + 1 if serial > 59 else serial


def date_cell(moment: datetime) -> str:
    """A datetime cell: its wall time as a serial number, in the date style."""
    return f'<c s="{DATE_STYLE}"><v>{number_text(excel_serial(moment))}</v></c>'


def cell(value: Any, style: int = 0) -> str:
    """One value's cell, typed as XlsxWriter types it; a number in `style`."""
    kind = type(value)
    if value is None:
        return EMPTY
    if kind is str:
        return text_cell(value)
    if kind is bool:
        return TRUE if value else FALSE
    styled = f' s="{style}"' if style else ""
    if kind is int or kind is float:
        return f"<c{styled}><v>{number_text(value)}</v></c>"
    if isinstance(value, (datetime, date, time, timedelta)):
        return date_cell(value)
    if isinstance(value, str):
        return text_cell(str(value))
    return f"<c{styled}><v>{number_text(float(value))}</v></c>"


def column_letter(index: int) -> str:
    """A column's letters from its index (0 = A)."""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def referenced(text: str, column: str) -> str:
    """A cell's XML with its reference in the row `ROW`; empty stays empty."""
    return text and f'<c r="{column}{ROW}"' + text[2:]


def cell_at(value: Any, column: str, style: int = 0) -> str:
    """One value's cell with its reference, or nothing for an empty value."""
    return referenced(cell(value, style), column)


def cells(
    values: Iterable[Any],
    first: int,
    gap: bool = True,
    styles: Sequence[int] | None = None,
) -> str:
    """Typed values as the cells from column `first` (0 = A) on.

    Empty values have no cell; each cell after a gap carries its reference,
    the first one too when `gap` says the cell before it is empty. `styles`
    holds each value's number style (None: the default for all).
    """
    parts = []
    for offset, value in enumerate(values):
        text = cell(value, styles[offset]) if styles else cell(value)
        if not text:
            gap = True
        elif gap:
            parts.append(referenced(text, column_letter(first + offset)))
            gap = False
        else:
            parts.append(text)
    return "".join(parts)


def row_xml(values: Iterable[Any], styles: Sequence[int] | None = None) -> str:
    """A row of typed values as a `<row>` element (its number `ROW`)."""
    return f'<row r="{ROW}">' + cells(values, 0, gap=False, styles=styles) + "</row>"


# --- the package --------------------------------------------------------------

_XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_RELS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PACKAGE_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
_TYPES = "application/vnd.openxmlformats-officedocument.spreadsheetml"
_ROOT_RELS = (
    f'{_XML}<Relationships xmlns="{_PACKAGE_RELS}"><Relationship Id="rId1" '
    f'Type="{_RELS}/officeDocument" Target="xl/workbook.xml"/></Relationships>'
)
_STYLES = (
    f'{_XML}<styleSheet xmlns="{_MAIN}">'
    f'<numFmts count="2"><numFmt numFmtId="164" formatCode="{DATE_FORMAT}"/>'
    f'<numFmt numFmtId="165" formatCode="{PERCENT_FORMAT}"/></numFmts>'
    '<fonts count="2"><font><sz val="11"/><name val="Calibri"/><family val="2"/>'
    '</font><font><b/><sz val="11"/><name val="Calibri"/><family val="2"/></font>'
    "</fonts>"
    '<fills count="3"><fill><patternFill patternType="none"/></fill>'
    '<fill><patternFill patternType="gray125"/></fill><fill>'
    '<patternFill patternType="solid"><fgColor rgb="FFE8EEF4"/>'
    '<bgColor indexed="64"/></patternFill></fill></fills>'
    '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border>'
    "</borders>"
    '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/>'
    "</cellStyleXfs>"
    '<cellXfs count="4"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" '
    'xfId="0"/><xf numFmtId="0" fontId="1" fillId="2" borderId="0" xfId="0" '
    'applyFont="1" applyFill="1"/><xf numFmtId="164" fontId="0" fillId="0" '
    'borderId="0" xfId="0" applyNumberFormat="1"/><xf numFmtId="165" fontId="0" '
    'fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/></cellXfs>'
    '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/>'
    "</cellStyles></styleSheet>"
)
# The first sheet is the selected one (the workbook opens on it): a second
# selected sheet would group them, and typing would change both.
_SHEET_VIEW = (
    '<sheetViews><sheetView{selected} workbookViewId="0">'
    '<pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/>'
    '<selection pane="bottomLeft"/></sheetView></sheetViews>'
)


def column_width(heading: str) -> float:
    """A column's width for its heading, in Excel's units as XlsxWriter stores it."""
    # CJK characters take about two columns of Excel's width unit.
    units = sum(2 if ord(ch) > 0x2E7F else 1 for ch in heading)
    width = min(60, max(10, units + 2))
    # XlsxWriter's conversion: 7-pixel digits plus 5 pixels of padding.
    return int((int(width * 7 + 0.5) + 5) / 7 * 256) / 256


def _sheet_head(headings: Sequence[str], rows: int, selected: bool) -> str:
    """The sheet's XML up to its first data row; `rows` data rows will follow."""
    columns = "".join(
        f'<col min="{i}" max="{i}" width="{column_width(h)}" customWidth="1"/>'
        for i, h in enumerate(headings, 1)
    )
    header = "".join(text_cell(h, HEADER_STYLE) for h in headings)
    last = f"{column_letter(len(headings) - 1)}{rows + 1}"
    view = _SHEET_VIEW.format(selected=' tabSelected="1"' if selected else "")
    return (
        f'{_XML}<worksheet xmlns="{_MAIN}" xmlns:r="{_RELS}">'
        f'<dimension ref="A1:{last}"/>{view}'
        f'<sheetFormatPr defaultRowHeight="15"/><cols>{columns}</cols>'
        f'<sheetData><row r="1">{header}</row>'
    )


_SHEET_TAIL = (
    '</sheetData><pageMargins left="0.7" right="0.7" top="0.75" bottom="0.75" '
    'header="0.3" footer="0.3"/></worksheet>'
)


def _table_rows(table: Table, language: str) -> Iterator[bytes]:
    """The table's rows as UTF-8 `<row>` XML: the database's when it made them.

    Values are shown as their columns say in `language`; ratios are numbers
    in the percent style.
    """
    styles = [PERCENT_STYLE if col.type == "ratio" else 0 for col in table.columns]
    shown = table.shown(language)

    def encoded(values: Iterable[Any]) -> bytes:
        if shown is not None:
            values = shown(tuple(values))
        return row_xml(values, styles if any(styles) else None).encode("utf-8")

    finished = table.finished_rows("xlsx", language)
    if finished is None:
        return map(encoded, table)
    return _chain(map(encoded, table.preamble), finished)


def _chain(first: Iterable[bytes], rest: Iterable[bytes]) -> Iterator[bytes]:
    yield from first
    yield from rest


def write_workbook(
    tables: Iterable[Table], target: str | IO[bytes], language: str
) -> None:
    """Write tables as the sheets of one workbook (a file path or binary file).

    A sheet holds Excel's maximum of rows; the rest continue on the next sheet,
    named "<title> (2)" and so on, each with its own header. A table whose
    `count` (its rows, not counting the preamble) is unknown is read into
    memory first, to write the dimension.
    """
    names: list[str] = []
    with zipfile.ZipFile(
        target, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=COMPRESS_LEVEL
    ) as package:
        for table in tables:
            headings = [col.heading(language) for col in table.columns]
            base = table.sheet_name(language)[:25]
            part, rows_left = 1, _table_rows(table, language)
            if table.count is None:
                rows_left = list(rows_left)
                total = len(rows_left)
                rows_left = iter(rows_left)
            else:
                total = len(table.preamble) + table.count
            while rows_left is not None:
                names.append(base if part == 1 else f"{base} ({part})")
                path = f"xl/worksheets/sheet{len(names)}.xml"
                rows = min(total, MAX_ROWS - 1)
                rows_left = _write_sheet(
                    package, path, headings, rows, rows_left, selected=not names[1:]
                )
                total -= rows
                part += 1
        _write_fixed_parts(package, names)


def _write_sheet(
    package: zipfile.ZipFile,
    path: str,
    headings: list[str],
    expected: int,
    rows: Iterator[bytes],
    selected: bool,
) -> Iterator[bytes] | None:
    """Write one sheet's part (`expected` rows for its dimension); return the
    rows that did not fit, if any."""
    room = MAX_ROWS - 1
    number = 2
    with (
        package.open(path, "w", force_zip64=True) as part,
        _Compressor(part) as compressor,
    ):
        compressor.put(_sheet_head(headings, expected, selected).encode("utf-8"))
        while room and (chunk := list(islice(rows, min(CHUNK_ROWS, room)))):
            room -= len(chunk)
            compressor.put_rows(chunk, number)
            number += len(chunk)
        compressor.put(_SHEET_TAIL.encode("utf-8"))
    if room:
        return None
    # A full sheet: continued only if another row follows.
    following = next(rows, None)
    return None if following is None else _chain((following,), rows)


class _Compressor:
    """Write blocks to a zip part (deflating them) in a thread of its own.

    Rows are numbered and joined there too, while the producer makes the next.
    """

    def __init__(self, part: IO[bytes]) -> None:
        self.part = part
        self.blocks: queue.Queue[Any] = queue.Queue(QUEUED_BLOCKS)
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> _Compressor:
        self.thread.start()
        return self

    def put(self, block: bytes) -> None:
        if self.error is not None:
            raise self.error
        self.blocks.put(block)

    def put_rows(self, rows: list[bytes], first: int) -> None:
        """Queue rows (their number `ROW`) to be numbered from `first` on."""
        if self.error is not None:
            raise self.error
        self.blocks.put((rows, first))

    def _run(self) -> None:
        while (block := self.blocks.get()) is not None:
            if self.error is None:
                try:
                    if isinstance(block, tuple):
                        block = _numbered(*block)
                    self.part.write(block)
                except BaseException as exc:  # re-raised by the producer
                    self.error = exc

    def __exit__(self, *exc_info: Any) -> None:
        self.blocks.put(None)
        self.thread.join()
        if self.error is not None and exc_info[0] is None:
            raise self.error


def _numbered(rows: list[bytes], first: int) -> bytes:
    """Rows joined, each one's `ROW` replaced by its number, from `first` on."""
    mark = ROW.encode("ascii")
    return b"".join([row.replace(mark, b"%d" % n) for n, row in enumerate(rows, first)])


def _write_fixed_parts(package: zipfile.ZipFile, names: list[str]) -> None:
    sheets = "".join(
        f'<sheet name={quoteattr(name)} sheetId="{i}" r:id="rId{i}"/>'
        for i, name in enumerate(names, 1)
    )
    overrides = "".join(
        f'<Override PartName="/xl/worksheets/sheet{i}.xml" '
        f'ContentType="{_TYPES}.worksheet+xml"/>'
        for i in range(1, len(names) + 1)
    )
    sheet_rels = "".join(
        f'<Relationship Id="rId{i}" Type="{_RELS}/worksheet" '
        f'Target="worksheets/sheet{i}.xml"/>'
        for i in range(1, len(names) + 1)
    )
    styles_id = len(names) + 1
    parts = {
        "[Content_Types].xml": (
            f'{_XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/'
            'content-types"><Default Extension="rels" ContentType="application/'
            'vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml"'
            ' ContentType="application/xml"/><Override PartName="/xl/workbook.xml" '
            f'ContentType="{_TYPES}.sheet.main+xml"/><Override PartName='
            f'"/xl/styles.xml" ContentType="{_TYPES}.styles+xml"/>{overrides}</Types>'
        ),
        "_rels/.rels": _ROOT_RELS,
        "xl/workbook.xml": (
            f'{_XML}<workbook xmlns="{_MAIN}" xmlns:r="{_RELS}"><bookViews>'
            '<workbookView xWindow="240" yWindow="15" windowWidth="16095" '
            f'windowHeight="9660"/></bookViews><sheets>{sheets}</sheets></workbook>'
        ),
        "xl/_rels/workbook.xml.rels": (
            f'{_XML}<Relationships xmlns="{_PACKAGE_RELS}">{sheet_rels}'
            f'<Relationship Id="rId{styles_id}" Type="{_RELS}/styles" '
            'Target="styles.xml"/></Relationships>'
        ),
        "xl/styles.xml": _STYLES,
    }
    for path, text in parts.items():
        package.writestr(path, text)
