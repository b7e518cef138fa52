"""Exports of a class's progress (and of a learner's own history) as typed tables.

Four kinds for a class, each a `quizsvc.exports.tables.Table` whose rows are
produced lazily by a streamed query (server-side cursor, `yield_per`), so a
million reviews never sit in memory at once:

- reviews: one row per review of the class's learners, with the item, the
  answer as typed, the misconception, the generated problem's permalink and the
  learner's explanation;
- summary: one row per learner: reviews, streak, last activity, and per skill
  the predicted recall now, the 30-day accuracy and the latest self-rating;
- canvas: Canvas's gradebook import (Student, ID, SIS User ID, SIS Login ID,
  Section, one assignment column, the "Points Possible" row), scored by a rule
  the teacher picks (`CANVAS_RULES`);
- xapi: one xAPI 1.0.3 statement per review (see quizsvc.exports.xapi).

"workbook" puts reviews, summary and canvas in one XLSX file. The optional date
range [start, end] is read in the class's time zone, both days included. Tables
are built eagerly enough to refuse bad options (an unknown lesson) before the
first row is written; the rows themselves come only when iterated, from the
session given, which must stay open until then.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
from sqlalchemy import (
    DateTime,
    Select,
    String,
    and_,
    case,
    func,
    literal,
    select,
    type_coerce,
)
from sqlalchemy.orm import Session

from quizsvc.exports.tables import Column, Table, column
from quizsvc.exports.xapi import review_statement
from quizsvc.models import (
    Classroom,
    Explanation,
    Item,
    ItemSkill,
    LearnerSettings,
    Lesson,
    Membership,
    Review,
    SelfAssessment,
    User,
)
from quizsvc.services import resolve_now
from quizsvc.services.class_reports import (
    Period,
    SkillHeatmap,
    class_overview,
    parse_period,
    skills_in_order,
)
from quizsvc.services.errors import N_, InvalidInput

KINDS = ("reviews", "summary", "canvas", "xapi", "workbook")
FORMATS = {
    "reviews": ("csv", "xlsx", "jsonl"),
    "summary": ("csv", "xlsx", "jsonl"),
    "canvas": ("csv", "xlsx"),
    "xapi": ("jsonl",),
    "workbook": ("xlsx",),
}
CANVAS_RULES = ("mastery", "accuracy")
ACCURACY_DAYS = 30
# Matches the learner's own streak (services.drill): days further back than
# this cannot extend a streak anyone still has.
STREAK_HORIZON_DAYS = 400
YIELD_PER = 2000
DEFAULT_BASE_URL = "http://127.0.0.1:8000/"


# --- options ----------------------------------------------------------------------


@dataclass(frozen=True)
class DateRange:
    """Calendar days [start, end], both included; None leaves that side open."""

    start: date | None = None
    end: date | None = None

    def period(self, timezone: str) -> Period:
        """The range as days of a time zone (the class's)."""
        return Period(self.start, self.end, timezone)

    def label(self) -> str:
        """A file-name part such as "2026-03-01_2026-03-31" ("" when open)."""
        if not (self.start or self.end):
            return ""
        return f"{self.start or ''}_{self.end or ''}"


def parse_date_range(start: str | None, end: str | None) -> DateRange:
    """Read YYYY-MM-DD days (empty means open) as the dashboard's date filter does.

    A malformed date or a start after the end is an InvalidInput in both
    languages.
    """
    period = parse_period(start, end, "UTC")
    return DateRange(period.start, period.end)


@dataclass(frozen=True)
class ExportOptions:
    """Everything besides the class that shapes an export."""

    base_url: str = DEFAULT_BASE_URL
    dates: DateRange = field(default_factory=DateRange)
    # Canvas: how a learner's score is computed, out of how many points, for
    # which lesson (None: the first lesson of the bank), under which title.
    rule: str = "mastery"
    points: float = 100.0
    lesson_id: str | None = None
    assignment: str | None = None
    now: datetime | None = None

    def __post_init__(self) -> None:
        if self.rule not in CANVAS_RULES:
            raise InvalidInput(
                N_("unknown score rule '%(rule)s': choose mastery or accuracy"),
                rule=self.rule,
            )
        if not 0 < self.points <= 100_000:
            raise InvalidInput(N_("points must be more than 0 and at most 100000"))

    @property
    def base(self) -> str:
        """The base URL with one trailing slash."""
        return self.base_url.rstrip("/") + "/"


def check_kind(kind: str, file_format: str | None) -> str:
    """Return the format to use for a kind (its first when None); refuse others."""
    if kind not in FORMATS:
        raise InvalidInput(
            N_("unknown export '%(kind)s': choose one of %(kinds)s"),
            kind=kind,
            kinds=list(KINDS),
        )
    formats = FORMATS[kind]
    if file_format is None:
        return formats[0]
    if file_format not in formats:
        raise InvalidInput(
            N_("%(kind)s exports as %(formats)s, not '%(format)s'"),
            kind=kind,
            formats=list(formats),
            format=file_format,
        )
    return file_format


def class_export(
    session: Session, classroom: Classroom, kind: str, options: ExportOptions
) -> list[Table]:
    """Return the tables of one export kind for a class (one per sheet)."""
    check_kind(kind, None)
    if kind == "workbook":
        return [
            reviews_table(session, classroom, options),
            summary_table(session, classroom, options),
            canvas_table(session, classroom, options),
        ]
    build = {
        "reviews": reviews_table,
        "summary": summary_table,
        "canvas": canvas_table,
        "xapi": xapi_table,
    }[kind]
    return [build(session, classroom, options)]


def file_stem(classroom: Classroom, kind: str, dates: DateRange) -> str:
    """The export's file name without extension, e.g. "初三2班-reviews-2026-03-01_"."""
    parts = [classroom.name.strip() or f"class-{classroom.id}", kind]
    if dates.label():
        parts.append(dates.label())
    stem = "-".join(parts)
    return "".join("_" if ch in '\\/:*?"<>|' or ord(ch) < 32 else ch for ch in stem)


# --- shared look-ups ------------------------------------------------------------


@dataclass(frozen=True)
class _ItemInfo:
    type: str
    skills: str
    lesson_id: str
    prompt: dict[str, str] | None


def _items(session: Session) -> dict[str, _ItemInfo]:
    """Every item (retired ones too: old reviews point at them)."""
    skills: dict[str, list[str]] = defaultdict(list)
    for item_id, skill_id in session.execute(
        select(ItemSkill.item_id, ItemSkill.skill_id).order_by(
            ItemSkill.item_id, ItemSkill.position
        )
    ):
        skills[item_id].append(skill_id)
    return {
        item_id: _ItemInfo(
            item_type, ";".join(skills[item_id]), lesson_id, content.get("prompt")
        )
        for item_id, item_type, lesson_id, content in session.execute(
            select(Item.id, Item.type, Item.lesson_id, Item.content)
        )
    }


def _class_learners(classroom: Classroom):
    """The class's learners (not its teachers) as a subquery.

    The name is the one the learner gave the class, else their account's.
    """
    return (
        select(
            Membership.user_id,
            Membership.student_number,
            func.coalesce(Membership.display_name, User.display_name).label(
                "display_name"
            ),
        )
        .join(User, User.id == Membership.user_id)
        .where(Membership.class_id == classroom.id, Membership.role == "learner")
        .subquery("learners")
    )


def _in_range(query: Select, bounds: tuple[datetime | None, datetime | None]):
    start, end = bounds
    if start is not None:
        query = query.where(Review.reviewed_at >= start)
    if end is not None:
        query = query.where(Review.reviewed_at < end)
    return query


def _count(session: Session, query: Select) -> int:
    return session.scalar(
        select(func.count()).select_from(query.order_by(None).subquery())
    )


# --- reviews -------------------------------------------------------------------

REVIEW_COLUMNS = (
    column("review_id", "Review id", "记录编号", "int"),
    column("learner_id", "Learner id", "学习者编号", "int"),
    column("student_number", "Student number", "学号"),
    column("display_name", "Name", "姓名"),
    column("username", "Username", "用户名"),
    column("item_id", "Item id", "题目编号", "key"),
    column("item_type", "Item type", "题型", "key"),
    column("skills", "Skills", "技能", "key"),
    column("lesson", "Lesson", "课程", "key"),
    column("reviewed_at_utc", "Answered at (UTC)", "作答时间（UTC）", "datetime"),
    column(
        "reviewed_at_local",
        "Answered at (class time)",
        "作答时间（班级时区）",
        "datetime",
    ),
    column("rating", "Rating (1-4)", "评分（1-4）", "int"),
    column("correct", "Correct", "是否正确", "bool"),
    column("score", "Score (0-1)", "得分（0-1）", "float"),
    column("duration_ms", "Time taken (ms)", "用时（毫秒）", "int"),
    column("answer", "Answer as typed", "作答原文"),
    column("misconception", "Misconception", "典型错误", "key"),
    column("problem_kind", "Problem kind", "题目类型", "key"),
    column("problem_seed", "Problem seed", "题目种子", "int"),
    column("problem_level", "Problem level", "题目难度", "int"),
    column("permalink", "Problem permalink", "题目链接", "key"),
    column("explanation", "Explanation written", "错因说明"),
)


def _reviews_query(
    learners: Any, bounds: tuple[datetime | None, datetime | None]
) -> Select:
    """The reviews of the learners in `learners`, oldest first per learner.

    Ordered by learner, then time: the (user_id, reviewed_at) index gives that
    order without sorting.
    """
    query = (
        select(
            Review.id,
            Review.user_id,
            learners.c.student_number,
            learners.c.display_name,
            User.username,
            Review.item_id,
            # Plain DateTime: the UTC offset is added in _review_rows, faster
            # than UTCDateTime's per-value hook.
            type_coerce(Review.reviewed_at, DateTime(timezone=True)),
            Review.rating,
            Review.correct,
            Review.score,
            Review.duration_ms,
            Review.answer_text,
            Review.misconception,
            Review.problem_kind,
            Review.problem_seed,
            Review.problem_level,
            Explanation.body,
        )
        .join(learners, learners.c.user_id == Review.user_id)
        .join(User, User.id == Review.user_id)
        .outerjoin(Explanation, Explanation.review_id == Review.id)
        .order_by(learners.c.user_id, Review.reviewed_at, Review.id)
    )
    return _in_range(query, bounds)


def _streamed(session: Session, query: Select) -> Iterator[tuple]:
    """Run a query with a server-side cursor; yield its rows a batch at a time.

    Core rows straight from the connection: the ORM's row handling would cost
    more than everything else an exported row needs. The cursor is closed
    when the rows run out or the reader stops early.
    """
    with session.connection().execute(
        query.execution_options(yield_per=YIELD_PER)
    ) as result:
        for batch in result.partitions(YIELD_PER):
            yield from batch


def _review_rows(
    session: Session, query: Select, zone: ZoneInfo, base: str, cells: bool = False
) -> Iterator[tuple]:
    """Yield the reviews export's rows: typed values, or (`cells`) the finished
    rows of a `sqlite_exports.PerLearner` query (CSV records, XLSX rows)."""
    if cells:
        from quizsvc.services import sqlite_exports

        yield from sqlite_exports.lines(session, query)
        return
    items = {
        item_id: (info.type, info.skills, info.lesson_id)
        for item_id, info in _items(session).items()
    }
    for (review_id, user_id, number, name, username, item_id, moment, rating,
         correct, score, duration, answer, misconception, kind, seed, level,
         explanation) in _streamed(session, query):  # fmt: skip
        if moment.tzinfo is None:  # SQLite: stored as UTC without an offset
            moment = moment.replace(tzinfo=UTC)
        item_type, skills, lesson_id = items[item_id]
        yield (
            review_id, user_id, number, name, username, item_id, item_type,
            skills, lesson_id, moment, moment.astimezone(zone), rating,
            correct, score, duration, answer, misconception, kind, seed, level,
            f"{base}practice/{kind}/{level}/{seed}" if kind else None,
            explanation,
        )  # fmt: skip


def _class_reviews(classroom: Classroom, options: ExportOptions) -> Select:
    """The reviews of the class's learners in the date range (class days)."""
    bounds = options.dates.period(classroom.timezone).bounds()
    return _reviews_query(_class_learners(classroom), bounds)


def reviews_table(
    session: Session, classroom: Classroom, options: ExportOptions
) -> Table:
    """One row per review of the class's learners in the date range."""
    from quizsvc.services import sqlite_exports

    zone = ZoneInfo(classroom.timezone)
    query = _class_reviews(classroom, options)
    csv_lines = xlsx_rows = count = None
    if sqlite_exports.supported(session):
        items = {
            key: (it.type, it.skills, it.lesson_id)
            for key, it in _items(session).items()
        }
        bounds = options.dates.period(classroom.timezone).bounds()
        span = sqlite_exports.stored_span(session, _class_learners(classroom))
        cells_query = sqlite_exports.review_cells_query(
            session, _class_learners(classroom), bounds, zone, options.base, items, span
        )
        csv_lines = _review_rows(session, cells_query, zone, options.base, True)
        rows_query = sqlite_exports.review_rows_query(
            session, _class_learners(classroom), bounds, zone, options.base, items, span
        )
        xlsx_rows = _review_rows(session, rows_query, zone, options.base, True)
        # The direct XLSX writer states the sheet's size before its rows.
        count = _count_reviews(session, classroom, bounds)
    return Table(
        "reviews",
        {"en": "Reviews", "zh-CN": "答题记录"},
        REVIEW_COLUMNS,
        _review_rows(session, query, zone, options.base),
        count=count,
        csv_lines=csv_lines,
        xlsx_rows=xlsx_rows,
    )


def _count_reviews(
    session: Session,
    classroom: Classroom,
    bounds: tuple[datetime | None, datetime | None],
) -> int:
    """How many reviews of the class's learners fall in the bounds (an index's
    count, without the rows' joins)."""
    learners = select(_class_learners(classroom).c.user_id)
    query = select(func.count()).select_from(Review)
    return session.scalar(_in_range(query.where(Review.user_id.in_(learners)), bounds))


def count_rows(session: Session, classroom: Classroom, options: ExportOptions) -> int:
    """How many reviews a reviews or xAPI export of the class will hold."""
    return _count(session, _class_reviews(classroom, options))


# --- xAPI --------------------------------------------------------------------------


def xapi_table(session: Session, classroom: Classroom, options: ExportOptions) -> Table:
    """One xAPI statement per review of the class's learners in the date range."""
    zone = ZoneInfo(classroom.timezone)
    query = _class_reviews(classroom, options)
    lessons = dict(session.execute(select(Lesson.id, Lesson.title)).all())
    items = _items(session)

    def rows() -> Iterator[tuple]:
        for row in _review_rows(session, query, zone, options.base):
            (review_id, user_id, _number, name, username, item_id, item_type,
             _skills, lesson_id, moment, _local, _rating, correct, score, duration,
             answer, misconception, _kind, _seed, _level, permalink,
             _explanation) = row  # fmt: skip
            yield (
                review_statement(
                    options.base,
                    review_id=review_id,
                    learner_id=user_id,
                    learner_name=name or username,
                    item_id=item_id,
                    item_type=item_type,
                    item_prompt=items[item_id].prompt,
                    lesson_id=lesson_id,
                    lesson_title=lessons.get(lesson_id),
                    reviewed_at=moment,
                    correct=correct,
                    score=score,
                    duration_ms=duration,
                    answer=answer,
                    misconception=misconception,
                    permalink=permalink,
                ),
            )

    return Table(
        "xapi",
        {"en": "xAPI statements", "zh-CN": "xAPI 语句"},
        (Column("statement", {"en": "Statement", "zh-CN": "语句"}, "object"),),
        rows(),
    )


# --- per learner: the dashboard's figures, accuracy per skill, self-ratings ------


def _accuracy_by_skill(
    session: Session, classroom: Classroom, start: datetime, end: datetime
) -> dict[tuple[int, str], float]:
    """Share of right answers per learner and skill in [start, end)."""
    learners = _class_learners(classroom)
    rows = session.execute(
        select(
            Review.user_id,
            ItemSkill.skill_id,
            func.count(),
            func.sum(case((Review.correct, 1), else_=0)),
        )
        .join(learners, learners.c.user_id == Review.user_id)
        .join(ItemSkill, ItemSkill.item_id == Review.item_id)
        .where(Review.reviewed_at >= start, Review.reviewed_at < end)
        .group_by(Review.user_id, ItemSkill.skill_id)
    )
    return {(user, skill): right / total for user, skill, total, right in rows}


def _latest_self_ratings(
    session: Session, classroom: Classroom
) -> dict[tuple[int, str], int]:
    learners = _class_learners(classroom)
    latest = {}
    for user_id, skill_id, level in session.execute(
        select(SelfAssessment.user_id, SelfAssessment.skill_id, SelfAssessment.level)
        .join(learners, learners.c.user_id == SelfAssessment.user_id)
        .order_by(SelfAssessment.assessed_at, SelfAssessment.id)
    ):
        latest[(user_id, skill_id)] = level  # later rows win
    return latest


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(float(value), 4)


def _recall(heatmap: SkillHeatmap, learner: int, skill: int) -> float | None:
    """A heatmap cell's mean recall, None where the learner has no card."""
    if not heatmap.cards[learner, skill]:
        return None
    return _rounded(heatmap.recall[learner, skill])


def _learner_count(session: Session, classroom: Classroom) -> int:
    return session.scalar(select(func.count()).select_from(_class_learners(classroom)))


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


def summary_table(
    session: Session, classroom: Classroom, options: ExportOptions
) -> Table:
    """One row per learner: activity, and per skill recall, accuracy, self-rating.

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
            column(f"recall_{skill.id}", f"Recall now: {title['en']}",
                   f"当前记忆：{title['zh-CN']}", "float"),
            column(f"accuracy_{ACCURACY_DAYS}d_{skill.id}",
                   f"{ACCURACY_DAYS}-day accuracy: {title['en']}",
                   f"{ACCURACY_DAYS} 天正确率：{title['zh-CN']}", "float"),
            column(f"self_rating_{skill.id}", f"Self-rating (0-3): {title['en']}",
                   f"自评（0-3）：{title['zh-CN']}", "int"),
        ]  # fmt: skip

    def rows() -> Iterator[tuple]:
        # The dashboard's figures: the same streaks, activity and recall.
        overview = class_overview(session, classroom, period=period, now=now)
        end = period.bounds()[1]
        accuracy_end = min(now, end) if end else now
        accuracy = _accuracy_by_skill(
            session,
            classroom,
            accuracy_end - timedelta(days=ACCURACY_DAYS),
            accuracy_end,
        )
        ratings = _latest_self_ratings(session, classroom)
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
        count=_learner_count(session, classroom),
    )


# --- Canvas ------------------------------------------------------------------------

CANVAS_COLUMNS = (
    column("student", "Student", "Student"),
    column("id", "ID", "ID"),
    column("sis_user_id", "SIS User ID", "SIS User ID"),
    column("sis_login_id", "SIS Login ID", "SIS Login ID"),
    column("section", "Section", "Section"),
)


def _lesson(session: Session, lesson_id: str | None) -> Lesson | None:
    """The lesson asked for (InvalidInput if unknown), else the bank's first."""
    query = select(Lesson).where(Lesson.retired_at.is_(None))
    if lesson_id is None:
        # None before the bank is synced: every learner then scores 0.
        return session.scalar(query.order_by(Lesson.position).limit(1))
    lesson = session.scalar(query.where(Lesson.id == lesson_id))
    if lesson is None:
        known = list(session.scalars(select(Lesson.id).order_by(Lesson.position)))
        raise InvalidInput(
            N_("unknown lesson '%(lesson)s'; known: %(known)s"),
            lesson=lesson_id,
            known=known,
        )
    return lesson


def canvas_table(
    session: Session, classroom: Classroom, options: ExportOptions
) -> Table:
    """Canvas's gradebook import: one assignment column scored by `options.rule`.

    - mastery: the mean, over the lesson's skills, of the learner's predicted
      recall now (a skill not started counts 0), times the points;
    - accuracy: the share of right answers to the lesson's items in the date
      range, times the points (no answers: 0).

    Headers stay in English whatever the language: Canvas matches them by name.
    """
    now = resolve_now(options.now)
    period = options.dates.period(classroom.timezone)
    lesson = _lesson(session, options.lesson_id)
    lesson_name = f" {lesson.title.get('en') or lesson.id}" if lesson else ""
    title = options.assignment or f"quizsvc{lesson_name} ({options.rule})"
    columns = (*CANVAS_COLUMNS, column("score", title, title, "float"))
    section = classroom.name

    def rows() -> Iterator[tuple]:
        overview = class_overview(session, classroom, period=period, now=now)
        heatmap = overview.heatmap
        if options.rule == "mastery":
            lesson_skills = [
                j
                for j, skill in enumerate(heatmap.skills)
                if lesson is not None and skill.lesson_id == lesson.id
            ]
            recall = np.where(heatmap.cards > 0, heatmap.recall, 0.0)
            shares = {
                user_id: float(recall[i, lesson_skills].sum()) / len(lesson_skills)
                for i, user_id in enumerate(heatmap.user_ids)
                if lesson_skills
            }
        elif lesson is not None:
            shares = _lesson_accuracy(session, classroom, lesson.id, period.bounds())
        else:
            shares = {}
        for learner in overview.rows:
            yield (
                learner.name, None, learner.student_number, None, section,
                round(shares.get(learner.user_id, 0.0) * options.points, 2),
            )  # fmt: skip

    return Table(
        "canvas",
        {"en": "Canvas", "zh-CN": "Canvas 成绩"},
        columns,
        rows(),
        count=_learner_count(session, classroom) + 1,
        preamble=(("Points Possible", None, None, None, None, _points(options)),),
    )


def _points(options: ExportOptions) -> float | int:
    points = options.points
    return int(points) if float(points).is_integer() else points


def _lesson_accuracy(
    session: Session, classroom: Classroom, lesson_id: str, bounds: tuple
) -> dict[int, float]:
    learners = _class_learners(classroom)
    query = (
        select(
            Review.user_id,
            func.count(),
            func.sum(case((Review.correct, 1), else_=0)),
        )
        .join(learners, learners.c.user_id == Review.user_id)
        .join(Item, and_(Item.id == Review.item_id, Item.lesson_id == lesson_id))
        .group_by(Review.user_id)
    )
    return {
        user_id: right / total
        for user_id, total, right in session.execute(_in_range(query, bounds))
    }


# --- a learner's own history ---------------------------------------------------


def own_history(
    session: Session, user: User, options: ExportOptions
) -> tuple[Table, Table]:
    """The learner's own reviews and self-assessments (their zone's dates)."""
    settings = session.get(LearnerSettings, user.id)
    zone_name = settings.timezone if settings else user.timezone
    zone = ZoneInfo(zone_name)
    me = (
        select(
            User.id.label("user_id"),
            literal(None, String).label("student_number"),
            User.display_name,
        )
        .where(User.id == user.id)
        .subquery("learners")
    )
    query = _reviews_query(me, options.dates.period(zone_name).bounds())
    reviews = Table(
        "reviews",
        {"en": "Reviews", "zh-CN": "答题记录"},
        REVIEW_COLUMNS,
        _review_rows(session, query, zone, options.base),
    )

    def ratings() -> Iterator[tuple]:
        yield from session.execute(
            select(
                SelfAssessment.skill_id,
                SelfAssessment.level,
                SelfAssessment.note,
                SelfAssessment.assessed_at,
            )
            .where(SelfAssessment.user_id == user.id)
            .order_by(SelfAssessment.assessed_at, SelfAssessment.id)
        )

    assessments = Table(
        "self_assessments",
        {"en": "Self-assessments", "zh-CN": "自评"},
        (
            column("skill_id", "Skill", "技能", "key"),
            column("level", "Level (0-3)", "等级（0-3）", "int"),
            column("note", "Note", "备注"),
            column("assessed_at", "Rated at (UTC)", "自评时间（UTC）", "datetime"),
        ),
        ratings(),
    )
    return reviews, assessments
