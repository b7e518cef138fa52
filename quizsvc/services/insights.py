"""What a learner's own record says: calibration, calendar, forecast, mistakes.

The self-assessment and progress pages (and their API) read these; nothing
here writes. Retrievability per skill comes from `services.progress`; this
module adds what that one does not: recent accuracy per skill, the verdict
that sets a self-rating against the record, review counts per learner day,
the due-review forecast and the latest mistakes grouped by misconception.

Days are the learner's days: they start at the rollover hour of their time
zone (settings), exactly as the daily queue and the streak count them, so a
review at 01:30 with a 04:00 rollover belongs to the day before.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo

import numpy as np
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from quizsvc import bank as bank_module
from quizsvc import scheduling
from quizsvc.models import (
    STATE_NEW,
    Card,
    Item,
    ItemSkill,
    Review,
    SelfAssessment,
    User,
)
from quizsvc.services import resolve_now
from quizsvc.services.progress import skill_progress
from quizsvc.services.settings import load_settings

# "Recent" accuracy looks at most this far back, and at most this many answers
# per skill: old answers say little about today, and a long streak of early
# mistakes should not outweigh the latest work.
RECENT_DAYS = 30
RECENT_ANSWERS_PER_SKILL = 20
# Fewer recent answers than this are too few to call an accuracy low or high.
MIN_RECENT_ANSWERS = 3
# The weakest record (accuracy and mean retrievability alike: both are shares
# of answers expected right) that still backs a self-rating. "Closed-book" (2)
# means getting most of it right unaided; "can teach it" (3) asks for more.
RECORD_FLOOR = {2: 0.6, 3: 0.75}
# A record this strong says the learner can do it closed-book, whatever they
# think: a rating of 0 ("not yet") or 1 ("with notes") undersells it.
STRONG_RECORD = 0.85
# On quizsvc.bank.SELF_ASSESSMENT_SCALE, 2 is "closed-book" (闭卷能做).
CLOSED_BOOK_LEVEL = 2
HISTORY_PER_SKILL = 5
CALENDAR_WEEKS = 12
FORECAST_DAYS = 14
MISTAKE_EXAMPLES = 3

Calibration = Literal["not_rated", "no_record", "overrated", "underrated", "consistent"]


# --- calibration ----------------------------------------------------------------


@dataclass(frozen=True)
class SkillRecord:
    """What the review log says about one skill of one learner."""

    skill_id: str
    title: dict
    cards: int
    mean_retrievability: float | None
    recent_answers: int
    recent_correct: int
    self_level: int | None
    # Predicted recall RECALL_HORIZON_DAYS from now: what learner pages show.
    recall_at_horizon: float | None = None

    @property
    def recent_accuracy(self) -> float | None:
        """The share of recent answers that were right (None without any)."""
        if not self.recent_answers:
            return None
        return self.recent_correct / self.recent_answers

    @property
    def calibration(self) -> Calibration:
        """How the latest self-rating compares with this record.

        Recall is judged where the page shows it, RECALL_HORIZON_DAYS ahead: just
        after practice, recall now would back any rating.
        """
        recall = (
            self.mean_retrievability
            if self.recall_at_horizon is None
            else self.recall_at_horizon
        )
        return calibrate(
            self.self_level,
            recall,
            self.recent_accuracy,
            self.recent_answers,
        )

    def to_dict(self) -> dict:
        """Return a JSON-serializable view."""
        return {
            "skill_id": self.skill_id,
            "cards": self.cards,
            "mean_retrievability": self.mean_retrievability,
            "recall_now": self.mean_retrievability,
            "recall_in_7_days": self.recall_at_horizon,
            "recent_answers": self.recent_answers,
            "recent_correct": self.recent_correct,
            "recent_accuracy": self.recent_accuracy,
            "self_level": self.self_level,
            "calibration": self.calibration,
        }


def calibrate(
    level: int | None,
    retrievability: float | None,
    accuracy: float | None,
    answers: int,
) -> Calibration:
    """Set a self-rating (0-3) against measured recall and recent accuracy.

    "overrated": the learner says closed-book or better, but a measure falls
    below that level's RECORD_FLOOR. "underrated": they say "with notes" or
    less, but every measure they have is at least STRONG_RECORD. A recent
    accuracy counts only with MIN_RECENT_ANSWERS answers behind it.
    """
    if level is None:
        return "not_rated"
    measures = [retrievability] if retrievability is not None else []
    if accuracy is not None and answers >= MIN_RECENT_ANSWERS:
        measures.append(accuracy)
    if not measures:
        return "no_record"
    weakest = min(measures)
    if level >= CLOSED_BOOK_LEVEL and weakest < RECORD_FLOOR[min(level, 3)]:
        return "overrated"
    if level < CLOSED_BOOK_LEVEL and weakest >= STRONG_RECORD:
        return "underrated"
    return "consistent"


def skill_records(
    session: Session,
    user: User,
    now: datetime | None = None,
    *,
    since: datetime | None = None,
) -> list[SkillRecord]:
    """Return the learner's record per skill, in lesson and skill order.

    With `since` (what a class's teachers may see: answers and self-ratings
    from when the learner joined), earlier ones are left out.
    """
    now = resolve_now(now)
    start = now - timedelta(days=RECENT_DAYS)
    if since is not None:
        start = max(start, since)
    rows = session.execute(
        select(ItemSkill.skill_id, Review.correct)
        .join(ItemSkill, ItemSkill.item_id == Review.item_id)
        .where(Review.user_id == user.id, Review.reviewed_at >= start)
        .order_by(Review.reviewed_at.desc(), Review.id.desc())
    )
    recent: dict[str, list[bool]] = defaultdict(list)
    for skill_id, correct in rows:
        if len(recent[skill_id]) < RECENT_ANSWERS_PER_SKILL:
            recent[skill_id].append(bool(correct))
    levels: dict[str, int] | None = None
    if since is not None:
        levels = {}
        for skill_id, level in session.execute(
            select(SelfAssessment.skill_id, SelfAssessment.level)
            .where(SelfAssessment.user_id == user.id)
            .where(SelfAssessment.assessed_at >= since)
            .order_by(SelfAssessment.assessed_at, SelfAssessment.id)
        ):
            levels[skill_id] = level  # later rows win
    return [
        SkillRecord(
            skill_id=progress.skill_id,
            title=progress.title,
            cards=progress.cards,
            mean_retrievability=progress.mean_retrievability,
            recent_answers=len(recent[progress.skill_id]),
            recent_correct=sum(recent[progress.skill_id]),
            self_level=progress.self_assessment
            if levels is None
            else levels.get(progress.skill_id),
            recall_at_horizon=progress.recall_at_horizon,
        )
        for progress in skill_progress(session, user, now)
    ]


def self_assessment_history(
    session: Session, user: User, per_skill: int = HISTORY_PER_SKILL
) -> dict[str, list[SelfAssessment]]:
    """Return each skill's latest self-assessments, newest first."""
    rank = (
        func.row_number()
        .over(
            partition_by=SelfAssessment.skill_id,
            order_by=(SelfAssessment.assessed_at.desc(), SelfAssessment.id.desc()),
        )
        .label("rank")
    )
    ranked = (
        select(SelfAssessment.id, rank)
        .where(SelfAssessment.user_id == user.id)
        .subquery()
    )
    rows = session.scalars(
        select(SelfAssessment)
        .join(ranked, ranked.c.id == SelfAssessment.id)
        .where(ranked.c.rank <= per_skill)
        .order_by(SelfAssessment.assessed_at.desc(), SelfAssessment.id.desc())
    )
    history: dict[str, list[SelfAssessment]] = defaultdict(list)
    for assessment in rows:
        history[assessment.skill_id].append(assessment)
    return dict(history)


