"""The roster page of a class: who on the teacher's list has joined, who has not
practised this week, and the form to upload or paste a new list.

Routes live on the teacher blueprint (quizsvc.web.teacher), under the same
access rule: a class the caller does not teach is a 404.
"""

from __future__ import annotations

from flask import flash, redirect, render_template, request, url_for
from flask_babel import gettext as _

from quizsvc.db import get_session, transaction
from quizsvc.http.errors import messages_of, status_of
from quizsvc.services.rosters import (
    MAX_ROSTER_ROWS,
    RosterError,
    import_roster,
    roster_status,
)
from quizsvc.web.teacher import _classroom, bp

FILTERS = ("all", "idle", "not_joined", "name_mismatch")
# How the page names the encoding a file was read in.
ENCODING_NAMES = {
    "utf-8": "UTF-8",
    "utf-8-sig": "UTF-8 (BOM)",
    "utf-16": "UTF-16",
    "gb18030": "GB18030/GBK",
}


@bp.get("/classes/<int:class_id>/roster")
def roster_page(class_id: int):
    """The roster with each entry's status; ?show=idle lists 本周未练习."""
    return _page(_classroom(class_id))


def _page(classroom, status: int = 200, **extra):
    lines = roster_status(get_session(), classroom)
    show = request.args.get("show", "all")
    if show not in FILTERS:
        show = "all"
    shown = [
        line
        for line in lines
        if show == "all" or (show == "idle" and line.idle) or (show == line.status)
    ]
    counts = {
        "all": len(lines),
        "idle": sum(line.idle for line in lines),
        "not_joined": sum(line.status == "not_joined" for line in lines),
        "name_mismatch": sum(line.status == "name_mismatch" for line in lines),
    }
    return render_template(
        "teacher/roster.html",
        classroom=classroom,
        lines=shown,
        show=show,
        counts=counts,
        max_roster_rows=MAX_ROSTER_ROWS,
        **extra,
    ), status


@bp.post("/classes/<int:class_id>/roster")
def roster(class_id: int):
    """Replace the roster with an uploaded file or pasted text (学号,姓名)."""
    classroom = _classroom(class_id)
    upload = request.files.get("roster")
    data: bytes | str = upload.read() if upload is not None else b""
    if not data:
        data = request.form.get("roster_text", "")
    try:
        with transaction() as session:
            result = import_roster(session, classroom, data)
    except RosterError as exc:
        return _page(
            classroom, status_of(exc), roster_problems=messages_of(exc.problems)
        )
    flash(
        _(
            "Roster imported: %(entries)d names, read as %(encoding)s "
            "(%(delimiter)s-separated); %(filled)d learners in the class got "
            "their name from it.",
            entries=result.entries,
            encoding=ENCODING_NAMES.get(result.encoding, result.encoding),
            delimiter=_("tab") if result.delimiter == "tab" else _("comma"),
            filled=result.names_filled,
        ),
        "success",
    )
    return redirect(url_for("teacher.roster_page", class_id=class_id))
