"""What a class's record says, for its teachers' dashboard and the class API.

Every report runs a fixed number of set-based queries over the class's
learners (GROUP BY learner, skill, item or misconception; window functions
where a "latest" or a median is needed), never one query per learner, so a
class of 200 learners costs the same handful of statements as one of two.
Recall now comes from the vectorized retrievability over all their cards.

Reports that look back (accuracy, misconceptions, items, explanations) take a
`Period`: whole days in the class's time zone, both ends optional.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
from sqlalchemy import BigInteger, and_, case, func, or_, select, true
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import Session
from sqlalchemy.sql.expression import ColumnElement, FunctionElement

from quizsvc.models import (
    STATE_NEW,
    STATE_REVIEW,
    Card,
    Explanation,
    Item,
    ItemSkill,
    LearnerSettings,
    Lesson,
    Membership,
    Review,
    SelfAssessment,
    Skill,
    User,
)
from quizsvc.services import resolve_now
from quizsvc.services.classes import class_learners, learner_name
from quizsvc.services.drill import STREAK_HORIZON_DAYS
from quizsvc.services.insights import (
    RECENT_ANSWERS_PER_SKILL,
    RECENT_DAYS,
    Calibration,
    calibrate,
)
from quizsvc.services.messages import LocalizedInvalidInput
from quizsvc.services.progress import card_retrievability

MISCONCEPTION_EXAMPLES = 3
EXPLANATIONS_SHOWN = 300
RECENT_REVIEWS_SHOWN = 50
# Reviews are bucketed by quarter hour to count streak days in SQL-light form:
# every time zone offset in use is a multiple of 15 minutes, so a bucket never
# straddles two learner days.
_BUCKET_SECONDS = 900
DEFAULT_ROLLOVER_HOUR = 4


class epoch_seconds(FunctionElement):
    """Seconds since 1970 (UTC) of a stored timestamp, as an integer."""

    type = BigInteger()
    inherit_cache = True


@compiles(epoch_seconds, "sqlite")
def _epoch_sqlite(element, compiler, **kw):
    moment = compiler.process(element.clauses, **kw)
    return f"CAST(strftime('%s', {moment}) AS INTEGER)"


@compiles(epoch_seconds, "postgresql")
def _epoch_postgresql(element, compiler, **kw):
    moment = compiler.process(element.clauses, **kw)
    return f"CAST(EXTRACT(EPOCH FROM {moment}) AS BIGINT)"


# --- the period a report covers -----------------------------------------------


@dataclass(frozen=True)
class Period:
    """Whole days from `start` to `end` (inclusive) in a time zone; None = open."""

    start: date | None = None
    end: date | None = None
    timezone: str = "UTC"

    def bounds(self) -> tuple[datetime | None, datetime | None]:
        """The UTC moments the period starts at and ends before."""
        zone = ZoneInfo(self.timezone)

        def midnight(day: date) -> datetime:
            return datetime.combine(day, time(0), tzinfo=zone).astimezone(UTC)

        return (
            midnight(self.start) if self.start else None,
            midnight(self.end + timedelta(days=1)) if self.end else None,
        )

    def where(self, column: Any) -> list[ColumnElement[bool]]:
        """Conditions keeping `column` (a UTC timestamp) inside the period."""
        start, end = self.bounds()
        conditions = []
        if start is not None:
            conditions.append(column >= start)
        if end is not None:
            conditions.append(column < end)
        return conditions

    def query_args(self) -> dict[str, str]:
        """The period as `from`/`to` query-string values (for links)."""
        args = {}
        if self.start:
            args["from"] = self.start.isoformat()
        if self.end:
            args["to"] = self.end.isoformat()
        return args


def parse_period(start: str | None, end: str | None, timezone: str) -> Period:
    """Read `from`/`to` dates (YYYY-MM-DD, either may be empty) into a Period."""

    def read(text: str | None, zh: str, en: str) -> date | None:
        if not text or not text.strip():
            return None
        try:
            return date.fromisoformat(text.strip())
        except ValueError:
            raise LocalizedInvalidInput(
                f"{zh}“{text.strip()[:40]}”不是日期；请写成 2026-09-01 这样。",
                f"{en} {text.strip()[:40]!r} is not a date; write it as 2026-09-01.",
            ) from None

    first = read(start, "开始日期", "The start date")
    last = read(end, "结束日期", "The end date")
    if first and last and first > last:
        raise LocalizedInvalidInput(
            "开始日期晚于结束日期。", "The start date is after the end date."
        )
    return Period(first, last, timezone)


def _learner_ids(class_id: int):
    return select(Membership.user_id).where(
        Membership.class_id == class_id, Membership.role == "learner"
    )


# --- overview: one row per learner --------------------------------------------


@dataclass(frozen=True)
class LearnerRow:
    """One learner's figures on the class overview."""

    user_id: int
    username: str
    name: str
    student_number: str | None
    joined_at: datetime
    last_active: datetime | None
    streak: int
    reviews_7d: int
    reviews_30d: int
    reviews_in_period: int
    correct_in_period: int
    overdue: int
    cards: int
    mean_recall: float | None

    @property
    def accuracy(self) -> float | None:
        """The share of the period's answers that were right."""
        if not self.reviews_in_period:
            return None
        return self.correct_in_period / self.reviews_in_period

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable view."""
        return {
            "user_id": self.user_id,
            "username": self.username,
            "name": self.name,
            "student_number": self.student_number,
            "joined_at": self.joined_at.isoformat(),
            "last_active": self.last_active.isoformat() if self.last_active else None,
            "streak": self.streak,
            "reviews_7d": self.reviews_7d,
            "reviews_30d": self.reviews_30d,
            "reviews_in_period": self.reviews_in_period,
            "accuracy": self.accuracy,
            "overdue": self.overdue,
            "cards": self.cards,
            "mean_recall": self.mean_recall,
        }


@dataclass(frozen=True)
class SkillHeatmap:
    """Mean recall now per learner (rows) and skill (columns); NaN = no card."""

    user_ids: tuple[int, ...]
    skills: tuple[Skill, ...]
    recall: np.ndarray
    cards: np.ndarray


def skills_in_order(session: Session) -> list[Skill]:
    """The bank's live skills in lesson and skill order."""
    return list(
        session.scalars(
            select(Skill)
            .join(Lesson, Lesson.id == Skill.lesson_id)
            .where(Skill.retired_at.is_(None))
            .order_by(Lesson.position, Skill.position)
        )
    )


