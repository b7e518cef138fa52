"""What a request or a command asks of an export: kind, format, days, score rule.

Everything here is checked before a row is read, so a bad option is refused
with a message before the first byte of a file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime

from quizsvc.models import Classroom
from quizsvc.services.class_reports import Period, parse_period
from quizsvc.services.errors import N_, InvalidInput
from quizsvc.services.grades import GradeRule

KINDS = ("reviews", "summary", "canvas", "gradebook", "xapi", "workbook")
FORMATS = {
    "reviews": ("csv", "xlsx", "jsonl"),
    "summary": ("csv", "xlsx", "jsonl"),
    # Canvas reads a gradebook import as CSV only.
    "canvas": ("csv",),
    "gradebook": ("csv", "xlsx"),
    "xapi": ("jsonl",),
    "workbook": ("xlsx",),
}
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

    # Where links (a generated problem's permalink) point.
    base_url: str = DEFAULT_BASE_URL
    # The IRI that names this quizsvc in xAPI ids (quizsvc.exports.instance);
    # None: the base URL.
    iri: str | None = None
    dates: DateRange = field(default_factory=DateRange)
    # Grades (canvas, gradebook): how a learner's score is worked out, out of
    # how many points, for which lesson (None: the first lesson of the bank),
    # under which title (Canvas's assignment column).
    rule: GradeRule = field(default_factory=GradeRule)
    points: float = 100.0
    lesson_id: str | None = None
    assignment: str | None = None
    now: datetime | None = None

    def __post_init__(self) -> None:
        if self.assignment is not None:
            object.__setattr__(
                self, "assignment", check_assignment_title(self.assignment)
            )
        if not 0 < self.points <= 100_000:
            raise InvalidInput(
                N_("points must be more than 0 and at most 100000"), field="points"
            )

    @property
    def base(self) -> str:
        """Return the base URL with one trailing slash."""
        return self.base_url.rstrip("/") + "/"

    @property
    def identity(self) -> str:
        """Return the IRI xAPI identifiers are made from, with one trailing slash."""
        return (self.iri or self.base_url).rstrip("/") + "/"


# Canvas's gradebook import drops a column whose title holds one of its own
# computed columns' names ("Final Grade", "Unposted Current Score" …), reads a
# title ending in " (digits)" as an existing assignment's id, and takes its
# student columns by these names. Refused in any case, and "final" anywhere.
_CANVAS_COLUMNS = (
    "current score", "current points", "current grade", "final", "override score",
    "override grade", "override status",
)  # fmt: skip
_CANVAS_NAMES = {
    "student", "lastname", "firstname", "id", "sis user id", "sis login id",
    "section", "integration id", "root account", "points possible",
}  # fmt: skip
_ASSIGNMENT_ID = re.compile(r"\s\(\d+\)\Z")
MAX_ASSIGNMENT_TITLE = 255


def check_assignment_title(title: str) -> str:
    """Return an assignment column's title (trimmed); refuse what Canvas misreads."""
    title = title.strip()
    folded = " ".join(title.casefold().split())
    if not title:
        raise InvalidInput(N_("the assignment title is empty"), field="assignment")
    if len(title) > MAX_ASSIGNMENT_TITLE or any(ord(ch) < 32 for ch in title):
        raise InvalidInput(
            N_("the assignment title must be one line of at most %(n)d characters"),
            n=MAX_ASSIGNMENT_TITLE,
            field="assignment",
        )
    named = next((name for name in _CANVAS_COLUMNS if name in folded), None)
    if named is not None:
        raise InvalidInput(
            N_(
                "the assignment title must not contain '%(named)s' (in any case): "
                "Canvas's gradebook import drops such a column as one of its own "
                "computed grade columns"
            ),
            named=named,
            field="assignment",
        )
    if folded in _CANVAS_NAMES:
        raise InvalidInput(
            N_(
                "the assignment title cannot be '%(title)s': Canvas reads that "
                "column as student information"
            ),
            title=title,
            field="assignment",
        )
    if _ASSIGNMENT_ID.search(title):
        raise InvalidInput(
            N_(
                "the assignment title must not end in a space and digits in "
                'parentheses (like " (2024)"): Canvas reads them as an existing '
                "assignment's id"
            ),
            field="assignment",
        )
    return title


def check_kind(kind: str, file_format: str | None) -> str:
    """Return the format to use for a kind (its first when None); refuse others."""
    if kind not in FORMATS:
        raise InvalidInput(
            N_("unknown export '%(kind)s': choose one of %(kinds)s"),
            kind=kind,
            kinds=list(KINDS),
        )
    formats = FORMATS[kind]
    if file_format is None:
        return formats[0]
    if file_format not in formats:
        raise InvalidInput(
            N_("%(kind)s exports as %(formats)s, not '%(format)s'"),
            kind=kind,
            formats=list(formats),
            format=file_format,
            field="format",
        )
    return file_format


def file_stem(classroom: Classroom, kind: str, dates: DateRange) -> str:
    """Return the file name without extension, e.g. "初三2班-reviews-2026-03-01_"."""
    parts = [classroom.name.strip() or f"class-{classroom.id}", kind]
    if dates.label():
        parts.append(dates.label())
    stem = "-".join(parts)
    return "".join("_" if ch in '\\/:*?"<>|' or ord(ch) < 32 else ch for ch in stem)
