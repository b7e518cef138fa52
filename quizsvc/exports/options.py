"""What a request or a command asks of an export: kind, format, days, score rule.

Everything here is checked before a row is read, so a bad option is refused
with a message before the first byte of a file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime

from quizsvc.models import Classroom
from quizsvc.services.class_reports import Period, parse_period
from quizsvc.services.messages import LocalizedInvalidInput

KINDS = ("reviews", "summary", "canvas", "xapi", "workbook")
FORMATS = {
    "reviews": ("csv", "xlsx", "jsonl"),
    "summary": ("csv", "xlsx", "jsonl"),
    "canvas": ("csv", "xlsx"),
    "xapi": ("jsonl",),
    "workbook": ("xlsx",),
}
CANVAS_RULES = ("mastery", "accuracy")
DEFAULT_BASE_URL = "http://127.0.0.1:8000/"


@dataclass(frozen=True)
class DateRange:
    """Calendar days [start, end], both included; None leaves that side open."""

    start: date | None = None
    end: date | None = None

    def period(self, timezone: str) -> Period:
        """Return the range as days of a time zone (the class's)."""
        return Period(self.start, self.end, timezone)

    def label(self) -> str:
        """Return a file-name part such as "2026-03-01_2026-03-31" ("" when open)."""
        if not (self.start or self.end):
            return ""
        return f"{self.start or ''}_{self.end or ''}"


def parse_date_range(start: str | None, end: str | None) -> DateRange:
    """Read YYYY-MM-DD days (empty means open) as the dashboard's date filter does.

    A malformed date or a start after the end is an InvalidInput in both
    languages.
    """
    period = parse_period(start, end, "UTC")
    return DateRange(period.start, period.end)


@dataclass(frozen=True)
class ExportOptions:
    """Everything besides the class that shapes an export."""

    base_url: str = DEFAULT_BASE_URL
    dates: DateRange = field(default_factory=DateRange)
    # Canvas: how a learner's score is computed, out of how many points, for
    # which lesson (None: the first lesson of the bank), under which title.
    rule: str = "mastery"
    points: float = 100.0
    lesson_id: str | None = None
    assignment: str | None = None
    now: datetime | None = None

    def __post_init__(self) -> None:
        if self.rule not in CANVAS_RULES:
            raise LocalizedInvalidInput(
                f"未知的计分规则“{self.rule}”：请选 mastery 或 accuracy。",
                f"unknown score rule {self.rule!r}: choose mastery or accuracy",
            )
        if not 0 < self.points <= 100_000:
            raise LocalizedInvalidInput(
                "满分必须大于 0，且不超过 100000。",
                "points must be more than 0 and at most 100000",
            )

    @property
    def base(self) -> str:
        """Return the base URL with one trailing slash."""
        return self.base_url.rstrip("/") + "/"


def check_kind(kind: str, file_format: str | None) -> str:
    """Return the format to use for a kind (its first when None); refuse others."""
    if kind not in FORMATS:
        raise LocalizedInvalidInput(
            f"没有“{kind}”这种导出；可选：{'、'.join(KINDS)}。",
            f"unknown export {kind!r}: choose one of {', '.join(KINDS)}",
        )
    formats = FORMATS[kind]
    if file_format is None:
        return formats[0]
    if file_format not in formats:
        raise LocalizedInvalidInput(
            f"{kind} 只能导出为 {'、'.join(formats)}，不能导出为“{file_format}”。",
            f"{kind} exports as {', '.join(formats)}, not {file_format!r}",
        )
    return file_format


def file_stem(classroom: Classroom, kind: str, dates: DateRange) -> str:
    """Return the file name without extension, e.g. "初三2班-reviews-2026-03-01_"."""
    parts = [classroom.name.strip() or f"class-{classroom.id}", kind]
    if dates.label():
        parts.append(dates.label())
    stem = "-".join(parts)
    return "".join("_" if ch in '\\/:*?"<>|' or ord(ch) < 32 else ch for ch in stem)
