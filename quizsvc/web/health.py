"""Liveness and readiness probe."""

from __future__ import annotations

from flask import Blueprint
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from quizsvc import __version__
from quizsvc.db import get_session

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz():
    """Report whether the service and its database answer."""
    try:
        get_session().execute(text("SELECT 1"))
    except SQLAlchemyError as exc:
        return {
            "status": "error",
            "database": "unreachable",
            "message": type(exc).__name__,
            "version": __version__,
        }, 503
    return {"status": "ok", "database": "ok", "version": __version__}
