"""Class rosters: the teacher's list of student numbers and names.

A roster is imported whole from a 学号,姓名 file and replaces the previous
one; nothing is written when any line is wrong. Learners who join with a
listed student number get the roster's name.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from quizsvc.models import Classroom, Membership, RosterEntry
from quizsvc.services.errors import N_, InvalidInput, Message

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


def parse_roster(data: bytes | str) -> list[tuple[str, str]]:
    """Read a 学号,姓名 CSV (UTF-8, with or without BOM) into (number, name) pairs.

    A first row of headers (学号,姓名 or student number,name) is skipped. Any
    problem raises RosterError listing `line N: …` for each bad line.
    """
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise RosterError(
                [
                    Message(
                        N_(
                            "the file is not UTF-8 (byte %(byte)d); save it as a "
                            "UTF-8 CSV."
                        ),
                        byte=exc.start,
                    )
                ]
            ) from None
    else:
        data = data.removeprefix("\ufeff")
    rows = [
        (number, row)
        for number, row in enumerate(csv.reader(io.StringIO(data, newline="")), 1)
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
    return entries


@dataclass(frozen=True)
class RosterImport:
    """What importing a roster did."""

    entries: int
    names_filled: int


def import_roster(
    session: Session, classroom: Classroom, data: bytes | str
) -> RosterImport:
    """Replace the class's roster with a 学号,姓名 CSV; nothing is written on errors.

    Learners already in the class under a listed student number and without a
    name of their own get the roster's name.
    """
    entries = parse_roster(data)
    session.execute(delete(RosterEntry).where(RosterEntry.class_id == classroom.id))
    session.add_all(
        RosterEntry(class_id=classroom.id, student_number=number, name=name)
        for number, name in entries
    )
    names = dict(entries)
    filled = 0
    for membership in session.scalars(
        select(Membership).where(
            Membership.class_id == classroom.id, Membership.role == "learner"
        )
    ):
        if membership.display_name is None and membership.student_number in names:
            membership.display_name = names[membership.student_number]
            filled += 1
    session.flush()
    return RosterImport(len(entries), filled)


def roster_entries(session: Session, classroom: Classroom) -> list[RosterEntry]:
    """Return the class's roster, by student number."""
    return list(
        session.scalars(
            select(RosterEntry)
            .where(RosterEntry.class_id == classroom.id)
            .order_by(RosterEntry.student_number)
        )
    )
