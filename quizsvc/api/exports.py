"""Exports over HTTP: a class's progress for its teachers, a learner's own history.

The file is streamed as it is produced (CSV and JSON lines row by row; XLSX once
built in a temporary file). Everything that can be wrong with the request (the
caller, the class, the kind, the format, the dates, the options) is checked
before the first byte, so a bad request is a JSON error, never half a file.
The rows are read through a session of their own (`read_only_session`), opened
when streaming starts, so a long download does not hold SQLite's write lock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from urllib.parse import quote

from flask import Response, current_app, request, stream_with_context
from sqlalchemy.orm import Session

from quizsvc.api import bp, login_required
from quizsvc.db import get_engine, get_session, read_only_session
from quizsvc.exports import MEDIA_TYPES, iter_csv, iter_json_document, render
from quizsvc.http.login import current_db_user
from quizsvc.i18n import current_language
from quizsvc.models import Classroom, User
from quizsvc.services.classes import require_class_for_teacher
from quizsvc.services.errors import N_, InvalidInput
from quizsvc.services.exports import (
    DEFAULT_BASE_URL,
    ExportOptions,
    check_kind,
    class_export,
    file_stem,
    own_history,
    parse_date_range,
)

OWN_FORMATS = ("csv", "json")


def _base_url() -> str:
    return current_app.config.get("BASE_URL") or request.url_root or DEFAULT_BASE_URL


def content_disposition(filename: str, fallback: str) -> str:
    """An attachment header with an ASCII name and the UTF-8 one (RFC 6266/5987)."""
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename)}"


def _options() -> ExportOptions:
    args = request.args
    try:
        points = float(args.get("points", "100"))
    except ValueError:
        raise InvalidInput(N_("points must be a number")) from None
    return ExportOptions(
        base_url=_base_url(),
        dates=parse_date_range(args.get("from"), args.get("to")),
        rule=args.get("rule", "mastery"),
        points=points,
        lesson_id=args.get("lesson") or None,
        assignment=args.get("assignment") or None,
    )


def _download(
    produce: Callable[[Session], Iterator[bytes]],
    file_format: str,
    filename: str,
    fallback: str,
) -> Response:
    """Stream what `produce` yields from a read-only session of its own.

    The session opens with the first block and closes with the last (or when
    the client goes away), so a response never read holds nothing open.
    """
    engine = get_engine()

    def generate() -> Iterator[bytes]:
        with read_only_session(engine) as session:
            yield from produce(session)

    response = Response(
        stream_with_context(generate()), mimetype=MEDIA_TYPES[file_format]
    )
    response.headers["Content-Disposition"] = content_disposition(filename, fallback)
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.get("/classes/<int:class_id>/exports/<kind>")
@login_required
def api_class_export(class_id: int, kind: str):
    """Download one export of a class (teachers of the class and admins only)."""
    session = get_session()
    classroom = require_class_for_teacher(session, current_db_user(), class_id)
    file_format = check_kind(kind, request.args.get("format") or None)
    options = _options()
    language = current_language()
    # Building the tables checks the options (an unknown lesson, say) before
    # the first byte; their rows are read later, by the streaming session.
    class_export(session, classroom, kind, options)
    stem = file_stem(classroom, kind, options.dates)
    fallback = f"class-{class_id}-{kind}"
    if options.dates.label():
        fallback += f"-{options.dates.label()}"
    # End this request's transaction (on SQLite, its write lock) before the
    # long read.
    session.commit()

    def produce(reader: Session) -> Iterator[bytes]:
        tables = class_export(reader, reader.get(Classroom, class_id), kind, options)
        yield from render(tables, file_format, language)

    return _download(
        produce, file_format, f"{stem}.{file_format}", f"{fallback}.{file_format}"
    )


@bp.get("/me/export")
@login_required
def api_own_export():
    """Download your own history: answers (CSV), or answers and self-ratings (JSON)."""
    file_format = request.args.get("format") or "csv"
    if file_format not in OWN_FORMATS:
        raise InvalidInput(
            N_("format must be csv or json, not '%(format)s'"), format=file_format
        )
    options = ExportOptions(
        base_url=_base_url(),
        dates=parse_date_range(request.args.get("from"), request.args.get("to")),
    )
    user = current_db_user()
    user_id, username = user.id, user.username
    language = current_language()
    get_session().commit()

    def produce(reader: Session) -> Iterator[bytes]:
        me = reader.get(User, user_id)
        reviews, assessments = own_history(reader, me, options)
        if file_format == "csv":
            chunks = iter_csv(reviews, language)
        else:
            head = {
                "username": username,
                "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
            }
            chunks = iter_json_document(
                {"reviews": reviews, "self_assessments": assessments}, head
            )
        for chunk in chunks:
            yield chunk.encode("utf-8")

    return _download(
        produce,
        file_format,
        f"quizsvc-{username}-history.{file_format}",
        f"quizsvc-history-{user_id}.{file_format}",
    )
