"""Charts of one learner's record, shared by Progress and the teacher's learner page."""

from __future__ import annotations

from datetime import date

from flask_babel import format_date, ngettext
from flask_babel import gettext as _

from quizsvc.services import insights
from quizsvc.web.charts import calendar_heatmap_svg


def _weekday_labels() -> list[str]:
    # Label Monday, Wednesday and Friday only, as compact calendars do.
    monday = date(2024, 1, 1)
    return [
        format_date(monday.replace(day=1 + n), "EEE") if n in (0, 2, 4) else ""
        for n in range(7)
    ]


def _month_labels() -> list[str]:
    return [format_date(date(2024, month, 1), "LLL") for month in range(1, 13)]


def calendar_chart(calendar: insights.ReviewCalendar):
    """The calendar heatmap of answers per day, in the interface language."""
    titles = [
        ngettext(
            "%(date)s: %(num)d answer",
            "%(date)s: %(num)d answers",
            count,
            date=format_date(day, "medium"),
        )
        for day, count in zip(calendar.days, calendar.counts, strict=True)
    ]
    desc = ngettext(
        "%(num)d answer on %(active)d of the last %(span)d days.",
        "%(num)d answers on %(active)d of the last %(span)d days.",
        calendar.total,
        active=calendar.active_days,
        span=len(calendar.days),
    )
    return calendar_heatmap_svg(
        calendar.days,
        calendar.counts,
        title=_("Answers per day"),
        desc=desc,
        weekday_labels=_weekday_labels(),
        month_labels=_month_labels(),
        cell_titles=titles,
        today=calendar.today,
    )
