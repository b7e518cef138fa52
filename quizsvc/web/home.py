"""The front door: learners go to Today, visitors see what the service is."""

from __future__ import annotations

from flask import Blueprint, redirect, render_template, url_for
from flask_login import current_user

bp = Blueprint("home", __name__)


@bp.get("/")
def home():
    """Send a signed-in learner to Today; show everyone else the welcome page."""
    if current_user.is_authenticated:
        return redirect(url_for("today.today"))
    return render_template("home.html")
