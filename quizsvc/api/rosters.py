"""A class's roster over HTTP: upload the file as it is, read who has joined.

`PUT /api/v1/classes/<id>/roster` takes the roster file itself as the body
(`text/csv`, in UTF-8 with or without BOM, UTF-16 or GB18030/GBK, comma- or
tab-separated) and replaces the roster, all or nothing; `GET` lists each
entry with its status.
"""

from __future__ import annotations

from flask import request

from quizsvc.api import bp, login_required
from quizsvc.db import get_session, transaction
from quizsvc.errors import N_, UnsupportedMediaType
from quizsvc.http.login import current_db_user
from quizsvc.services.classes import require_class_for_teacher
from quizsvc.services.rosters import import_roster, roster_status

# A roster file: what spreadsheets and scripts send it as.
ROSTER_TYPES = (
    "text/csv",
    "text/plain",
    "text/tab-separated-values",
    "application/csv",
    "application/vnd.ms-excel",
    "application/octet-stream",
)


@bp.put("/classes/<int:class_id>/roster")
@login_required
def api_put_roster(class_id: int):
    """Replace the roster with the file in the body; nothing is written on errors."""
    classroom = require_class_for_teacher(get_session(), current_db_user(), class_id)
    if request.mimetype and request.mimetype not in ROSTER_TYPES:
        raise UnsupportedMediaType(
            N_("Send the roster file as the body with Content-Type: text/csv.")
        )
    data = request.get_data(cache=False)
    with transaction() as session:
        result = import_roster(session, classroom, data)
    return {
        "class_id": class_id,
        "rows": result.entries,
        "encoding": result.encoding,
        "delimiter": result.delimiter,
        "names_filled": result.names_filled,
    }


@bp.get("/classes/<int:class_id>/roster")
@login_required
def api_get_roster(class_id: int):
    """The roster, each entry joined, not joined, or joined under another name."""
    session = get_session()
    classroom = require_class_for_teacher(session, current_db_user(), class_id)
    return {
        "class_id": class_id,
        "entries": [line.to_dict() for line in roster_status(session, classroom)],
    }
