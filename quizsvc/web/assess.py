"""Placeholder for the assess page (being written)."""

from __future__ import annotations

from flask import Blueprint, render_template

bp = Blueprint("assess", __name__)


@bp.get("/assess")
def assess():
    """Show the assess page."""
    return render_template("base.html")
