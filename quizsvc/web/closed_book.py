"""The closed-book rule at the tools' doors: while a drill item is open (or a
wrong answer waits for its explanation), nothing computes its answer for the
learner — the Lab, Explore, the practice page of the same problem (see
quizsvc.http.drill.problem_closed)."""

from __future__ import annotations

from flask import render_template
from flask_login import current_user

from quizsvc.db import get_session
from quizsvc.http.login import current_db_user
from quizsvc.services import drill


def finish_first_page():
    """The calm page that sends the learner back to their open item (423)."""
    return render_template("drill/finish_first.html"), 423


def tools_closed() -> bool:
    """Tell whether the signed-in learner must finish a drill item first."""
    if not current_user.is_authenticated:
        return False
    return drill.closed_book(get_session(), current_db_user())
