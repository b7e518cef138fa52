"""Factories for tests: a learner's history, stored as the drill stores it.

`submit_answer` is the one way an answer is recorded in quizsvc (it opens,
grades, stores and replays a retried key). Tests that only need a history (an
answer given days ago, a graded outcome without typing it) build it with
`record_answer` here, which stores through the same `store_answer` the drill
uses but skips opening and grading. It never replays a key: tests of retries
use `submit_answer`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from quizsvc import scheduling
from quizsvc.models import Item, Review, User
from quizsvc.services.reviews import check_key, lock_learner, store_answer


def record_answer(
    session: Session,
    user: User,
    item_id: str,
    *,
    graded: scheduling.GradedAnswer | None = None,
    self_rating: str | scheduling.Rating | None = None,
    idempotency_key: str | None = None,
    now: datetime | None = None,
    **fields: Any,
) -> Review:
    """Store one answer to `item_id` and reschedule its card; return the review.

    Auto-graded items take `graded`; recall items the learner's `self_rating`.
    `fields` are the review's other columns (duration_ms, answer_text,
    problem_kind/seed/level, misconception, verdict).
    """
    item = session.get(Item, item_id)
    assert item is not None, f"no item {item_id!r} in the test bank"
    key = check_key(idempotency_key)
    lock_learner(session, user)
    return store_answer(
        session,
        user,
        item,
        graded=graded,
        self_rating=self_rating,
        idempotency_key=key,
        now=now,
        **fields,
    )
