"""The rows and cells of a matrix typed as text, read strictly.

Accepted layouts: nested brackets (``[[1, 0], [0, 2]]``), bracketed rows
without an outer pair (``[1, 0], [0, 2]``), MATLAB rows (``[1 0; 0 2]``) and
one row a line (``1 0`` newline ``0 2``). Inside a row, commas always separate
cells and spaces separate them as MATLAB does (``1 -2`` is two cells,
``1 - 2`` one).

Nothing typed may silently disappear: an unbalanced bracket, an empty cell
(``1,,2``), a separator at the end or the start of a row, an empty bracketed
row and a number outside any row's brackets are `MatrixFormatError`s that
name the row and the column (1-based). Only MATLAB's row breaks are lenient:
a ``;`` or a blank line with no row after it is ignored, as MATLAB does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from quizsvc.parsing.errors import MatrixFormatError

# A cell of the typed text: what was typed there, and where it starts.
Cell = tuple[str, int]

_BINARY_TAIL = tuple("+-*/^(√×·÷")
_BINARY_HEAD = tuple("*/^)×·÷")
_ROW_SEPARATOR = re.compile(r"^\s*[,;]?\s*$")


@dataclass
class _Group:
    """One [...] group of the typed text, with the text and groups inside it."""

    start: int
    end: int | None = None  # where its ']' is; None while it is open
    items: list[_Group | Cell] = field(default_factory=list)

    def groups(self) -> list[_Group]:
        return [item for item in self.items if isinstance(item, _Group)]


@dataclass
class _Row:
    """A row as typed: its cells ("" for an empty one) and what is wrong with it."""

    start: int
    cells: list[Cell] = field(default_factory=list)
    group: _Group | None = None
    problem: tuple[str, dict] | None = None


def rows_of_text(text: str, name: str) -> list[list[str]]:
    """Return the cells of each row of `text`, or raise a `MatrixFormatError`."""
    root, stray, unclosed = _bracket_groups(text)
    rows, container = _layout(root)
    if unclosed is not None:
        _refuse_unclosed(unclosed, container, rows, name)
    if stray is not None:
        number, row = _row_at(rows, stray)
        column = sum(1 for _, at in row.cells if at < stray)
        raise MatrixFormatError("matrix.extra_bracket", name, number, max(column, 1))
    for number, row in enumerate(rows, start=1):
        if row.problem is not None:
            code, params = row.problem
            raise MatrixFormatError(code, name, number, **params)
        _check_cells(row, number, name)
    return [[cell for cell, _ in row.cells] for row in rows]


def _refuse_unclosed(
    unclosed: _Group, container: _Group | None, rows: list[_Row], name: str
) -> None:
    """Name where the ']' is missing: after a row's last cell, or at the end."""
    for number, row in enumerate(rows, start=1):
        if row.group is unclosed:
            raise MatrixFormatError(
                "matrix.unclosed_row", name, number, max(len(row.cells), 1)
            )
    if unclosed is container or not rows:
        last = len(rows[-1].cells) if rows else 1
        raise MatrixFormatError(
            "matrix.unclosed_matrix", name, max(len(rows), 1), max(last, 1)
        )
    # A '[' opened inside a row: a nested list where one number belongs.
    number, row = _row_at(rows, unclosed.start)
    column = sum(1 for _, at in row.cells if at < unclosed.start) + 1
    raise MatrixFormatError("matrix.nested_entry", name, number, column)


def _bracket_groups(text: str) -> tuple[_Group, int | None, _Group | None]:
    """Group the text by its square brackets.

    Returns the root group, the position of the first ']' that closes nothing
    (or None) and the innermost '[' left open (or None); open groups are
    closed at the end of the text so that the layout can still be read.
    """
    root = _Group(-1, len(text))
    stack = [root]
    stray: int | None = None
    start = 0
    for index, char in enumerate(text):
        if char not in "[]":
            continue
        if index > start:
            stack[-1].items.append((text[start:index], start))
        start = index + 1
        if char == "[":
            group = _Group(index)
            stack[-1].items.append(group)
            stack.append(group)
        elif len(stack) > 1:
            stack.pop().end = index
        elif stray is None:
            stray = index
    if len(text) > start:
        stack[-1].items.append((text[start:], start))
    unclosed = stack[-1] if len(stack) > 1 else None
    return root, stray, unclosed


