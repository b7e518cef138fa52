"""Exports: typed tables (`tables`), their file formats (`writers`), xAPI (`xapi`).

Pure: no Flask, no database. The queries that fill the tables live in
`quizsvc.services.exports`; the CLI (`quizsvc export`), the API
(`/api/v1/classes/<id>/exports/<kind>`) and `bench/export.py` share both.
"""

from quizsvc.exports.tables import Column, Table, column
from quizsvc.exports.writers import (
    iter_csv,
    iter_json_document,
    iter_jsonl,
    neutralize,
    write_text,
    write_xlsx,
)

__all__ = [
    "Column",
    "Table",
    "column",
    "iter_csv",
    "iter_json_document",
    "iter_jsonl",
    "neutralize",
    "write_text",
    "write_xlsx",
]
