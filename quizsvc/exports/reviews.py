"""The per-review tables: a class's reviews, its xAPI statements, your own history.

- reviews: one row per review of the class's learners, with the item, the
  answer as typed, the misconception, the generated problem's permalink and
  the learner's explanation;
- xapi: one xAPI 1.0.3 statement per review (see quizsvc.exports.xapi);
- own history: a learner's own reviews and self-assessments.

The optional date range [start, end] is read in the class's time zone (the
learner's for their own history), both days included.
"""

from __future__ import annotations

from collections.abc import Iterator
from zoneinfo import ZoneInfo

from sqlalchemy import String, literal, select
from sqlalchemy.orm import Session

from quizsvc.exports import labels as labels_module
from quizsvc.exports import queries, sqlite_fast
from quizsvc.exports.labels import Labels, load_labels
from quizsvc.exports.options import ExportOptions
from quizsvc.exports.tables import Column, Table, column
from quizsvc.exports.xapi import review_statement
from quizsvc.models import (
    Classroom,
    LearnerSettings,
    Lesson,
    SelfAssessment,
    User,
)

REVIEWS_TITLE = {"en": "Reviews", "zh-CN": "答题记录"}


def review_columns(labels: Labels, *, own: bool = False) -> tuple[Column, ...]:
    """Return the reviews export's columns; `own`: a learner's own history.

    Item types, skills, lessons, right or wrong, misconceptions and problem
    kinds are shown as words in the file's language (see labels).
    """
    local = (
        ("Answered at (your time)", "作答时间（你的时区）")
        if own
        else ("Answered at (class time)", "作答时间（班级时区）")
    )
    return (
        column("review_id", "Review id", "记录编号", "int"),
        column("learner_id", "Learner id", "学习者编号", "int"),
        column("student_number", "Student number", "学号"),
        column("display_name", "Name", "姓名"),
        column("username", "Username", "用户名"),
        column("item_id", "Item id", "题目编号", "key"),
        column("item_type", "Item type", "题型", "key", labels_module.item_type),
        column("skills", "Skills", "技能", "key", labels.skill_list),
        column("lesson", "Lesson", "课程", "key", labels.lesson),
        column("reviewed_at_utc", "Answered at (UTC)", "作答时间（UTC）", "datetime"),
        column("reviewed_at_local", *local, "datetime"),
        column("rating", "Rating (1-4)", "评分（1-4）", "int"),
        column("correct", "Correct", "是否正确", "bool", labels_module.show_correct),
        column("score", "Score (share)", "得分率", "ratio"),
        column("duration_ms", "Time taken (ms)", "用时（毫秒）", "int"),
        # The answer as people read it (option and step texts, matrices as
        # rows of plain numbers), in the file's language; beside it the answer
        # as stored, for programs.
        column("answer", "Answer", "作答", "text", labels_module.readable),
        column("answer_raw", "Answer as stored", "作答原始数据"),
        column(
            "misconception",
            "Misconception",
            "典型错误",
            "key",
            labels_module.misconception,
        ),  # fmt: skip
        column(
            "problem_kind",
            "Generated problem: kind",
            "生成题种类",
            "key",
            labels_module.problem_kind,
        ),  # fmt: skip
        column("problem_seed", "Generated problem: seed", "生成题种子", "int"),
        column("problem_level", "Generated problem: level", "生成题难度", "int"),
        column("permalink", "Generated problem: link", "生成题链接", "key"),
        column("explanation", "Explanation written", "错因说明"),
    )


def _class_reviews(classroom: Classroom, options: ExportOptions):
    """Select the reviews of the class's learners in the date range (class days)."""
    bounds = options.dates.period(classroom.timezone).bounds()
    return queries.reviews_query(queries.class_learners(classroom), bounds)


def reviews_table(
    session: Session, classroom: Classroom, options: ExportOptions
) -> Table:
    """Return one row per review of the class's learners in the date range."""
    zone = ZoneInfo(classroom.timezone)
    bounds = options.dates.period(classroom.timezone).bounds()
    learners = queries.class_learners(classroom)
    columns = review_columns(load_labels(session))
    return Table(
        "reviews",
        REVIEWS_TITLE,
        columns,
        queries.review_rows(
            session, queries.reviews_query(learners, bounds), zone, options.base
        ),
        # The XLSX writer states the sheet's size before its rows.
        count=queries.count_reviews(session, classroom, bounds),
        finished=sqlite_fast.review_records(
            session, learners, bounds, zone, options.base, columns
        ),
    )


def count_rows(session: Session, classroom: Classroom, options: ExportOptions) -> int:
    """Return how many reviews a reviews or xAPI export of the class will hold."""
    return queries.count(session, _class_reviews(classroom, options))


def xapi_table(session: Session, classroom: Classroom, options: ExportOptions) -> Table:
    """Return one xAPI statement per review of the class's learners in the range."""
    zone = ZoneInfo(classroom.timezone)
    query = _class_reviews(classroom, options)
    lessons = dict(session.execute(select(Lesson.id, Lesson.title)).all())
    items = queries.items(session)

    def rows() -> Iterator[tuple]:
        for row in queries.review_rows(session, query, zone, options.base):
            (review_id, user_id, _number, name, username, item_id, item_type,
             _skills, lesson_id, moment, _local, _rating, correct, score, duration,
             readable, answer, misconception, _kind, _seed, _level, permalink,
             _explanation) = row  # fmt: skip
            yield (
                review_statement(
                    options.identity,
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
                    readable_answer=readable,
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


def own_history(
    session: Session, user: User, options: ExportOptions
) -> tuple[Table, Table]:
    """Return the learner's own reviews and self-assessments (their zone's dates)."""
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
    query = queries.reviews_query(
        me, options.dates.period(zone_name).bounds(), own=True
    )
    labels = load_labels(session)
    reviews = Table(
        "reviews",
        REVIEWS_TITLE,
        review_columns(labels, own=True),
        queries.review_rows(session, query, zone, options.base),
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
            column("skill_id", "Skill", "技能", "key", labels.skill),
            column("level", "Level (0-3)", "等级（0-3）", "int"),
            column("note", "Note", "备注"),
            column("assessed_at", "Rated at (UTC)", "自评时间（UTC）", "datetime"),
        ),
        ratings(),
    )
    return reviews, assessments
