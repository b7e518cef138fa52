"""Progress: retention per skill, answers per day, what comes due, recent mistakes.

Charts are SVG drawn on the server (quizsvc.web.charts), each with a title, a
description and a plain table beside it, so the page needs no script and
reads the same to a screen reader.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, render_template
from flask_babel import format_date
from flask_babel import gettext as _
from flask_login import login_required

from quizsvc import grading
from quizsvc.db import get_session
from quizsvc.http.login import current_db_user
from quizsvc.i18n import localized
from quizsvc.services import insights
from quizsvc.services.progress import RECALL_HORIZON_DAYS
from quizsvc.web.charts import column_chart_svg, labelled_bars_svg
from quizsvc.web.learner_charts import calendar_chart

bp = Blueprint("progress", __name__)

# A prompt longer than this is cut in the list of mistakes.
PROMPT_PREVIEW_CHARS = 90


def forecast_chart(forecast: insights.Forecast):
    """The column chart of reviews coming due over the next days."""
    return column_chart_svg(
        list(forecast.due),
        [str(day.day) for day in forecast.days],
        sublabels=[format_date(day, "EEEEE") for day in forecast.days],
        highlight=0,
        title=_("Reviews coming due"),
        value_format="{:d}",
    )


def retention_chart(records: list[insights.SkillRecord]):
    """The bar chart of predicted recall a week ahead per skill (skills with
    cards only)."""
    shown = [r for r in records if r.recall_at_horizon is not None]
    if not shown:
        return None
    return labelled_bars_svg(
        [r.recall_at_horizon for r in shown],
        [localized(r.title) for r in shown],
        title=_("Recall in %(days)d days, per skill", days=RECALL_HORIZON_DAYS),
    )


def _mistake_rows(report: insights.ProgressReport) -> list[dict[str, Any]]:
    """The mistake groups with a readable line for each example."""
    examples = [e for g in report.mistakes.groups for e in g.examples]
    prompts = insights.item_prompts(get_session(), [e.item_id for e in examples])
    rows = []
    for group in report.mistakes.groups:
        lines = []
        for example in group.examples:
            prompt = localized(prompts.get(example.item_id) or {}) or example.item_id
            if len(prompt) > PROMPT_PREVIEW_CHARS:
                prompt = prompt[:PROMPT_PREVIEW_CHARS].rstrip() + "…"
            lines.append({"example": example, "prompt": prompt})
        rows.append(
            {
                "group": group,
                "examples": lines,
                "known": group.misconception in grading.MISCONCEPTIONS,
            }
        )
    return rows


@bp.get("/progress")
@login_required
def progress():
    """Show retention per skill, the answer calendar, the forecast and mistakes."""
    report = insights.progress_report(
        get_session(), current_db_user(), datetime.now(UTC)
    )
    records = list(report.skills)
    return render_template(
        "progress.html",
        report=report,
        records=records,
        horizon_days=RECALL_HORIZON_DAYS,
        retention=retention_chart(records),
        calendar=calendar_chart(report.calendar),
        forecast=forecast_chart(report.forecast),
        mistakes=_mistake_rows(report),
        busy_days=[
            (day, count)
            for day, count in zip(
                report.calendar.days, report.calendar.counts, strict=True
            )
            if count
        ][::-1],
    )
