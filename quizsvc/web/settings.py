"""Placeholder for the settings page (being written)."""

from __future__ import annotations

from flask import Blueprint, render_template

bp = Blueprint("settings", __name__)


@bp.get("/settings")
def settings():
    """Show the settings page."""
    return render_template("base.html")
