"""Exports: typed tables (`tables`), their file formats (`writers`, and `xlsx`
for workbooks written directly), xAPI (`xapi`).

Pure: no Flask, no database. The queries that fill the tables live in
`quizsvc.services.exports`; the CLI (`quizsvc export`), the API
(`/api/v1/classes/<id>/exports/<kind>`) and `bench/export.py` share both.
"""

from quizsvc.exports.tables import Column, Table, column
from quizsvc.exports.writers import (
    MEDIA_TYPES,
    iter_csv,
    iter_json_document,
    iter_jsonl,
    neutralize,
    render,
    write_file,
    write_xlsx,
)

__all__ = [
    "MEDIA_TYPES",
    "Column",
    "Table",
    "column",
    "iter_csv",
    "iter_json_document",
    "iter_jsonl",
    "neutralize",
    "render",
    "write_file",
    "write_xlsx",
]