def _layout(root: _Group) -> tuple[list[_Row], _Group | None]:
    """Find the rows, and the group that holds them all (None if there is none).

    Bracketed rows (inside an outer pair or not), MATLAB rows inside one
    pair of brackets, or plain lines.
    """
    solid = [item for item in root.items if isinstance(item, _Group) or item[0].strip()]
    if not root.groups():
        return _text_rows(root.items), None
    groups = root.groups()
    if len(groups) == 1 and (len(solid) == 1 or groups[0].groups()):
        (only,) = groups
        rows = _bracketed_rows(only.items) if only.groups() else _text_rows(only.items)
        # Text outside the one pair of brackets belongs to no row.
        for item in solid:
            if item is not only:
                text, at = item
                loose = _Row(at, problem=_loose(text))
                rows.insert(0 if at < only.start else len(rows), loose)
        return rows, only
    return _bracketed_rows(root.items), None


def _text_rows(items: list) -> list[_Row]:
    """Rows separated by ';' or line breaks (MATLAB), from text without brackets."""
    rows = []
    for text, at in items:
        for line, start in _split(text, at, ";\n"):
            if line.strip():
                rows.append(_Row(start, _cells(line, start)))
    return rows


def _bracketed_rows(items: list) -> list[_Row]:
    """One row per [...] group; between two of them one ',' or ';' may stand."""
    rows: list[_Row] = []
    places = [i for i, item in enumerate(items) if isinstance(item, _Group)]
    for position, item in enumerate(items):
        if isinstance(item, _Group):
            rows.append(_group_row(item))
            continue
        text, at = item
        between = places[0] < position < places[-1]
        if not text.strip() or (between and _ROW_SEPARATOR.match(text)):
            continue
        # Text between rows, or ",," (or a separator before the first row or
        # after the last): a row outside brackets, or an empty one.
        rows.append(_Row(at, problem=_loose(text)))
    return rows


def _loose(text: str) -> tuple[str, dict]:
    """The problem of text that stands between bracketed rows."""
    entry = " ".join(text.strip().strip(",;").split())
    if entry:
        return ("matrix.loose_entry", {"entry": entry[:40]})
    return ("matrix.empty_row", {})


def _group_row(group: _Group) -> _Row:
    """The row one [...] group holds; a bracket inside it is a nested entry."""
    row = _Row(group.start + 1, group=group)
    for item in group.items:
        if isinstance(item, _Group):
            if row.problem is None:
                filled = sum(1 for cell, _ in row.cells if cell)
                row.problem = ("matrix.nested_entry", {"col": filled + 1})
            continue
        text, at = item
        if text.strip():
            row.cells.extend(_cells(text, at))
    if not row.cells and row.problem is None:
        row.problem = ("matrix.empty_row", {})
    return row


def _cells(text: str, at: int) -> list[Cell]:
    """Split a row's text into cells; an empty one stays, as ("", where)."""
    cells: list[Cell] = []
    for part, start in _split(text, at, ","):
        if part.strip():
            cells.extend(_spaced_entries(part, start))
        else:
            cells.append(("", start))
    return cells


def _check_cells(row: _Row, number: int, name: str) -> None:
    """Refuse an empty cell, naming it (a separator at either end included)."""
    for column, (cell, _) in enumerate(row.cells, start=1):
        if cell:
            continue
        if column == len(row.cells) and column > 1:
            raise MatrixFormatError(
                "matrix.trailing_separator", name, number, column - 1
            )
        raise MatrixFormatError("matrix.empty_cell", name, number, column)


def _row_at(rows: list[_Row], position: int) -> tuple[int, _Row]:
    """The row (1-based number and row) in which `position` of the text falls."""
    found = (1, rows[0]) if rows else (1, _Row(0))
    for number, row in enumerate(rows, start=1):
        if row.start <= position:
            found = (number, row)
    return found


def _split(text: str, at: int, separators: str) -> list[Cell]:
    """Split at separators outside parentheses, keeping empty pieces and offsets."""
    pieces, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(depth - 1, 0)
        elif depth == 0 and char in separators:
            pieces.append((text[start:index], at + start))
            start = index + 1
    pieces.append((text[start:], at + start))
    return pieces


def _spaced_entries(part: str, at: int) -> list[Cell]:
    """Split at spaces as MATLAB does: "1 - 2" is one entry, "1 -2" two."""
    merged: list[Cell] = []
    for piece, start in _split(part, at, " \t\r\f\v\n"):
        piece = piece.strip()
        if not piece:
            continue
        if merged and (
            merged[-1][0].endswith(_BINARY_TAIL)
            or piece.startswith(_BINARY_HEAD)
            or piece in ("+", "-")
        ):
            merged[-1] = (merged[-1][0] + " " + piece, merged[-1][1])
        else:
            merged.append((piece, start))
    return merged
