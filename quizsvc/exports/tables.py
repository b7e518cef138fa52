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
# them without the formula guard; "object" is a whole JSON object (xAPI).
ValueType = Literal[
    "text", "key", "identity", "int", "float", "bool", "datetime", "object"
]

# The rows of a table already finished in a file format ("csv": CSV records,
# "xlsx": `<row>` elements, as UTF-8 bytes), or None where the source cannot
# make them for that format: see quizsvc.exports.sqlite_fast.
FinishedRows = Callable[[str], Iterable[bytes] | None]


@dataclass(frozen=True)
class Column:
    """One column: a stable key (JSON field name), a bilingual title, a type."""

    key: str
    title: dict[str, str]
    type: ValueType = "text"

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

    def finished_rows(self, file_format: str) -> Iterable[bytes] | None:
        """Return the rows finished in `file_format`, or None: write `rows`."""
        return None if self.finished is None else self.finished(file_format)


def column(key: str, en: str, zh: str, type: ValueType = "text") -> Column:
    """Build a Column from its key, English and Chinese titles and type."""
    return Column(key, {"en": en, "zh-CN": zh}, type)