def skill_heatmap(
    session: Session, user_ids: list[int], now: datetime | None = None
) -> SkillHeatmap:
    """Mean predicted recall now of each learner's cards, per skill they exercise."""
    skills = skills_in_order(session)
    recall = card_retrievability(session, user_ids, now)
    rows = {user_id: i for i, user_id in enumerate(user_ids)}
    columns = {skill.id: j for j, skill in enumerate(skills)}
    item_skills: dict[str, list[int]] = defaultdict(list)
    links = session.execute(select(ItemSkill.item_id, ItemSkill.skill_id))
    for item_id, skill_id in links:
        if skill_id in columns:
            item_skills[item_id].append(columns[skill_id])
    cells, values = [], []
    for user_id, item_id, value in zip(
        recall.user_id.tolist(), recall.item_id, recall.retrievability, strict=True
    ):
        if np.isnan(value):
            continue
        for column in item_skills.get(item_id, ()):
            cells.append(rows[user_id] * len(skills) + column)
            values.append(value)
    size = len(user_ids) * len(skills)
    counts = np.bincount(np.asarray(cells, dtype=np.int64), minlength=size)
    sums = np.bincount(
        np.asarray(cells, dtype=np.int64), weights=np.asarray(values), minlength=size
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    shape = (len(user_ids), len(skills))
    return SkillHeatmap(
        tuple(user_ids), tuple(skills), means.reshape(shape), counts.reshape(shape)
    )


def _streaks(
    session: Session, class_id: int, user_ids: list[int], now: datetime
) -> dict[int, int]:
    """Each learner's streak of learner days with answers, as the Today page counts."""
    if not user_ids:
        return {}
    zones = {
        user_id: (chosen or profile, hour)
        for user_id, profile, chosen, hour in session.execute(
            select(
                User.id,
                User.timezone,
                LearnerSettings.timezone,
                LearnerSettings.rollover_hour,
            )
            .outerjoin(LearnerSettings, LearnerSettings.user_id == User.id)
            .where(User.id.in_(_learner_ids(class_id)))
        )
    }
    bucket = (epoch_seconds(Review.reviewed_at) // _BUCKET_SECONDS).label("bucket")
    rows = session.execute(
        select(Review.user_id, bucket)
        .where(
            Review.user_id.in_(_learner_ids(class_id)),
            Review.reviewed_at >= now - timedelta(days=STREAK_HORIZON_DAYS + 2),
        )
        .group_by(Review.user_id, bucket)
    ).all()
    by_user: dict[int, list[int]] = defaultdict(list)
    for user_id, moment in rows:
        by_user[user_id].append(int(moment))
    streaks = {}
    now_seconds = int(now.timestamp())
    for user_id in user_ids:
        zone_name, hour = zones.get(user_id, ("UTC", None))
        zone = ZoneInfo(zone_name)
        # A learner day starts at the rollover hour; shifting every moment by
        # the zone's offset minus that hour makes days whole multiples of 86400.
        shift = int(zone.utcoffset(now.replace(tzinfo=None)).total_seconds())
        shift -= 3600 * (DEFAULT_ROLLOVER_HOUR if hour is None else hour)
        today = (now_seconds + shift) // 86400
        days = {
            (b * _BUCKET_SECONDS + shift) // 86400 for b in by_user.get(user_id, ())
        }
        streak = 1 if today in days else 0
        day = today - 1
        while day in days:
            streak += 1
            day -= 1
        streaks[user_id] = streak
    return streaks


@dataclass(frozen=True)
class Overview:
    """The class overview: learner rows and the learners × skills heatmap."""

    rows: tuple[LearnerRow, ...]
    heatmap: SkillHeatmap
    period: Period


def class_overview(
    session: Session,
    classroom: Any,
    *,
    period: Period | None = None,
    now: datetime | None = None,
) -> Overview:
    """Gather every learner's figures and recall per skill, in a few queries."""
    now = resolve_now(now)
    period = period or Period(timezone=classroom.timezone)
    memberships = class_learners(session, classroom)
    user_ids = [m.user_id for m in memberships]
    ids = _learner_ids(classroom.id)
    conditions = period.where(Review.reviewed_at)
    in_period = and_(*conditions) if conditions else true()

    def count_if(condition) -> Any:
        return func.coalesce(func.sum(case((condition, 1), else_=0)), 0)

    activity = {
        row.user_id: row
        for row in session.execute(
            select(
                Review.user_id,
                func.max(Review.reviewed_at).label("last_active"),
                count_if(Review.reviewed_at >= now - timedelta(days=7)).label("d7"),
                count_if(Review.reviewed_at >= now - timedelta(days=30)).label("d30"),
                count_if(in_period).label("in_period"),
                count_if(and_(in_period, Review.correct)).label("correct"),
            )
            .where(Review.user_id.in_(ids))
            .group_by(Review.user_id)
        )
    }
    overdue = dict(
        session.execute(
            select(Card.user_id, func.count())
            .join(Item, Item.id == Card.item_id)
            .where(
                Card.user_id.in_(ids),
                Card.state != STATE_NEW,
                Card.due < now,
                Item.retired_at.is_(None),
            )
            .group_by(Card.user_id)
        ).all()
    )
    recall = card_retrievability(session, user_ids, now)
    index = {user_id: i for i, user_id in enumerate(user_ids)}
    positions = np.array([index[u] for u in recall.user_id.tolist()], dtype=np.int64)
    known = ~np.isnan(recall.retrievability)
    card_counts = np.bincount(positions[known], minlength=len(user_ids))
    recall_sums = np.bincount(
        positions[known], weights=recall.retrievability[known], minlength=len(user_ids)
    )
    streaks = _streaks(session, classroom.id, user_ids, now)
    rows = []
    for i, membership in enumerate(memberships):
        found = activity.get(membership.user_id)
        rows.append(
            LearnerRow(
                user_id=membership.user_id,
                username=membership.user.username,
                name=learner_name(membership),
                student_number=membership.student_number,
                joined_at=membership.joined_at,
                last_active=found.last_active if found else None,
                streak=streaks.get(membership.user_id, 0),
                reviews_7d=int(found.d7) if found else 0,
                reviews_30d=int(found.d30) if found else 0,
                reviews_in_period=int(found.in_period) if found else 0,
                correct_in_period=int(found.correct) if found else 0,
                overdue=int(overdue.get(membership.user_id, 0)),
                cards=int(card_counts[i]),
                mean_recall=float(recall_sums[i] / card_counts[i])
                if card_counts[i]
                else None,
            )
        )
    return Overview(tuple(rows), skill_heatmap(session, user_ids, now), period)


# Sort keys of the overview table: the query string names one of these.
SORT_KEYS = {
    "number": lambda r: (r.student_number is None, r.student_number or "", r.name),
    "name": lambda r: (r.name.casefold(), r.user_id),
    "last_active": lambda r: (r.last_active is None, r.last_active or datetime.min),
    "streak": lambda r: r.streak,
    "reviews_7d": lambda r: r.reviews_7d,
    "reviews_30d": lambda r: r.reviews_30d,
    "overdue": lambda r: r.overdue,
    "accuracy": lambda r: (r.accuracy is None, r.accuracy or 0.0),
    "recall": lambda r: (r.mean_recall is None, r.mean_recall or 0.0),
}


def sort_rows(
    rows: tuple[LearnerRow, ...], key: str, descending: bool
) -> list[LearnerRow]:
    """Sort overview rows by a SORT_KEYS name; learners without a value stay last."""
    sorter = SORT_KEYS.get(key, SORT_KEYS["number"])
    if not descending:
        return sorted(rows, key=sorter)
    with_value = [r for r in rows if not _missing(r, key)]
    return sorted(with_value, key=sorter, reverse=True) + [
        r for r in rows if _missing(r, key)
    ]


def _missing(row: LearnerRow, key: str) -> bool:
    value = {
        "number": row.student_number,
        "last_active": row.last_active,
        "accuracy": row.accuracy,
        "recall": row.mean_recall,
    }.get(key, 0)
    return value is None


# --- misconceptions -----------------------------------------------------------


@dataclass(frozen=True)
class MisconceptionExample:
    """A wrong answer that shows a misconception, with its practice problem."""

    user_id: int
    item_id: str
    reviewed_at: datetime
    answer_text: str | None
    problem_kind: str | None
    problem_level: int | None
    problem_seed: int | None


@dataclass
class MisconceptionReport:
    """One misconception in this class: how often, on which skills, by whom."""

    misconception: str
    count: int = 0
    by_skill: dict[str, int] = field(default_factory=dict)
    by_learner: dict[int, int] = field(default_factory=dict)
    examples: list[MisconceptionExample] = field(default_factory=list)


def class_misconceptions(
    session: Session, classroom: Any, *, period: Period | None = None
) -> list[MisconceptionReport]:
    """The misconceptions named in the class's answers, most frequent first."""
    period = period or Period(timezone=classroom.timezone)
    named = [
        Review.user_id.in_(_learner_ids(classroom.id)),
        Review.misconception.is_not(None),
        *period.where(Review.reviewed_at),
    ]
    reports: dict[str, MisconceptionReport] = {}
    for name, user_id, count in session.execute(
        select(Review.misconception, Review.user_id, func.count())
        .where(*named)
        .group_by(Review.misconception, Review.user_id)
    ):
        report = reports.setdefault(name, MisconceptionReport(name))
        report.by_learner[user_id] = count
        report.count += count
    for name, skill_id, count in session.execute(
        select(Review.misconception, ItemSkill.skill_id, func.count())
        .join(ItemSkill, ItemSkill.item_id == Review.item_id)
        .where(*named, ItemSkill.position == 0)
        .group_by(Review.misconception, ItemSkill.skill_id)
    ):
        reports[name].by_skill[skill_id] = count
    rank = (
        func.row_number()
        .over(
            partition_by=Review.misconception,
            order_by=(Review.reviewed_at.desc(), Review.id.desc()),
        )
        .label("rank")
    )
    ranked = select(Review.id, rank).where(*named).subquery()
    for review in session.execute(
        select(
            Review.misconception,
            Review.user_id,
            Review.item_id,
            Review.reviewed_at,
            Review.answer_text,
            Review.problem_kind,
            Review.problem_level,
            Review.problem_seed,
        )
        .join(ranked, ranked.c.id == Review.id)
        .where(ranked.c.rank <= MISCONCEPTION_EXAMPLES)
        .order_by(Review.reviewed_at.desc(), Review.id.desc())
    ):
        reports[review.misconception].examples.append(
            MisconceptionExample(
                review.user_id,
                review.item_id,
                review.reviewed_at,
                review.answer_text,
                review.problem_kind,
                review.problem_level,
                review.problem_seed,
            )
        )
    return sorted(reports.values(), key=lambda r: (-r.count, r.misconception))


# --- items --------------------------------------------------------------------


@dataclass(frozen=True)
class ItemReport:
    """How a class did on one bank item."""

    item_id: str
    item_type: str
    prompt: dict
    attempts: int
    first_tries: int
    first_try_correct: int
    review_answers: int
    lapses: int
    median_ms: float | None

    @property
    def first_try_accuracy(self) -> float | None:
        """The share of learners whose first answer to the item was right."""
        return self.first_try_correct / self.first_tries if self.first_tries else None

    @property
    def lapse_rate(self) -> float | None:
        """The share of answers to a learned card that forgot it (rated Again)."""
        return self.lapses / self.review_answers if self.review_answers else None


def class_items(
    session: Session, classroom: Any, *, period: Period | None = None
) -> list[ItemReport]:
    """Each item the class answered, the hardest first (lowest first-try accuracy)."""
    period = period or Period(timezone=classroom.timezone)
    scope = [
        Review.user_id.in_(_learner_ids(classroom.id)),
        *period.where(Review.reviewed_at),
    ]
    first = Review.state_before == STATE_NEW
    learned = Review.state_before == STATE_REVIEW
    counts = session.execute(
        select(
            Review.item_id,
            func.count().label("attempts"),
            func.sum(case((first, 1), else_=0)).label("first_tries"),
            func.sum(case((and_(first, Review.correct), 1), else_=0)).label(
                "first_ok"
            ),
            func.sum(case((learned, 1), else_=0)).label("learned"),
            func.sum(case((and_(learned, Review.rating == 1), 1), else_=0)).label(
                "lapses"
            ),
        )
        .where(*scope)
        .group_by(Review.item_id)
    ).all()
    # The median time per item: the middle one or two of each item's sorted times.
    ordered = (
        select(
            Review.item_id,
            Review.duration_ms,
            func.row_number()
            .over(partition_by=Review.item_id, order_by=Review.duration_ms)
            .label("position"),
            func.count().over(partition_by=Review.item_id).label("n"),
        )
        .where(*scope, Review.duration_ms.is_not(None))
        .subquery()
    )
    medians = dict(
        session.execute(
            select(ordered.c.item_id, func.avg(ordered.c.duration_ms))
            .where(
                or_(
                    ordered.c.position == (ordered.c.n + 1) // 2,
                    ordered.c.position == (ordered.c.n + 2) // 2,
                )
            )
            .group_by(ordered.c.item_id)
        ).all()
    )
    items = {
        item_id: (item_type, content)
        for item_id, item_type, content in session.execute(
            select(Item.id, Item.type, Item.content).where(
                Item.id.in_([row.item_id for row in counts])
            )
        )
    }
    reports = [
        ItemReport(
            item_id=row.item_id,
            item_type=items[row.item_id][0],
            prompt=dict(items[row.item_id][1].get("prompt") or {}),
            attempts=int(row.attempts),
            first_tries=int(row.first_tries or 0),
            first_try_correct=int(row.first_ok or 0),
            review_answers=int(row.learned or 0),
            lapses=int(row.lapses or 0),
            median_ms=float(medians[row.item_id])
            if medians.get(row.item_id) is not None
            else None,
        )
        for row in counts
    ]
    reports.sort(
        key=lambda r: (
            r.first_try_accuracy is None,
            r.first_try_accuracy if r.first_try_accuracy is not None else 0.0,
            -(r.lapse_rate or 0.0),
            -r.attempts,
            r.item_id,
        )
    )
    return reports


# --- explanations -------------------------------------------------------------


@dataclass(frozen=True)
class ExplanationEntry:
    """What one learner wrote after a wrong answer."""

    user_id: int
    item_id: str
    body: str
    written_at: datetime
    answer_text: str | None
    misconception: str | None


def class_explanations(
    session: Session,
    classroom: Any,
    *,
    period: Period | None = None,
    item_id: str | None = None,
    user_id: int | None = None,
    limit: int = EXPLANATIONS_SHOWN,
) -> list[ExplanationEntry]:
    """The class's explanations of wrong answers, newest first."""
    period = period or Period(timezone=classroom.timezone)
    query = (
        select(
            Review.user_id,
            Review.item_id,
            Explanation.body,
            Explanation.created_at,
            Review.answer_text,
            Review.misconception,
        )
        .join(Review, Review.id == Explanation.review_id)
        .where(
            Explanation.user_id.in_(_learner_ids(classroom.id)),
            *period.where(Review.reviewed_at),
        )
        .order_by(Explanation.created_at.desc(), Explanation.id.desc())
        .limit(limit)
    )
    if item_id is not None:
        query = query.where(Review.item_id == item_id)
    if user_id is not None:
        query = query.where(Explanation.user_id == user_id)
    return [ExplanationEntry(*row) for row in session.execute(query)]


def group_by_item(
    entries: list[ExplanationEntry],
) -> list[tuple[str, list[ExplanationEntry]]]:
    """Group explanations per item; the item with the newest one comes first."""
    groups: dict[str, list[ExplanationEntry]] = {}
    for entry in entries:
        groups.setdefault(entry.item_id, []).append(entry)
    return list(groups.items())


# --- calibration --------------------------------------------------------------


@dataclass(frozen=True)
class CalibrationCell:
    """A learner's latest self-rating of a skill against the measured record."""

    level: int | None
    recall: float | None
    recent_answers: int
    recent_correct: int
    verdict: Calibration

    @property
    def accuracy(self) -> float | None:
        """Recent accuracy on the skill."""
        if not self.recent_answers:
            return None
        return self.recent_correct / self.recent_answers


@dataclass(frozen=True)
class CalibrationReport:
    """Cells per learner (rows, in roster order) and skill (columns)."""

    user_ids: tuple[int, ...]
    skills: tuple[Skill, ...]
    cells: tuple[tuple[CalibrationCell, ...], ...]

    def counts(self) -> dict[str, int]:
        """How many cells have each verdict."""
        totals: dict[str, int] = defaultdict(int)
        for row in self.cells:
            for cell in row:
                totals[cell.verdict] += 1
        return dict(totals)


def class_calibration(
    session: Session, classroom: Any, now: datetime | None = None
) -> CalibrationReport:
    """Each learner's latest self-rating per skill against recall and accuracy.

    The rule is the learner's own self-assessment page's
    (quizsvc.services.insights.calibrate): recent accuracy over the last
    RECENT_DAYS, at most RECENT_ANSWERS_PER_SKILL answers per skill.
    """
    now = resolve_now(now)
    user_ids = [m.user_id for m in class_learners(session, classroom)]
    heatmap = skill_heatmap(session, user_ids, now)
    ids = _learner_ids(classroom.id)
    latest_rank = (
        func.row_number()
        .over(
            partition_by=(SelfAssessment.user_id, SelfAssessment.skill_id),
            order_by=(SelfAssessment.assessed_at.desc(), SelfAssessment.id.desc()),
        )
        .label("rank")
    )
    rated = (
        select(
            SelfAssessment.user_id,
            SelfAssessment.skill_id,
            SelfAssessment.level,
            latest_rank,
        )
        .where(SelfAssessment.user_id.in_(ids))
        .subquery()
    )
    levels = {
        (user_id, skill_id): level
        for user_id, skill_id, level in session.execute(
            select(rated.c.user_id, rated.c.skill_id, rated.c.level).where(
                rated.c.rank == 1
            )
        )
    }
    recent_rank = (
        func.row_number()
        .over(
            partition_by=(Review.user_id, ItemSkill.skill_id),
            order_by=(Review.reviewed_at.desc(), Review.id.desc()),
        )
        .label("rank")
    )
    recent = (
        select(Review.user_id, ItemSkill.skill_id, Review.correct, recent_rank)
        .join(ItemSkill, ItemSkill.item_id == Review.item_id)
        .where(
            Review.user_id.in_(ids),
            Review.reviewed_at >= now - timedelta(days=RECENT_DAYS),
        )
        .subquery()
    )
    accuracy = {
        (user_id, skill_id): (int(answers), int(right or 0))
        for user_id, skill_id, answers, right in session.execute(
            select(
                recent.c.user_id,
                recent.c.skill_id,
                func.count(),
                func.sum(case((recent.c.correct, 1), else_=0)),
            )
            .where(recent.c.rank <= RECENT_ANSWERS_PER_SKILL)
            .group_by(recent.c.user_id, recent.c.skill_id)
        )
    }
    cells = []
    for i, user_id in enumerate(user_ids):
        row = []
        for j, skill in enumerate(heatmap.skills):
            level = levels.get((user_id, skill.id))
            value = heatmap.recall[i, j]
            recall = None if np.isnan(value) else float(value)
            answers, right = accuracy.get((user_id, skill.id), (0, 0))
            row.append(
                CalibrationCell(
                    level,
                    recall,
                    answers,
                    right,
                    calibrate(
                        level, recall, right / answers if answers else None, answers
                    ),
                )
            )
        cells.append(tuple(row))
    return CalibrationReport(tuple(user_ids), heatmap.skills, tuple(cells))


# --- one learner --------------------------------------------------------------


@dataclass(frozen=True)
class ReviewLine:
    """One of a learner's recent answers, as typed."""

    reviewed_at: datetime
    item_id: str
    correct: bool
    rating: int
    answer_text: str | None
    misconception: str | None
    duration_ms: int | None
    problem_kind: str | None
    problem_level: int | None
    problem_seed: int | None
    explanation: str | None


def recent_reviews(
    session: Session, user_id: int, limit: int = RECENT_REVIEWS_SHOWN
) -> list[ReviewLine]:
    """A learner's latest answers with what they typed and wrote, newest first."""
    rows = session.execute(
        select(
            Review.reviewed_at,
            Review.item_id,
            Review.correct,
            Review.rating,
            Review.answer_text,
            Review.misconception,
            Review.duration_ms,
            Review.problem_kind,
            Review.problem_level,
            Review.problem_seed,
            Explanation.body,
        )
        .outerjoin(Explanation, Explanation.review_id == Review.id)
        .where(Review.user_id == user_id)
        .order_by(Review.reviewed_at.desc(), Review.id.desc())
        .limit(limit)
    )
    return [ReviewLine(*row) for row in rows]
