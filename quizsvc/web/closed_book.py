"""The closed-book rule at the tools' doors: while a drill item is open (or a
wrong answer waits for its explanation), nothing computes its answer for the
learner — the Lab, Explore, the practice page of the same problem."""

from __future__ import annotations

from flask import render_template
from flask_login import current_user

from quizsvc.auth import current_db_user
from quizsvc.db import get_session
from quizsvc.services import drill


def _learner():
    return current_db_user() if current_user.is_authenticated else None


def finish_first_page():
    """The calm page that sends the learner back to their open item (423)."""
    return render_template("drill/finish_first.html"), 423


def tools_closed() -> bool:
    """Whether the signed-in learner must finish a drill item first."""
    user = _learner()
    return user is not None and drill.closed_book(get_session(), user)


def problem_closed(kind: str, seed: int, level: int) -> bool:
    """Whether checking this problem would answer the signed-in learner's item."""
    user = _learner()
    return user is not None and drill.problem_closed(
        get_session(), user, kind, seed, level
    )
