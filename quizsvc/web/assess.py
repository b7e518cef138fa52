"""Self-assessment: rate yourself on each skill and compare with your record.

The can-do statements come from the question bank; each rating is appended
to the learner's history (nothing is overwritten). Beside the latest rating
the page shows what the review log measures, and says when the two disagree.
"""

from __future__ import annotations

from datetime import UTC, datetime

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_login import login_required

from quizsvc.bank import SELF_ASSESSMENT_SCALE
from quizsvc.bank_source import get_bank
from quizsvc.db import get_session, transaction
from quizsvc.http.errors import message_of, status_of
from quizsvc.http.login import current_db_user
from quizsvc.services import NotFound, ServiceError, insights
from quizsvc.services.progress import RECALL_HORIZON_DAYS
from quizsvc.services.self_assessments import MAX_NOTE_CHARS, record_self_assessment

bp = Blueprint("assess", __name__)

# What the page says about each calibration (an unrated skill says so in its
# rating line instead).
CALIBRATION_TEXT = {
    "overrated": _l(
        "You rate yourself higher than your record supports: your recent "
        "answers or your measured recall on this skill fall short of that "
        "level. Practise it closed-book before you count on it."
    ),
    "underrated": _l(
        "Your record is better than your rating: you answer this skill "
        "reliably and remember it well. You may rate yourself higher."
    ),
    "consistent": _l("Your rating and your record agree."),
    "no_record": _l(
        "You have not answered anything on this skill yet, so there is "
        "no record to compare your rating with."
    ),
}


def _render(
    errors: dict[str, str] | None = None,
    values: dict[str, dict[str, str]] | None = None,
    status: int = 200,
):
    overview = insights.skill_overview(
        get_session(),
        current_db_user(),
        insights.ordered_skills(get_bank()),
        datetime.now(UTC),
    )
    return render_template(
        "assess.html",
        overview=overview,
        scale=SELF_ASSESSMENT_SCALE,
        calibration_text=CALIBRATION_TEXT,
        errors=errors or {},
        values=values or {},
        max_note=MAX_NOTE_CHARS,
        horizon_days=RECALL_HORIZON_DAYS,
    ), status


@bp.get("/assess")
@login_required
def assess():
    """Show every skill's can-do statement, your ratings and your record."""
    return _render()


@bp.post("/assess/<skill_id>")
@login_required
def rate(skill_id: str):
    """Append a self-rating (0-3) with an optional note to one skill's history."""
    if skill_id not in get_bank().skills:
        abort(404, description=_("There is no skill with this name."))
    level_text = request.form.get("level", "")
    note = request.form.get("note", "")
    typed = {skill_id: {"level": level_text, "note": note}}
    if level_text not in {"0", "1", "2", "3"}:
        return _render(
            errors={skill_id: _("Choose one of the four levels.")},
            values=typed,
            status=400,
        )
    if len(note.strip()) > MAX_NOTE_CHARS:
        return _render(
            errors={
                skill_id: _("Keep the note under %(n)d characters.", n=MAX_NOTE_CHARS)
            },
            values=typed,
            status=400,
        )
    try:
        with transaction() as session:
            record_self_assessment(
                session, current_db_user(), skill_id, int(level_text), note=note
            )
    except NotFound:
        abort(
            404,
            description=_(
                "This skill is not in the database yet; the bank has to be synced "
                "first (quizsvc questions sync)."
            ),
        )
    except ServiceError as exc:
        return _render(
            errors={skill_id: message_of(exc)}, values=typed, status=status_of(exc)
        )
    flash(_("Your rating is saved."), "success")
    return redirect(url_for("assess.assess", _anchor=f"skill-{skill_id}"))
