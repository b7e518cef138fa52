"""What an export is before it has a file format: typed columns and a stream of rows.

A `Table` names its columns (key, bilingual title, value type) and carries a
generator of row tuples, one value per column, typed as Python values: `str`,
`int`, `float`, `bool`, an aware `datetime`, or None for "no value". The
writers (`csv`, `jsonl`, `xlsx`) turn the same table into a file; nothing here
touches Flask or the database.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

# "text" cells may hold text that users typed (names, answers, explanations);
# "key" cells hold text quizsvc makes (ids, kinds, links), which never starts
# like a spreadsheet formula; "identity" cells hold typed text another system
# matches exactly as it stores it (Canvas's student columns), so CSV writes
# them without the formula guard; "ratio" is a float from 0 to 1 (XLSX shows
# it as a percentage); "object" is a whole JSON object (xAPI).
ValueType = Literal[
    "text", "key", "identity", "int", "float", "ratio", "bool", "datetime", "object"
]

# The rows of a table already finished in a file format ("csv": CSV records,
# "xlsx": `<row>` elements, as UTF-8 bytes) and a language, or None where the
# source cannot make them for that format: see quizsvc.exports.sqlite_fast.
FinishedRows = Callable[[str, str], Iterable[bytes] | None]
# How a column's value is shown to a reader in a language (CSV and XLSX; JSON
# lines keep the value): (value, language) -> shown value.
Show = Callable[[Any, str], Any]


@dataclass(frozen=True)
class Column:
    """One column: a stable key (JSON field name), a bilingual title, a type."""

    key: str
    title: dict[str, str]
    type: ValueType = "text"
    show: Show | None = None

    def heading(self, language: str) -> str:
        """Return the column's title in a language ("zh-CN" or "en")."""
        return self.title.get(language) or self.title["en"]


@dataclass
class Table:
    """A named sheet of typed rows, produced lazily (read it once)."""

    name: str
    title: dict[str, str]
    columns: tuple[Column, ...]
    rows: Iterable[tuple[Any, ...]]
    # How many rows `rows` will yield, when known cheaply (for progress bars
    # and the XLSX writer's sheet dimension).
    count: int | None = None
    # Rows shown before the data that are not records (Canvas's "Points
    # Possible" row); writers put them right under the header.
    preamble: tuple[tuple[Any, ...], ...] = field(default=())
    # The same rows (`rows`, not the preamble) finished in a file format, when
    # the source makes them much faster than the writers' per-value work.
    finished: FinishedRows | None = None

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        yield from self.preamble
        yield from self.rows

    def sheet_name(self, language: str) -> str:
        """Return the table's title in a language."""
        return self.title.get(language) or self.title["en"]

    def finished_rows(self, file_format: str, language: str) -> Iterable[bytes] | None:
        """Return the rows finished in a format and language, or None: write `rows`."""
        if self.finished is None:
            return None
        return self.finished(file_format, language)

    def shown(self, language: str) -> Callable[[tuple], tuple] | None:
        """Return a function showing a row's values to a reader, or None if
        every value is shown as it is."""
        shows = [(i, col.show) for i, col in enumerate(self.columns) if col.show]
        if not shows:
            return None

        def show(row: tuple) -> tuple:
            values = list(row)
            for index, function in shows:
                values[index] = function(values[index], language)
            return tuple(values)

        return show


def column(
    key: str, en: str, zh: str, type: ValueType = "text", show: Show | None = None
) -> Column:
    """Build a Column from its key, English and Chinese titles, type and Show."""
    return Column(key, {"en": en, "zh-CN": zh}, type, show)
