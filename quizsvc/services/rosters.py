"""Class rosters: the teacher's list of student numbers and names.

A roster is imported whole from a 学号,姓名 file and replaces the previous
one; nothing is written when any line is wrong. Learners who join with a
listed student number get the roster's name.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from quizsvc.models import Classroom, Membership, Review, RosterEntry, User
from quizsvc.services import resolve_now
from quizsvc.services.errors import N_, InvalidInput, Message
from quizsvc.services.sharing import review_shared

MAX_STUDENT_NUMBER = 64
MAX_DISPLAY_NAME = 128
MAX_ROSTER_ROWS = 2000
# A roster file shows at most this many problems; more would drown the first.
MAX_ROSTER_ERRORS = 20
# Student numbers may not start with these (see parse_roster).
FORMULA_STARTS = "=+-@"
ROSTER_HEADERS = {"学号", "student number", "student_number", "student id", "number"}


class RosterError(InvalidInput):
    """A roster file that cannot be imported; `problems` lists `line N: …` messages."""

    def __init__(self, problems: list[Message]):
        self.problems = problems
        super().__init__(
            N_("The roster cannot be imported: %(problems)s"), problems=problems
        )


# What a roster file may be saved as: Excel and WPS on Chinese Windows save
# "CSV" in GBK (GB18030 is its superset); "Unicode text" is UTF-16 with tabs.
ROSTER_ENCODINGS = ("utf-8", "utf-8-sig", "utf-16", "gb18030")


@dataclass(frozen=True)
class ParsedRoster:
    """A roster file's entries, and how it was read."""

    entries: list[tuple[str, str]]
    encoding: str
    delimiter: str  # "comma" or "tab"


def decode_roster(data: bytes | str) -> tuple[str, str]:
    """Return a roster file's text and the encoding it was read in.

    A byte-order mark says UTF-8 or UTF-16; otherwise UTF-16 without one shows
    by its NUL bytes, and text that is not UTF-8 is read as GB18030 (which
    covers GBK and GB2312).
    """
    if isinstance(data, str):
        return data.removeprefix("\ufeff"), "utf-8"
    if data.startswith(b"\xef\xbb\xbf"):
        candidates = ["utf-8-sig"]
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        candidates = ["utf-16"]
    elif len(data) >= 2 and data.count(0) * 3 >= len(data):
        # Every other byte NUL: UTF-16 saved without a mark.
        # ASCII digits and commas put their NUL after (LE) or before (BE).
        little = data[1::2].count(0) >= data[0::2].count(0)
        candidates = ["utf-16-le" if little else "utf-16-be"]
    else:
        candidates = ["utf-8", "gb18030"]
    problem = None
    for encoding in candidates:
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError as exc:
            problem = problem or exc
            continue
        if "\x00" in text:
            break
        return text.removeprefix("\ufeff"), encoding.removesuffix("-le").removesuffix(
            "-be"
        )
    raise RosterError(
        [
            Message(
                N_(
                    "the file's text cannot be read (byte %(byte)d): save it as "
                    "CSV in UTF-8, UTF-16 or GBK."
                ),
                byte=problem.start if problem else 0,
            )
        ]
    )


