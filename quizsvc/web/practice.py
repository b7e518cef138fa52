"""Placeholder for the practice page (being written)."""

from __future__ import annotations

from flask import Blueprint, render_template

bp = Blueprint("practice", __name__)


@bp.get("/practice")
def practice():
    """Show the practice page."""
    return render_template("base.html")
