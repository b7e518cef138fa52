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
from sqlalchemy import BigInteger, and_, case, func, select, true, tuple_
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import Session
from sqlalchemy.sql.expression import ColumnElement, FunctionElement

from quizsvc import scheduling
from quizsvc.models import (
    STATE_NEW,
    STATE_REVIEW,
    Card,
    Explanation,
    FsrsParameters,
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
from quizsvc.services.errors import N_, InvalidInput, Message
from quizsvc.services.insights import (
    RECENT_ANSWERS_PER_SKILL,
    RECENT_DAYS,
    Calibration,
    calibrate,
)

MISCONCEPTION_EXAMPLES = 3
EXPLANATIONS_SHOWN = 300
RECENT_REVIEWS_SHOWN = 50
DEFAULT_ROLLOVER_HOUR = 4
# The days a report's date filter accepts.
EARLIEST_DAY = date(1900, 1, 1)
LATEST_DAY = date(9998, 12, 31)
# Streaks are first counted over this many days; longer ones are counted again.
STREAK_WINDOW_DAYS = 35
_NO_TIME = np.iinfo(np.int64).min  # NumPy's NaT


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
    return f"CAST(FLOOR(EXTRACT(EPOCH FROM {moment})) AS BIGINT)"


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

    def read(text: str | None, field: str, what: str) -> date | None:
        if not text or not text.strip():
            return None
        try:
            day = date.fromisoformat(text.strip())
        except ValueError:
            raise InvalidInput(
                N_("%(what)s '%(text)s' is not a date; write it as 2026-09-01."),
                field=field,
                what=Message(what),
                text=text.strip()[:40],
            ) from None
        # Far-off days would overflow when shifted to UTC or to the next midnight.
        if not EARLIEST_DAY <= day <= LATEST_DAY:
            raise InvalidInput(
                N_("%(what)s must be from %(earliest)s to %(latest)s."),
                field=field,
                what=Message(what),
                earliest=EARLIEST_DAY.isoformat(),
                latest=LATEST_DAY.isoformat(),
            )
        return day

    first = read(start, "from", N_("The start date"))
    last = read(end, "to", N_("The end date"))
    if first and last and first > last:
        raise InvalidInput(N_("The start date is after the end date."), field="from")
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
class CardRecall:
    """Parallel arrays, one entry per started card of a class's learners."""

    user_id: np.ndarray
    item_id: np.ndarray
    recall: np.ndarray


def class_recall(session: Session, class_id: int, now: datetime) -> CardRecall:
    """Predicted recall now of every started card of the class's learners.

    The same FSRS forgetting curve as `services.progress.card_retrievability`
    (each learner's adopted decay), but read as integers and strings only, so
    a class's tens of thousands of cards cost one light query.
    """
    rows = session.execute(
        select(
            Card.user_id,
            Card.item_id,
            Card.stability,
            epoch_seconds(Card.last_review),
        ).where(Card.user_id.in_(_learner_ids(class_id)), Card.state != STATE_NEW)
    ).all()
    decays: dict[int, float] = {}
    for user_id, parameters in session.execute(
        select(FsrsParameters.user_id, FsrsParameters.parameters)
        .where(
            FsrsParameters.user_id.in_(_learner_ids(class_id)),
            FsrsParameters.adopted.is_(True),
        )
        .order_by(FsrsParameters.fitted_at, FsrsParameters.id)
    ):
        decays[user_id] = scheduling.decay_of(parameters)  # the latest one wins
    users = np.array([row[0] for row in rows], dtype=np.int64)
    stability = np.array(
        [np.nan if row[2] is None else row[2] for row in rows], dtype=float
    )
    seconds = np.array(
        [_NO_TIME if row[3] is None else row[3] for row in rows], dtype=np.int64
    )
    last = np.where(seconds == _NO_TIME, _NO_TIME, seconds * 1_000_000)
    default = scheduling.DEFAULT_PARAMETERS[20]
    decay = np.array([decays.get(int(u), default) for u in users], dtype=float)
    recall = scheduling.retrievability_at(
        stability, last.view("datetime64[us]"), now, decay
    )
    return CardRecall(users, np.array([row[1] for row in rows], dtype=object), recall)


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
    session: Session, user_ids: list[int], cards: CardRecall
) -> SkillHeatmap:
    """Mean predicted recall of each learner's cards, per skill they exercise."""
    skills = skills_in_order(session)
    column = {skill.id: j for j, skill in enumerate(skills)}
    row = {user_id: i for i, user_id in enumerate(user_ids)}
    items = {item_id: k for k, item_id in enumerate(dict.fromkeys(cards.item_id))}
    # links[k, slot]: the skill columns item k exercises (-1 fills the slots).
    per_item: dict[int, list[int]] = defaultdict(list)
    if items:
        for item_id, skill_id in session.execute(
            select(ItemSkill.item_id, ItemSkill.skill_id).where(
                ItemSkill.item_id.in_(list(items))
            )
        ):
            if skill_id in column:
                per_item[items[item_id]].append(column[skill_id])
    slots = max((len(c) for c in per_item.values()), default=0)
    links = np.full((len(items), slots), -1, dtype=np.int64)
    for k, columns in per_item.items():
        links[k, : len(columns)] = columns
    item_index = np.array([items[i] for i in cards.item_id], dtype=np.int64)
    row_index = np.array([row[int(u)] for u in cards.user_id], dtype=np.int64)
    size = len(user_ids) * len(skills)
    counts = np.zeros(size)
    sums = np.zeros(size)
    for slot in range(slots):
        skill_column = links[item_index, slot]
        keep = skill_column >= 0
        cell = row_index[keep] * len(skills) + skill_column[keep]
        counts += np.bincount(cell, minlength=size)
        sums += np.bincount(cell, weights=cards.recall[keep], minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    shape = (len(user_ids), len(skills))
    return SkillHeatmap(
        tuple(user_ids),
        tuple(skills),
        means.reshape(shape),
        counts.reshape(shape).astype(np.int64),
    )


def _streaks(
    session: Session, class_id: int, user_ids: list[int], now: datetime
) -> dict[int, int]:
    """Each learner's streak of learner days with answers, as the Today page counts.

    Days are counted in SQL from each learner's shift (their zone's offset now,
    less their rollover hour), first over a short window; only learners whose
    streak fills the window are counted again over STREAK_HORIZON_DAYS.
    """
    # Imported here: the drill's imports (grading, the bank) would slow every
    # command that loads this module, `quizsvc export` among them.
    from quizsvc.services.drill import STREAK_HORIZON_DAYS

    if not user_ids:
        return {}
    shifts: dict[int, int] = {}
    for user_id, profile, chosen, hour in session.execute(
        select(
            User.id,
            User.timezone,
            LearnerSettings.timezone,
            LearnerSettings.rollover_hour,
        )
        .outerjoin(LearnerSettings, LearnerSettings.user_id == User.id)
        .where(User.id.in_(_learner_ids(class_id)))
    ):
        zone = ZoneInfo(chosen or profile)
        offset = int(zone.utcoffset(now.replace(tzinfo=None)).total_seconds())
        rollover = DEFAULT_ROLLOVER_HOUR if hour is None else hour
        # Shifting every moment by the zone's offset less the rollover hour
        # makes learner days whole multiples of 86400 seconds.
        shifts[user_id] = offset - 3600 * rollover
    now_seconds = int(now.timestamp())
    streaks = {user_id: 0 for user_id in user_ids}
    pending = list(shifts)
    for window in (STREAK_WINDOW_DAYS, STREAK_HORIZON_DAYS + 1):
        if not pending:
            break
        by_shift: dict[int, list[int]] = defaultdict(list)
        for user_id in pending:
            by_shift[shifts[user_id]].append(user_id)
        shift = case(
            *((Review.user_id.in_(ids), value) for value, ids in by_shift.items()),
            else_=0,
        )
        day = ((epoch_seconds(Review.reviewed_at) + shift) // 86400).label("day")
        days: dict[int, set[int]] = defaultdict(set)
        for user_id, number in session.execute(
            select(Review.user_id, day)
            .where(
                Review.user_id.in_(pending),
                Review.reviewed_at >= now - timedelta(days=window + 1),
            )
            .group_by(Review.user_id, day)
        ):
            days[user_id].add(int(number))
        full = []
        for user_id in pending:
            today = (now_seconds + shifts[user_id]) // 86400
            active = days.get(user_id, set())
            # A streak still counts while today has no answer yet.
            streak = 1 if today in active else 0
            day = today - 1
            while day in active:
                streak += 1
                day -= 1
            streaks[user_id] = streak
            if streak >= window - 1:
                full.append(user_id)
        pending = full
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
    cards = class_recall(session, classroom.id, now)
    index = {user_id: i for i, user_id in enumerate(user_ids)}
    positions = np.array([index[u] for u in cards.user_id.tolist()], dtype=np.int64)
    card_counts = np.bincount(positions, minlength=len(user_ids))
    recall_sums = np.bincount(positions, weights=cards.recall, minlength=len(user_ids))
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
    return Overview(tuple(rows), skill_heatmap(session, user_ids, cards), period)


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
    # One pass: counts per misconception, learner and primary skill.
    reports: dict[str, MisconceptionReport] = {}
    for name, user_id, skill_id, count in session.execute(
        select(Review.misconception, Review.user_id, ItemSkill.skill_id, func.count())
        .outerjoin(
            ItemSkill,
            and_(ItemSkill.item_id == Review.item_id, ItemSkill.position == 0),
        )
        .where(*named)
        .group_by(Review.misconception, Review.user_id, ItemSkill.skill_id)
    ):
        report = reports.setdefault(name, MisconceptionReport(name))
        report.count += count
        report.by_learner[user_id] = report.by_learner.get(user_id, 0) + count
        if skill_id is not None:
            report.by_skill[skill_id] = report.by_skill.get(skill_id, 0) + count
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
    second = (Review.duration_ms // 1000).label("second")
    # One pass: the figures per item and whole second of answer time; the
    # seconds locate each item's median, which a second, narrow query reads.
    counts: dict[str, dict[str, int]] = {}
    histogram: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for row in session.execute(
        select(
            Review.item_id,
            second,
            func.count().label("attempts"),
            func.sum(case((first, 1), else_=0)).label("first_tries"),
            func.sum(case((and_(first, Review.correct), 1), else_=0)).label("first_ok"),
            func.sum(case((learned, 1), else_=0)).label("learned"),
            func.sum(case((and_(learned, Review.rating == 1), 1), else_=0)).label(
                "lapses"
            ),
        )
        .where(*scope)
        .group_by(Review.item_id, second)
    ):
        totals = counts.setdefault(row.item_id, defaultdict(int))
        for name in ("attempts", "first_tries", "first_ok", "learned", "lapses"):
            totals[name] += int(getattr(row, name) or 0)
        if row.second is not None:
            histogram[row.item_id].append((int(row.second), int(row.attempts)))
    medians = _median_durations(session, scope, histogram)
    items = {
        item_id: (item_type, content)
        for item_id, item_type, content in session.execute(
            select(Item.id, Item.type, Item.content).where(Item.id.in_(list(counts)))
        )
    }
    reports = [
        ItemReport(
            item_id=item_id,
            item_type=items[item_id][0],
            prompt=dict(items[item_id][1].get("prompt") or {}),
            attempts=totals["attempts"],
            first_tries=totals["first_tries"],
            first_try_correct=totals["first_ok"],
            review_answers=totals["learned"],
            lapses=totals["lapses"],
            median_ms=medians.get(item_id),
        )
        for item_id, totals in counts.items()
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


def _median_durations(
    session: Session, scope: list, histogram: dict[str, list[tuple[int, int]]]
) -> dict[str, float]:
    """Each item's exact median answer time (ms), from its per-second histogram.

    SQLite has no median, and sorting every review's time (in SQL or here)
    costs more than this: the histogram says in which whole second the middle
    answer(s) of each item lie, and only the answers of those seconds are read.
    """
    wanted: dict[str, tuple[int, int, int, int]] = {}
    for item_id, seconds in histogram.items():
        seconds.sort()
        total = sum(count for _second, count in seconds)
        ranks = ((total - 1) // 2, total // 2)
        located = []
        for rank in ranks:
            before = 0
            for second, count in seconds:
                if rank < before + count:
                    located.append((second, rank - before))
                    break
                before += count
        (low_second, low_rank), (high_second, high_rank) = located
        wanted[item_id] = (low_second, low_rank, high_second, high_rank)
    if not wanted:
        return {}
    # (item, second) pairs: a row-value IN is a lookup per review, where a
    # CASE over the items would be a scan of them.
    pairs = {(i, w[0]) for i, w in wanted.items()} | {
        (i, w[2]) for i, w in wanted.items()
    }
    second = Review.duration_ms // 1000
    found: dict[tuple[str, int], list[int]] = defaultdict(list)
    for item_id, duration in session.execute(
        select(Review.item_id, Review.duration_ms).where(
            *scope,
            Review.duration_ms.is_not(None),
            tuple_(Review.item_id, second).in_(sorted(pairs)),
        )
    ):
        found[(item_id, duration // 1000)].append(duration)
    medians = {}
    for item_id, (low_second, low_rank, high_second, high_rank) in wanted.items():
        lower = sorted(found[(item_id, low_second)])[low_rank]
        upper = sorted(found[(item_id, high_second)])[high_rank]
        medians[item_id] = (lower + upper) / 2
    return medians


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
    heatmap = skill_heatmap(session, user_ids, class_recall(session, classroom.id, now))
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
