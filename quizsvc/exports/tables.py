"""What an export is before it has a file format: typed columns and a stream of rows.

A `Table` names its columns (key, bilingual title, value type) and carries a
generator of row tuples, one value per column, typed as Python values: `str`,
`int`, `float`, `bool`, an aware `datetime`, or None for "no value". The writers
(`quizsvc.exports.writers`) turn the same table into CSV, XLSX or JSON lines;
nothing here touches Flask or the database.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

# "text" cells may hold text that users typed (names, answers, explanations);
# "key" cells hold text quizsvc makes (ids, kinds, links), which never starts
# like a spreadsheet formula; "object" is a whole JSON object (xAPI).
ValueType = Literal["text", "key", "int", "float", "bool", "datetime", "object"]


@dataclass(frozen=True)
class Column:
    """One column: a stable key (JSON field name), a bilingual title, a type."""

    key: str
    title: dict[str, str]
    type: ValueType = "text"

    def heading(self, language: str) -> str:
        """The column's title in a language ("zh-CN" or "en")."""
        return self.title.get(language) or self.title["en"]


@dataclass
class Table:
    """A named sheet of typed rows, produced lazily (read it once)."""

    name: str
    title: dict[str, str]
    columns: tuple[Column, ...]
    rows: Iterable[tuple[Any, ...]]
    # How many rows `rows` will yield, when known cheaply (for progress bars
    # and the direct XLSX writer's sheet dimension).
    count: int | None = None
    # Rows shown before the data that are not records (Canvas's "Points
    # Possible" row); writers put them right under the header.
    preamble: tuple[tuple[Any, ...], ...] = field(default=())
    # The same rows already as CSV records in UTF-8, each with its CRLF line
    # end, exactly as the CSV writer would write `rows`, when the source makes
    # them much faster than the writer's per-value work (SQLite, in SQL).
    csv_lines: Iterable[bytes] | None = None
    # The same rows already as XLSX `<row>` elements in UTF-8, cells as
    # `quizsvc.exports.xlsx.row_xml` writes them (numbers `xlsx.ROW`), from the
    # same kind of source.
    xlsx_rows: Iterable[bytes] | None = None

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        yield from self.preamble
        yield from self.rows

    def sheet_name(self, language: str) -> str:
        """The table's title in a language."""
        return self.title.get(language) or self.title["en"]


def column(key: str, en: str, zh: str, type: ValueType = "text") -> Column:
    """Build a Column from its key, English and Chinese titles and type."""
    return Column(key, {"en": en, "zh-CN": zh}, type)
