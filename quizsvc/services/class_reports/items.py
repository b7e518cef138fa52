"""The items tab: how the class did on each bank item."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, case, func, select, tuple_
from sqlalchemy.orm import Session

from quizsvc.models import (
    STATE_NEW,
    STATE_REVIEW,
    Item,
    Review,
)
from quizsvc.services.class_reports.common import (
    Period,
    class_learner_ids,
)


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
        Review.user_id.in_(class_learner_ids(classroom.id)),
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
