"""Say in one line why `quizsvc serve` cannot start on this machine.

A full disk, an instance folder it may not write, or a database it cannot
reach would otherwise end the start with a traceback whose last line names
a symptom ("disk I/O error") instead of the cause. `explain()` looks at the
folders the service writes to and names the first problem it finds.
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

import click
from sqlalchemy import create_engine, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.pool import NullPool

# Below this much free space a folder counts as full: SQLite needs room for
# its journal and WAL before it can write a single page.
FULL_BELOW_BYTES = 1024 * 1024
# A probe write this large finds a disk with a few blocks left "full" too.
PROBE_BYTES = 64 * 1024
CONNECT_TIMEOUT_SECONDS = 5


class StartupError(click.ClickException):
    """The machine cannot run the service as configured: one line, exit status 2."""

    exit_code = 2


# Errors a broken environment raises while the app, its database and its
# rate-limit storage are set up (as opposed to a bug).
ENVIRONMENT_ERRORS = (OSError, sqlite3.Error, SQLAlchemyError)


def safe_url(url: str | URL) -> str:
    """A database URL fit to print: its password hidden."""
    return make_url(url).render_as_string(hide_password=True)


def check_database_reachable(url: str) -> None:
    """Connect to a server database within a few seconds, or refuse to start."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return
    engine = create_engine(
        parsed,
        poolclass=NullPool,
        connect_args={"connect_timeout": CONNECT_TIMEOUT_SECONDS},
    )
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT 1"))
    except SQLAlchemyError as exc:
        raise StartupError(
            f"cannot reach the database {safe_url(parsed)}: {first_line(exc)}"
        ) from None
    finally:
        engine.dispose()


def explain(exc: BaseException, folders: list[Path]) -> str:
    """Name the cause of a failed start: a full or unwritable folder, else the error."""
    for folder in folders:
        problem = folder_problem(folder)
        if problem:
            return problem
    return first_line(exc)


def folder_problem(folder: Path) -> str | None:
    """Say what keeps the service from writing files in `folder`, if anything."""
    if not folder.is_dir():
        # The folder itself could not be made (create_app makes the instance
        # folder; a database's folder must exist).
        missing = folder
        while not missing.parent.exists():
            missing = missing.parent
        if missing.parent.is_dir() and not os.access(missing.parent, os.W_OK):
            return f"cannot create the folder {folder}: permission denied"
        return f"the folder {folder} does not exist and could not be made"
    try:
        free = shutil.disk_usage(folder).free
    except OSError as exc:
        return f"cannot read the folder {folder}: {exc.strerror}"
    if free < FULL_BELOW_BYTES:
        return _full(folder, free)
    try:
        with tempfile.TemporaryFile(dir=folder, prefix=".quizsvc-probe-") as probe:
            probe.write(b"\0" * PROBE_BYTES)
            probe.flush()
            os.fsync(probe.fileno())
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return _full(folder, free)
        return f"cannot write to the folder {folder}: {exc.strerror}"
    return None


def _full(folder: Path, free: int) -> str:
    return (
        f"the disk holding {folder} is full ({free // 1024} KiB free): "
        "free some space and start again"
    )


def first_line(exc: BaseException) -> str:
    """An error's class and the first line of its message."""
    cause = getattr(exc, "orig", None) or exc
    lines = str(cause).strip().splitlines()
    return f"{type(cause).__name__}: {lines[0]}" if lines else type(cause).__name__
