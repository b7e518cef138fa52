"""What every class report shares: the period it covers and its learners."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import BigInteger, select
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import ColumnElement, FunctionElement

from quizsvc.models import (
    Membership,
)
from quizsvc.services.errors import N_, InvalidInput, Message

# The days a report's date filter accepts.
EARLIEST_DAY = date(1900, 1, 1)
LATEST_DAY = date(9998, 12, 31)


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


# --- the period a report covers -----------------------------------------------


@dataclass(frozen=True)
class Period:
    """Whole days from `start` to `end` (inclusive) in a time zone; None = open."""

    start: date | None = None
    end: date | None = None
    timezone: str = "UTC"

    def bounds(self) -> tuple[datetime | None, datetime | None]:
        """The UTC moments the period starts at and ends before."""
        zone = ZoneInfo(self.timezone)

        def midnight(day: date) -> datetime:
            return datetime.combine(day, time(0), tzinfo=zone).astimezone(UTC)

        return (
            midnight(self.start) if self.start else None,
            midnight(self.end + timedelta(days=1)) if self.end else None,
        )

    def where(self, column: Any) -> list[ColumnElement[bool]]:
        """Conditions keeping `column` (a UTC timestamp) inside the period."""
        start, end = self.bounds()
        conditions = []
        if start is not None:
            conditions.append(column >= start)
        if end is not None:
            conditions.append(column < end)
        return conditions

    def query_args(self) -> dict[str, str]:
        """The period as `from`/`to` query-string values (for links)."""
        args = {}
        if self.start:
            args["from"] = self.start.isoformat()
        if self.end:
            args["to"] = self.end.isoformat()
        return args


def parse_period(start: str | None, end: str | None, timezone: str) -> Period:
    """Read `from`/`to` dates (YYYY-MM-DD, either may be empty) into a Period."""

    def read(text: str | None, field: str, what: str) -> date | None:
        if not text or not text.strip():
            return None
        try:
            day = date.fromisoformat(text.strip())
        except ValueError:
            raise InvalidInput(
                N_("%(what)s '%(text)s' is not a date; write it as 2026-09-01."),
                field=field,
                what=Message(what),
                text=text.strip()[:40],
            ) from None
        # Far-off days would overflow when shifted to UTC or to the next midnight.
        if not EARLIEST_DAY <= day <= LATEST_DAY:
            raise InvalidInput(
                N_("%(what)s must be from %(earliest)s to %(latest)s."),
                field=field,
                what=Message(what),
                earliest=EARLIEST_DAY.isoformat(),
                latest=LATEST_DAY.isoformat(),
            )
        return day

    first = read(start, "from", N_("The start date"))
    last = read(end, "to", N_("The end date"))
    if first and last and first > last:
        raise InvalidInput(N_("The start date is after the end date."), field="from")
    return Period(first, last, timezone)


def class_learner_ids(class_id: int):
    return select(Membership.user_id).where(
        Membership.class_id == class_id, Membership.role == "learner"
    )
