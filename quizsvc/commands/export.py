"""`quizsvc export KIND --class ID`: a class's progress as CSV, XLSX or JSON lines."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import click
from flask import current_app
from flask.cli import with_appcontext

from quizsvc.commands.options import lang_option
from quizsvc.exports.options import KINDS
from quizsvc.services.grades import DEFAULT_RULE, RULES

ALL_FORMATS = ("csv", "xlsx", "jsonl")


@click.command("export")
@click.argument("kind", type=click.Choice(KINDS))
@click.option("--class", "class_id", type=int, required=True, help="The class id.")
@click.option("--from", "start", metavar="DATE", help="First day (YYYY-MM-DD).")
@click.option("--to", "end", metavar="DATE", help="Last day (YYYY-MM-DD), included.")
@click.option(
    "--format",
    "file_format",
    type=click.Choice(ALL_FORMATS),
    help="File format (default: csv; jsonl for xapi; xlsx for workbook).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, allow_dash=True),
    help="File to write ('-' = standard output; default: a name in this folder).",
)
@lang_option("Language of the column headers.")
@click.option(
    "--rule",
    type=click.Choice(RULES),
    default=DEFAULT_RULE,
    show_default=True,
    help="canvas, gradebook: score by accuracy (right answers in the dates), retention "
    "(predicted recall on --retention-date) or recall_now (predicted recall now).",
)
@click.option(
    "--retention-date",
    metavar="DATE",
    help="canvas, gradebook, rule retention: the day (YYYY-MM-DD; default: 7 days on).",
)
@click.option(
    "--points",
    type=click.FloatRange(0, 100_000, min_open=True),
    default=100.0,
    show_default=True,
    help="canvas, gradebook: points of the assignment.",
)
@click.option(
    "--lesson", help="canvas, gradebook: the lesson scored (default: the first)."
)
@click.option("--assignment", help="canvas: the assignment column's title.")
@click.option(
    "--base-url",
    help="Base URL of the service in links (default: BASE_URL in the "
    "configuration). xAPI ids come from INSTANCE_IRI, the same for the API.",
)
@with_appcontext
def export_command(
    kind, class_id, start, end, file_format, output, lang, rule, retention_date,
    points, lesson, assignment, base_url,
) -> None:  # fmt: skip
    """Export a class's reviews, summary, grades (Canvas or plain), xAPI or workbook.

    Dates are days in the class's time zone, both included. Bad input writes
    nothing and exits with code 2.
    """
    from quizsvc.db import get_engine, read_only_session
    from quizsvc.exports import write_file
    from quizsvc.exports.instance import instance_iri
    from quizsvc.exports.kinds import check_class_export, class_export
    from quizsvc.exports.options import (
        DEFAULT_BASE_URL,
        ExportOptions,
        check_kind,
        file_stem,
        parse_date_range,
    )
    from quizsvc.exports.reviews import count_rows
    from quizsvc.models import Classroom
    from quizsvc.services import ServiceError
    from quizsvc.services.grades import parse_grade_rule

    try:
        file_format = check_kind(kind, file_format)
        config = current_app.config
        options = ExportOptions(
            base_url=base_url or config.get("BASE_URL") or DEFAULT_BASE_URL,
            iri=instance_iri(
                current_app.instance_path,
                config.get("INSTANCE_IRI"),
                config.get("BASE_URL"),
            ),
            dates=parse_date_range(start, end),
            rule=parse_grade_rule(rule, retention_date),
            points=points,
            lesson_id=lesson,
            assignment=assignment,
        )
    except (ServiceError, ValueError) as exc:
        raise click.UsageError(str(exc)) from None
    with read_only_session(get_engine()) as session:
        classroom = session.get(Classroom, class_id)
        if classroom is None:
            raise click.UsageError(f"no class {class_id} (see the class list)")
        try:
            check_class_export(session, classroom, kind, options)
            tables = class_export(session, classroom, kind, options)
        except ServiceError as exc:
            raise click.UsageError(str(exc)) from None
        if sys.stderr.isatty():
            _show_progress(tables, lambda: count_rows(session, classroom, options))
        if output == "-":
            write_file(tables, file_format, sys.stdout.buffer, lang)
            sys.stdout.flush()
            return
        path = Path(
            output or f"{file_stem(classroom, kind, options.dates)}.{file_format}"
        )
        _write_atomically(
            path, lambda target: write_file(tables, file_format, target, lang)
        )
    click.echo(f"wrote {path}")


def _show_progress(tables, count_reviews) -> None:
    """Wrap each table's rows in a tqdm bar on standard error."""
    from tqdm import tqdm

    for table in tables:
        total = table.count
        if total is None:
            total = count_reviews()
        bar = {"total": total, "desc": table.name, "unit": " rows", "file": sys.stderr,
               "leave": False}  # fmt: skip
        table.rows = tqdm(table.rows, **bar)
        # The fast path writes these instead.
        if table.finished is not None:
            table.finished = _counted(table.finished, bar)


def _counted(finished, bar):
    """Wrap a table's finished rows, whichever format is asked, in a tqdm bar."""
    from tqdm import tqdm

    def counted(file_format, language):
        rows = finished(file_format, language)
        return None if rows is None else tqdm(rows, **bar)

    return counted


def _write_atomically(path: Path, write) -> None:
    """Write to a temporary file beside `path`, then rename; remove it on failure."""
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise click.UsageError(f"-o {path}: folder {folder} does not exist")
    handle, temporary = tempfile.mkstemp(
        dir=folder, prefix=f".{path.name}.", suffix=".part"
    )
    try:
        with os.fdopen(handle, "wb") as target:
            write(target)
        # mkstemp makes the file private (0600); give it the mode any new
        # file gets here, as the shell's > would.
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def _umask() -> int:
    """The process's file mode mask (reading it means setting it: set it back)."""
    mask = os.umask(0o077)
    os.umask(mask)
    return mask