# --- learner days ------------------------------------------------------------------


def _day_start(day: date, zone: ZoneInfo, rollover_hour: int) -> datetime:
    return datetime.combine(day, time(rollover_hour), tzinfo=zone).astimezone(UTC)


def learner_today(session: Session, user: User, now: datetime | None = None) -> date:
    """Return the date of the learner's current day (their zone, their rollover)."""
    now = resolve_now(now)
    settings = load_settings(session, user)
    start, _end = scheduling.learner_day(now, settings.timezone, settings.rollover_hour)
    return start.astimezone(ZoneInfo(settings.timezone)).date()


@dataclass(frozen=True)
class ReviewCalendar:
    """Answers per learner day, from the Monday `weeks` weeks back to today."""

    days: tuple[date, ...]
    counts: tuple[int, ...]
    today: date
    timezone: str

    @property
    def total(self) -> int:
        """All answers in the calendar's span."""
        return sum(self.counts)

    @property
    def active_days(self) -> int:
        """Days with at least one answer."""
        return sum(1 for count in self.counts if count)

    def to_dict(self) -> dict:
        """Return a JSON-serializable view."""
        return {
            "timezone": self.timezone,
            "start": self.days[0].isoformat(),
            "end": self.today.isoformat(),
            "total": self.total,
            "active_days": self.active_days,
            "days": [
                {"date": day.isoformat(), "count": count}
                for day, count in zip(self.days, self.counts, strict=True)
            ],
        }


