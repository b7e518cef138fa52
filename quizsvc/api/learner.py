"""The learner's own record over JSON: self-assessments, progress, settings.

Every endpoint needs a signed-in learner (session or bearer token) and only
ever reads or changes that learner's rows. Bilingual texts come back in the
request's language (?lang=, the session's choice, or the learner's setting).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from quizsvc import grading
from quizsvc.api import bp, json_body, login_required
from quizsvc.bank import SELF_ASSESSMENT_SCALE
from quizsvc.bank_source import get_bank
from quizsvc.db import get_session, transaction
from quizsvc.errors import N_, BadRequest
from quizsvc.http.login import current_db_user
from quizsvc.i18n import current_language, localized
from quizsvc.models import SelfAssessment
from quizsvc.services import insights
from quizsvc.services.self_assessments import record_self_assessment
from quizsvc.services.settings import (
    SETTING_NAMES,
    apply_settings,
    load_settings,
    settings_dict,
)


def assessment_dict(assessment: SelfAssessment) -> dict[str, Any]:
    """A self-assessment as JSON."""
    return {
        "id": assessment.id,
        "skill_id": assessment.skill_id,
        "level": assessment.level,
        "note": assessment.note,
        "assessed_at": assessment.assessed_at.isoformat(),
    }


@bp.get("/self-assessments")
@login_required
def api_self_assessments():
    """Each skill: the latest self-rating, its history and the measured record."""
    lang = current_language()
    overview = insights.skill_overview(
        get_session(),
        current_db_user(),
        insights.ordered_skills(get_bank()),
        datetime.now(UTC),
    )
    return {
        "scale": [
            {"level": step["level"], "label": step[lang]}
            for step in SELF_ASSESSMENT_SCALE
        ],
        "skills": [
            {
                "skill_id": entry.skill.id,
                "title": localized(entry.skill.title),
                "can_do": localized(entry.skill.can_do),
                "latest": assessment_dict(entry.history[0]) if entry.history else None,
                "history": [assessment_dict(a) for a in entry.history],
                "measured": _measured(entry.record),
                "calibration": entry.calibration,
            }
            for entry in overview
        ],
    }


def _measured(record: insights.SkillRecord | None) -> dict[str, Any]:
    if record is None:
        return {
            "cards": 0,
            "mean_retrievability": None,
            "recall_now": None,
            "recall_in_7_days": None,
            "recent_answers": 0,
            "recent_accuracy": None,
        }
    return {
        "cards": record.cards,
        # Raw FSRS retrievability now (about 1.0 minutes after a review), under
        # both its old name and one that says what it is; pages show the
        # prediction a week ahead.
        "mean_retrievability": record.mean_retrievability,
        "recall_now": record.mean_retrievability,
        "recall_in_7_days": record.recall_at_horizon,
        "recent_answers": record.recent_answers,
        "recent_accuracy": record.recent_accuracy,
    }


@bp.post("/self-assessments")
@login_required
def api_record_self_assessment():
    """Rate yourself on a skill (level 0-3, optional note); the history is kept."""
    body = json_body(("skill_id",))
    skill_id, level, note = body["skill_id"], body.get("level"), body.get("note")
    if not isinstance(skill_id, str):
        raise BadRequest(N_("skill_id must be a string."), field="skill_id")
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level <= 3:
        raise BadRequest(N_("The level must be 0, 1, 2 or 3."), field="level")
    if note is not None and not isinstance(note, str):
        raise BadRequest(N_("note must be a string."), field="note")
    with transaction() as session:
        assessment = record_self_assessment(
            session, current_db_user(), skill_id, level, note=note
        )
    return assessment_dict(assessment), 201


@bp.get("/progress")
@login_required
def api_progress():
    """Retention per skill, answers per day, the due forecast, recent mistakes."""
    report = insights.progress_report(
        get_session(), current_db_user(), datetime.now(UTC)
    )
    mistakes = report.mistakes
    return {
        "reviews_total": report.reviews_total,
        "streak": report.streak,
        "skills": [
            {
                **record.to_dict(),
                "title": localized(record.title),
            }
            for record in report.skills
        ],
        "calendar": report.calendar.to_dict(),
        "forecast": report.forecast.to_dict(),
        "mistakes": {
            "days": mistakes.days,
            "total": mistakes.total,
            "unnamed": mistakes.unnamed,
            "by_misconception": [
                {
                    "misconception": group.misconception,
                    "explanation": _explanation(group.misconception),
                    "count": group.count,
                    "latest": group.latest.isoformat(),
                    "examples": [example.to_dict() for example in group.examples],
                }
                for group in mistakes.groups
            ],
        },
    }


def _explanation(misconception: str) -> str | None:
    entry = grading.MISCONCEPTIONS.get(misconception)
    return localized(entry) if entry is not None else None


@bp.get("/settings")
@login_required
def api_settings():
    """Your settings."""
    return settings_dict(load_settings(get_session(), current_db_user()))


@bp.patch("/settings")
@login_required
def api_update_settings():
    """Change some settings; unknown names or bad values are refused (400)."""
    body = json_body()
    unknown = sorted(set(body) - set(SETTING_NAMES))
    if unknown:
        raise BadRequest(
            N_("unknown setting(s): %(unknown)s; known: %(known)s"),
            field=unknown[0],
            unknown=unknown,
            known=list(SETTING_NAMES),
        )
    with transaction() as session:
        settings = apply_settings(session, current_db_user(), body)
        result = settings_dict(settings)
    return result
