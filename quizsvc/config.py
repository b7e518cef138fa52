"""Code defaults; instance/config.py and QUIZSVC_* environment variables override."""

from __future__ import annotations


class Defaults:
    """Settings every deployment starts from."""

    # None means "a SQLite file in the instance folder" (filled in by configure).
    DATABASE_URL: str | None = None
    # None means "a random key kept in instance/secret_key" (filled in by configure).
    SECRET_KEY: str | None = None
    # Forms and JSON bodies are small; a larger request is refused with 413.
    MAX_CONTENT_LENGTH = 256 * 1024
    # The largest matrix side the lab and the checker accept, so one request
    # cannot ask the server for a huge computation.
    MAX_MATRIX_SIDE = 16
