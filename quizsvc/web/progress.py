"""Placeholder for the progress page (being written)."""

from __future__ import annotations

from flask import Blueprint, render_template

bp = Blueprint("progress", __name__)


@bp.get("/progress")
def progress():
    """Show the progress page."""
    return render_template("base.html")
