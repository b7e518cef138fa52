"""SQL functions that read the same on SQLite and PostgreSQL."""

from __future__ import annotations

from sqlalchemy import BigInteger
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import FunctionElement


class epoch_seconds(FunctionElement):
    """Seconds since 1970 (UTC) of a stored timestamp, as an integer."""

    type = BigInteger()
    inherit_cache = True


@compiles(epoch_seconds, "sqlite")
def _epoch_sqlite(element, compiler, **kw):
    moment = compiler.process(element.clauses, **kw)
    return f"CAST(strftime('%s', {moment}) AS INTEGER)"


@compiles(epoch_seconds, "postgresql")
def _epoch_postgresql(element, compiler, **kw):
    moment = compiler.process(element.clauses, **kw)
    return f"CAST(FLOOR(EXTRACT(EPOCH FROM {moment})) AS BIGINT)"
