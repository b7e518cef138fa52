"""JSON lines, and the one JSON document of a learner's own history.

One object per row keyed by the column keys (datetimes as ISO 8601 with
milliseconds and the UTC offset, as in CSV; text as typed, no apostrophe),
or, for a table of one "object" column (xAPI), that object itself. UTF-8
without a byte order mark.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any

from quizsvc.exports.csv import CHUNK_ROWS, row_converter
from quizsvc.exports.tables import Table


def iter_jsonl(table: Table) -> Iterator[str]:
    """Yield the table as JSON lines (UTF-8 text, no BOM) in chunks."""
    keys = [col.key for col in table.columns]
    if len(keys) == 1 and table.columns[0].type == "object":
        objects: Iterable[Any] = (row[0] for row in table)
    else:
        convert = row_converter(table, neutralized=False)
        objects = (dict(zip(keys, convert(row), strict=True)) for row in table)
    encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    while chunk := list(islice(objects, CHUNK_ROWS)):
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