def bucket_by_day(moments: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Count datetime64 moments per day, given each day's start and the last end.

    `starts` holds n + 1 ascending boundaries; moments outside them are left
    out. Returns n counts.
    """
    index = np.searchsorted(starts, moments, side="right") - 1
    inside = (index >= 0) & (index < len(starts) - 1)
    return np.bincount(index[inside], minlength=len(starts) - 1)


def review_calendar(
    session: Session,
    user: User,
    now: datetime | None = None,
    *,
    weeks: int = CALENDAR_WEEKS,
    since: datetime | None = None,
) -> ReviewCalendar:
    """Count the learner's answers per day over the last `weeks` calendar weeks.

    Weeks start on Monday; the last one is the current week, up to today.
    With `since`, answers before it are not counted (see skill_records).
    """
    now = resolve_now(now)
    settings = load_settings(session, user)
    zone = ZoneInfo(settings.timezone)
    today = learner_today(session, user, now)
    first = today - timedelta(days=today.weekday(), weeks=weeks - 1)
    days = tuple(first + timedelta(days=n) for n in range((today - first).days + 1))
    bounds = [_day_start(day, zone, settings.rollover_hour) for day in days]
    bounds.append(_day_start(today + timedelta(days=1), zone, settings.rollover_hour))
    moments = session.scalars(
        select(Review.reviewed_at).where(
            Review.user_id == user.id,
            Review.reviewed_at >= max(bounds[0], since or bounds[0]),
            Review.reviewed_at < bounds[-1],
        )
    )
    counts = bucket_by_day(
        scheduling.to_datetime64(moments), scheduling.to_datetime64(bounds)
    )
    return ReviewCalendar(
        days=days,
        counts=tuple(int(c) for c in counts),
        today=today,
        timezone=settings.timezone,
    )


@dataclass(frozen=True)
class Forecast:
    """Cards coming due per learner day; the first day includes overdue ones."""

    days: tuple[date, ...]
    due: tuple[int, ...]

    def to_dict(self) -> list[dict]:
        """Return a JSON-serializable view."""
        return [
            {"date": day.isoformat(), "due": count}
            for day, count in zip(self.days, self.due, strict=True)
        ]


def due_forecast(
    session: Session,
    user: User,
    now: datetime | None = None,
    *,
    days: int = FORECAST_DAYS,
) -> Forecast:
    """Count the learner's started cards that come due on each of the next days.

    Daily limits are not applied: this is how much falls due, not how much
    the queue will show.
    """
    now = resolve_now(now)
    settings = load_settings(session, user)
    zone = ZoneInfo(settings.timezone)
    today = learner_today(session, user, now)
    span = tuple(today + timedelta(days=n) for n in range(days))
    ends = [
        _day_start(day + timedelta(days=1), zone, settings.rollover_hour)
        for day in span
    ]
    dues = session.scalars(
        select(Card.due)
        .join(Item, Item.id == Card.item_id)
        .where(
            Card.user_id == user.id,
            Card.state != STATE_NEW,
            Item.retired_at.is_(None),
            Card.due < ends[-1],
        )
    )
    # Everything due before the end of today (overdue included) is today's.
    index = np.searchsorted(
        scheduling.to_datetime64(ends), scheduling.to_datetime64(dues), side="right"
    )
    counts = np.bincount(index, minlength=days)[:days]
    return Forecast(days=span, due=tuple(int(c) for c in counts))


# --- mistakes -------------------------------------------------------------------------


@dataclass(frozen=True)
class MistakeExample:
    """One wrong answer, with what is needed to link back to it."""

    review_id: int
    item_id: str
    reviewed_at: datetime
    problem_kind: str | None
    problem_level: int | None
    problem_seed: int | None

    def to_dict(self) -> dict:
        """Return a JSON-serializable view."""
        return {
            "review_id": self.review_id,
            "item_id": self.item_id,
            "reviewed_at": self.reviewed_at.isoformat(),
            "problem": None
            if self.problem_kind is None
            else {
                "kind": self.problem_kind,
                "level": self.problem_level,
                "seed": self.problem_seed,
            },
        }


@dataclass(frozen=True)
class MistakeGroup:
    """Recent wrong answers that the grader put down to one misconception."""

    misconception: str
    count: int
    examples: tuple[MistakeExample, ...]
    latest: datetime


@dataclass(frozen=True)
class RecentMistakes:
    """Wrong answers of the last `days` days, grouped, most frequent first."""

    groups: tuple[MistakeGroup, ...]
    unnamed: int
    total: int
    days: int


def recent_mistakes(
    session: Session,
    user: User,
    now: datetime | None = None,
    *,
    days: int = RECENT_DAYS,
    examples: int = MISTAKE_EXAMPLES,
) -> RecentMistakes:
    """Group the learner's recent wrong answers by the misconception named."""
    now = resolve_now(now)
    rows = session.execute(
        select(
            Review.id,
            Review.item_id,
            Review.reviewed_at,
            Review.misconception,
            Review.problem_kind,
            Review.problem_level,
            Review.problem_seed,
        )
        .where(
            Review.user_id == user.id,
            Review.correct.is_(False),
            Review.reviewed_at >= now - timedelta(days=days),
        )
        .order_by(Review.reviewed_at.desc(), Review.id.desc())
    ).all()
    by_name: dict[str, list] = defaultdict(list)
    unnamed = 0
    for row in rows:
        if row.misconception:
            by_name[row.misconception].append(row)
        else:
            unnamed += 1
    groups = [
        MistakeGroup(
            misconception=name,
            count=len(found),
            examples=tuple(_example(row) for row in found[:examples]),
            latest=found[0].reviewed_at,
        )
        for name, found in by_name.items()
    ]
    # Most frequent first; among equals, the one seen most recently.
    groups.sort(key=lambda g: (-g.count, -g.latest.timestamp(), g.misconception))
    return RecentMistakes(
        groups=tuple(groups), unnamed=unnamed, total=len(rows), days=days
    )


def _example(row) -> MistakeExample:
    return MistakeExample(
        review_id=row.id,
        item_id=row.item_id,
        reviewed_at=row.reviewed_at,
        problem_kind=row.problem_kind,
        problem_level=row.problem_level,
        problem_seed=row.problem_seed,
    )


def reviews_total(session: Session, user: User) -> int:
    """Return how many answers the learner has ever recorded."""
    return session.scalar(
        select(func.count()).select_from(Review).where(Review.user_id == user.id)
    )


def item_prompts(session: Session, item_ids: Sequence[str]) -> dict[str, dict]:
    """Return the bilingual prompt of each item, for listing past mistakes."""
    if not item_ids:
        return {}
    rows = session.execute(
        select(Item.id, Item.content).where(Item.id.in_(sorted(set(item_ids))))
    )
    return {item_id: dict(content.get("prompt") or {}) for item_id, content in rows}


# --- what the pages show -------------------------------------------------------------


@dataclass(frozen=True)
class SkillOverview:
    """One skill of the bank beside the learner's record and self-ratings."""

    skill: Any
    record: SkillRecord | None
    history: tuple[SelfAssessment, ...]

    @property
    def latest(self) -> SelfAssessment | None:
        """The learner's latest self-assessment of the skill."""
        return self.history[0] if self.history else None

    @property
    def calibration(self) -> Calibration:
        """How the latest self-rating compares with the record."""
        level = self.latest.level if self.latest is not None else None
        if self.record is None:
            return calibrate(level, None, None, 0)
        return calibrate(
            level,
            self.record.mean_retrievability,
            self.record.recent_accuracy,
            self.record.recent_answers,
        )


def ordered_skills(bank: bank_module.Bank) -> list[bank_module.Skill]:
    """The bank's skills in lesson order, then in their order within the lesson."""

    def position(skill: bank_module.Skill) -> tuple[int, int]:
        lesson = bank.lessons.get(skill.lesson_id)
        return (lesson.number if lesson is not None else 0, skill.order)

    return sorted(bank.skills.values(), key=position)


def skill_overview(
    session: Session, user: User, skills: Iterable[Any], now: datetime | None = None
) -> list[SkillOverview]:
    """Pair each bank skill (in the order given) with the learner's record."""
    records = {record.skill_id: record for record in skill_records(session, user, now)}
    history = self_assessment_history(session, user)
    return [
        SkillOverview(skill, records.get(skill.id), tuple(history.get(skill.id, ())))
        for skill in skills
    ]


@dataclass(frozen=True)
class ProgressReport:
    """Everything the progress page and GET /api/v1/progress show."""

    reviews_total: int
    streak: int
    skills: tuple[SkillRecord, ...]
    calendar: ReviewCalendar
    forecast: Forecast
    mistakes: RecentMistakes


def progress_report(
    session: Session, user: User, now: datetime | None = None
) -> ProgressReport:
    """Gather the learner's progress figures at one moment."""
    # Imported here: the drill's imports (grading, the bank) would slow every
    # command that loads this module, `quizsvc export` among them.
    from quizsvc.services.drill import learning_streak

    now = resolve_now(now)
    return ProgressReport(
        reviews_total=reviews_total(session, user),
        streak=learning_streak(session, user, now),
        skills=tuple(skill_records(session, user, now)),
        calendar=review_calendar(session, user, now),
        forecast=due_forecast(session, user, now),
        mistakes=recent_mistakes(session, user, now),
    )
