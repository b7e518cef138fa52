"""Everything about exports, in one flow: options → queries → table → writer.

- `options`: what is asked (kind, format, days, score rule), checked before a
  row is read;
- `queries`: the class's learners, items and reviews, streamed;
- `reviews`, `summary`, `canvas`: the tables of each kind (`kinds` says which
  tables a kind holds), typed rows in a `tables.Table`;
- `csv`, `jsonl`, `xlsx`: one writer per file format (`files` picks it);
  `xapi` makes the statements of the xAPI kind;
- `sqlite_fast`: the one hook through which SQLite finishes the reviews
  export's CSV records and XLSX rows itself.

The table types and the writers are pure (no Flask, no database); the CLI
(`quizsvc export`), the API (`/api/v1/classes/<id>/exports/<kind>`) and
`bench/export.py` share all of it.
"""

from quizsvc.exports.csv import csv_bytes, iter_csv, neutralize
from quizsvc.exports.files import MEDIA_TYPES, render, write_file
from quizsvc.exports.jsonl import iter_json_document, iter_jsonl
from quizsvc.exports.tables import Column, Table, column
from quizsvc.exports.xlsx import write_workbook

__all__ = [
    "MEDIA_TYPES",
    "Column",
    "Table",
    "column",
    "csv_bytes",
    "iter_csv",
    "iter_json_document",
    "iter_jsonl",
    "neutralize",
    "render",
    "write_file",
    "write_workbook",
]