def _delimiter(text: str) -> str:
    """Comma or tab, as the file's first non-empty line uses more of."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    return "\t" if first.count("\t") > first.count(",") else ","


def parse_roster(data: bytes | str) -> list[tuple[str, str]]:
    """Read a 学号,姓名 file into (number, name) pairs (see read_roster)."""
    return read_roster(data).entries


def read_roster(data: bytes | str) -> ParsedRoster:
    """Read a 学号,姓名 file: UTF-8 (with or without BOM), UTF-16 or GB18030/GBK,
    comma- or tab-separated, uploaded or pasted.

    A first row of headers (学号,姓名 or student number,name) is skipped. Any
    problem raises RosterError listing `line N: …` for each bad line.
    """
    data, encoding = decode_roster(data)
    delimiter = _delimiter(data)
    rows = [
        (number, row)
        for number, row in enumerate(
            csv.reader(io.StringIO(data, newline=""), delimiter=delimiter), 1
        )
        if any(cell.strip() for cell in row)
    ]
    if rows and rows[0][1] and rows[0][1][0].strip().lower() in ROSTER_HEADERS:
        rows = rows[1:]
    if len(rows) > MAX_ROSTER_ROWS:
        raise RosterError(
            [
                Message(
                    N_(
                        "the roster has %(rows)s rows; at most %(most)s are "
                        "accepted, split it first."
                    ),
                    rows=f"{len(rows):,}",
                    most=f"{MAX_ROSTER_ROWS:,}",
                )
            ]
        )
    problems: list[Message] = []
    seen: dict[str, int] = {}
    entries = []
    for line, row in rows:
        cells = [cell.strip() for cell in row]
        while len(cells) > 2 and not cells[-1]:
            cells.pop()
        if len(cells) != 2:
            problems.append(
                Message(
                    N_(
                        "line %(line)d: needs two columns (student number,name), "
                        "found %(found)d."
                    ),
                    line=line,
                    found=len(cells),
                )
            )
            continue
        number, name = cells
        if not number or not name:
            problems.append(
                Message(
                    N_(
                        "line %(line)d: the student number and the name must not "
                        "be empty."
                    ),
                    line=line,
                )
            )
        elif len(number) > MAX_STUDENT_NUMBER or len(name) > MAX_DISPLAY_NAME:
            problems.append(
                Message(
                    N_(
                        "line %(line)d: a student number has at most "
                        "%(number_chars)d characters and a name at most "
                        "%(name_chars)d."
                    ),
                    line=line,
                    number_chars=MAX_STUDENT_NUMBER,
                    name_chars=MAX_DISPLAY_NAME,
                )
            )
        elif number[0] in FORMULA_STARTS:
            # Canvas matches student numbers exactly as written, so its export
            # cannot guard them against spreadsheets the way other text is.
            problems.append(
                Message(
                    N_(
                        "line %(line)d: student number %(number)s starts with "
                        "'%(sign)s', which spreadsheets run as a formula; remove it."
                    ),
                    line=line,
                    number=number,
                    sign=number[0],
                )
            )
        elif number in seen:
            problems.append(
                Message(
                    N_(
                        "line %(line)d: student number %(number)s repeats line "
                        "%(first)d."
                    ),
                    line=line,
                    number=number,
                    first=seen[number],
                )
            )
        else:
            seen[number] = line
            entries.append((number, name))
    if problems:
        more = len(problems) - MAX_ROSTER_ERRORS
        problems = problems[:MAX_ROSTER_ERRORS]
        if more > 0:
            problems.append(Message(N_("… and %(more)d more problems."), more=more))
        raise RosterError(problems)
    if not entries:
        raise RosterError([Message(N_("the roster is empty."))])
    return ParsedRoster(entries, encoding, "tab" if delimiter == "\t" else "comma")


@dataclass(frozen=True)
class RosterImport:
    """What importing a roster did."""

    entries: int
    names_filled: int
    encoding: str = "utf-8"
    delimiter: str = "comma"


def import_roster(
    session: Session, classroom: Classroom, data: bytes | str
) -> RosterImport:
    """Replace the class's roster with a 学号,姓名 CSV; nothing is written on errors.

    Learners already in the class under a listed student number and without a
    name of their own get the roster's name.
    """
    parsed = read_roster(data)
    entries = parsed.entries
    session.execute(delete(RosterEntry).where(RosterEntry.class_id == classroom.id))
    session.add_all(
        RosterEntry(class_id=classroom.id, student_number=number, name=name)
        for number, name in entries
    )
    names = dict(entries)
    filled = 0
    # Only learners with no name at all: an account's own name is kept, so a
    # learner joined under someone else's number shows as a mismatch.
    for membership in session.scalars(
        select(Membership)
        .join(User, User.id == Membership.user_id)
        .where(
            Membership.class_id == classroom.id,
            Membership.role == "learner",
            Membership.display_name.is_(None),
            User.display_name.is_(None),
        )
    ):
        if membership.student_number in names:
            membership.display_name = names[membership.student_number]
            filled += 1
    session.flush()
    return RosterImport(len(entries), filled, parsed.encoding, parsed.delimiter)


def roster_entries(session: Session, classroom: Classroom) -> list[RosterEntry]:
    """Return the class's roster, by student number."""
    return list(
        session.scalars(
            select(RosterEntry)
            .where(RosterEntry.class_id == classroom.id)
            .order_by(RosterEntry.student_number)
        )
    )


# --- who on the roster has joined ------------------------------------------------

ROSTER_STATUSES = ("joined", "not_joined", "name_mismatch")
# "Not practised this week": no answer in this many days, or never joined.
IDLE_DAYS = 7


@dataclass(frozen=True)
class RosterLine:
    """A roster entry with the learner who joined under its student number."""

    student_number: str
    name: str
    status: str  # one of ROSTER_STATUSES
    user_id: int | None
    username: str | None
    member_name: str | None
    last_answer_at: datetime | None
    idle: bool  # no answer (shared with the class) in IDLE_DAYS, or not joined

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable view."""
        return {
            "student_number": self.student_number,
            "name": self.name,
            "status": self.status,
            "user_id": self.user_id,
            "username": self.username,
            "member_name": self.member_name,
            "last_answer_at": self.last_answer_at.isoformat()
            if self.last_answer_at
            else None,
            "idle_this_week": self.idle,
        }


def _same_name(first: str, second: str) -> bool:
    # Spaces and letter case are how names get typed differently, not
    # different people.
    return "".join(first.split()).casefold() == "".join(second.split()).casefold()


def roster_status(
    session: Session, classroom: Classroom, now: datetime | None = None
) -> list[RosterLine]:
    """Each roster entry, by student number: joined, not joined, or joined
    under another name (a learner using someone else's number is flagged)."""
    now = resolve_now(now)
    last_answer = (
        select(Review.user_id, func.max(Review.reviewed_at).label("last"))
        .where(review_shared(classroom.id))
        .group_by(Review.user_id)
        .subquery()
    )
    rows = session.execute(
        select(
            RosterEntry.student_number,
            RosterEntry.name,
            Membership.user_id,
            User.username,
            func.coalesce(Membership.display_name, User.display_name, User.username),
            last_answer.c.last,
        )
        .outerjoin(
            Membership,
            (Membership.class_id == RosterEntry.class_id)
            & (Membership.student_number == RosterEntry.student_number)
            & (Membership.role == "learner"),
        )
        .outerjoin(User, User.id == Membership.user_id)
        .outerjoin(last_answer, last_answer.c.user_id == Membership.user_id)
        .where(RosterEntry.class_id == classroom.id)
        .order_by(RosterEntry.student_number)
    )
    lines = []
    for number, name, user_id, username, member_name, last in rows:
        if user_id is None:
            status = "not_joined"
        elif _same_name(name, member_name or ""):
            status = "joined"
        else:
            status = "name_mismatch"
        lines.append(
            RosterLine(
                number,
                name,
                status,
                user_id,
                username,
                member_name,
                last,
                last is None or last < now - timedelta(days=IDLE_DAYS),
            )
        )
    return lines
