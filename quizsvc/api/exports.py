"""Exports over HTTP: a class's progress for its teachers, a learner's own history.

The file is streamed as it is produced (CSV and JSON lines row by row; XLSX once
built in a temporary file). Everything that can be wrong with the request (the
caller, the class, the kind, the format, the dates, the options) is checked
before the first byte, so a bad request is a JSON error, never half a file:
the options as they are read, the lesson with one query. The tables are built
once, from a session of their own (`read_only_session`) opened when streaming
starts, so a long download does not hold SQLite's write lock; the request's
own session only read, and closes with the request.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from urllib.parse import quote

from flask import Response, current_app, request
from sqlalchemy.orm import Session

from quizsvc.api import bp, login_required
from quizsvc.db import get_engine, get_session, read_only_session
from quizsvc.errors import Unavailable
from quizsvc.exports import MEDIA_TYPES, iter_csv, iter_json_document, render
from quizsvc.exports.instance import instance_iri
from quizsvc.exports.kinds import check_class_export, class_export
from quizsvc.exports.options import (
    DEFAULT_BASE_URL,
    ExportOptions,
    check_kind,
    file_stem,
    parse_date_range,
)
from quizsvc.exports.reviews import own_history
from quizsvc.http.login import current_db_user
from quizsvc.i18n import current_language
from quizsvc.models import Classroom, User
from quizsvc.services.classes import require_class_for_teacher
from quizsvc.services.errors import N_, InvalidInput
from quizsvc.services.grades import parse_grade_rule

OWN_FORMATS = ("csv", "json")


def _base_url() -> str:
    return current_app.config.get("BASE_URL") or request.url_root or DEFAULT_BASE_URL


def _instance_iri() -> str:
    config = current_app.config
    try:
        return instance_iri(
            current_app.instance_path,
            config.get("INSTANCE_IRI"),
            config.get("BASE_URL"),
        )
    except ValueError as exc:  # the configuration, not the request
        raise Unavailable(
            N_("The server's export settings are wrong: %(problem)s"),
            code="misconfigured",
            problem=str(exc),
        ) from None


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
        iri=_instance_iri(),
        dates=parse_date_range(args.get("from"), args.get("to")),
        rule=parse_grade_rule(args.get("rule"), args.get("retention_date")),
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
    `produce` needs no request: what it uses of one is read before.
    """
    engine = get_engine()

    def generate() -> Iterator[bytes]:
        with read_only_session(engine) as session:
            yield from produce(session)

    # content_type, not mimetype: the media type names its charset already,
    # and mimetype= would add a second.
    response = Response(generate(), content_type=MEDIA_TYPES[file_format])
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
    check_class_export(session, classroom, kind, options)
    language = current_language()
    stem = file_stem(classroom, kind, options.dates)
    fallback = f"class-{class_id}-{kind}"
    if options.dates.label():
        fallback += f"-{options.dates.label()}"

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
