"""The summary table: one row per learner, with the dashboard's figures.

Reviews, streak, last activity, and per skill the predicted recall in
RECALL_HORIZON_DAYS days (as on the dashboard), the 30-day accuracy and the
latest self-rating.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy.orm import Session

from quizsvc.exports import queries
from quizsvc.exports.options import ExportOptions
from quizsvc.exports.tables import Table, column
from quizsvc.models import Classroom
from quizsvc.services import resolve_now
from quizsvc.services.class_reports import (
    SkillHeatmap,
    class_overview,
    skills_in_order,
)
from quizsvc.services.progress import RECALL_HORIZON_DAYS

ACCURACY_DAYS = 30
SUMMARY_COLUMNS = (
    column("learner_id", "Learner id", "学习者编号", "int"),
    column("student_number", "Student number", "学号"),
    column("display_name", "Name", "姓名"),
    column("username", "Username", "用户名"),
    column("reviews", "Reviews", "答题数", "int"),
    column("streak", "Streak (days)", "连续天数", "int"),
    column("last_active_utc", "Last active (UTC)", "最近活动（UTC）", "datetime"),
    column(
        "last_active_local",
        "Last active (class time)",
        "最近活动（班级时区）",
        "datetime",
    ),
)


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(float(value), 4)


def _recall(heatmap: SkillHeatmap, learner: int, skill: int) -> float | None:
    """Return a heatmap cell's mean recall, None where the learner has no card."""
    if not heatmap.cards[learner, skill]:
        return None
    return _rounded(heatmap.recall[learner, skill])


def summary_table(
    session: Session, classroom: Classroom, options: ExportOptions
) -> Table:
    """Return one row per learner: activity, and per skill recall, accuracy, rating.

    Reviews and last activity count the date range; the accuracy covers the 30
    days up to the range's end (or now); recall, streak and self-ratings are now.
    """
    now = resolve_now(options.now)
    zone = ZoneInfo(classroom.timezone)
    period = options.dates.period(classroom.timezone)
    skills = skills_in_order(session)
    columns = list(SUMMARY_COLUMNS)
    for skill in skills:
        title = skill.title
        columns += [
            column(f"recall_{RECALL_HORIZON_DAYS}d_{skill.id}",
                   f"Recall in {RECALL_HORIZON_DAYS} days: {title['en']}",
                   f"{RECALL_HORIZON_DAYS} 天后记忆：{title['zh-CN']}", "ratio"),
            column(f"accuracy_{ACCURACY_DAYS}d_{skill.id}",
                   f"{ACCURACY_DAYS}-day accuracy: {title['en']}",
                   f"{ACCURACY_DAYS} 天正确率：{title['zh-CN']}", "ratio"),
            column(f"self_rating_{skill.id}", f"Self-rating (0-3): {title['en']}",
                   f"自评（0-3）：{title['zh-CN']}", "int"),
        ]  # fmt: skip

    def rows() -> Iterator[tuple]:
        # The dashboard's figures: the same streaks, activity and recall.
        overview = class_overview(session, classroom, period=period, now=now)
        end = period.bounds()[1]
        accuracy_end = min(now, end) if end else now
        accuracy = queries.accuracy_by_skill(
            session,
            classroom,
            accuracy_end - timedelta(days=ACCURACY_DAYS),
            accuracy_end,
        )
        ratings = queries.latest_self_ratings(session, classroom)
        for i, learner in enumerate(overview.rows):
            last = learner.last_active
            row: list[Any] = [
                learner.user_id, learner.student_number, learner.name,
                learner.username, learner.reviews_in_period, learner.streak, last,
                last.astimezone(zone) if last else None,
            ]  # fmt: skip
            for j, skill in enumerate(overview.heatmap.skills):
                key = (learner.user_id, skill.id)
                row += [
                    _recall(overview.heatmap, i, j),
                    _rounded(accuracy.get(key)),
                    ratings.get(key),
                ]
            yield tuple(row)

    return Table(
        "summary",
        {"en": "Class summary", "zh-CN": "班级概况"},
        tuple(columns),
        rows(),
        count=queries.learner_count(session, classroom),
    )
