"""The signed-in learner's drill as a request sees it, for the pages and the API."""

from __future__ import annotations

from flask_login import current_user

from quizsvc.db import begin_reading, get_session, transaction
from quizsvc.http.login import current_db_user
from quizsvc.services import drill


def current_drill_step() -> drill.DrillStep:
    """Return the signed-in learner's drill step, opening the next item if due.

    Most steps only read: the day's plan is worked out in the read phase and
    only opening an item takes the write lock (see db.begin_reading).
    """
    user = current_db_user()
    step = drill.preview_step(begin_reading(), user)
    if isinstance(step, drill.PlannedOpening):
        with transaction() as session:
            step = drill.open_planned(session, user, step)
    return step


def problem_closed(kind: str, seed: int, level: int) -> bool:
    """Tell whether checking this problem would answer the learner's drill item."""
    if not current_user.is_authenticated:
        return False
    return drill.problem_closed(get_session(), current_db_user(), kind, seed, level)
