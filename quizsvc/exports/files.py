"""An export's file in any of its formats: the bytes to stream or to write."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Sequence
from typing import IO

from quizsvc.exports.csv import csv_bytes
from quizsvc.exports.jsonl import iter_jsonl
from quizsvc.exports.tables import Table
from quizsvc.exports.xlsx import write_workbook

MEDIA_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "jsonl": "application/x-ndjson; charset=utf-8",
    "json": "application/json; charset=utf-8",
}
XLSX_BLOCK = 1 << 16


def render(tables: Sequence[Table], file_format: str, language: str) -> Iterator[bytes]:
    """Yield the export's bytes: CSV and JSON lines as rows come, XLSX when built.

    XLSX is a zip whose index comes last, so it is built in a temporary file
    first (the writer keeps memory flat) and then read out in blocks.
    """
    if file_format == "xlsx":
        with tempfile.TemporaryFile() as spool:
            write_workbook(tables, spool, language)
            spool.seek(0)
            while block := spool.read(XLSX_BLOCK):
                yield block
        return
    (table,) = tables
    if file_format == "csv":
        yield from csv_bytes(table, language)
        return
    for chunk in iter_jsonl(table):
        yield chunk.encode("utf-8")


def write_file(
    tables: Sequence[Table], file_format: str, target: IO[bytes], language: str
) -> None:
    """Write the export to a binary file."""
    if file_format == "xlsx":
        write_workbook(tables, target, language)
        return
    for block in render(tables, file_format, language):
        target.write(block)
