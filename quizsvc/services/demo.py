"""Demo learners with a realistic review history, written in bulk.

`seed_demo_data(engine, learners=N, reviews=M)` adds N learners and M reviews
over the items already synced from the bank. Each learner works through some
items; each card's reviews come at growing gaps (minutes on the first day, then
days), mostly remembered; FSRS-6 (fsrs-rs) computes the memory state after
every review, so cards, due dates and the review log agree with each other.

This is for demos and benchmarks, not requests: it commits a chunk of learners
at a time and writes rows with the driver's fastest path (executemany on
SQLite, COPY on PostgreSQL), choosing primary keys itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
from sqlalchemy import Connection, Engine, func, insert, select, text

from quizsvc import item_types, scheduling
from quizsvc.db.engine import is_sqlite
from quizsvc.models import (
    STATE_LEARNING,
    STATE_NEW,
    STATE_RELEARNING,
    STATE_REVIEW,
    Card,
    Item,
    LearnerSettings,
    Review,
    User,
)
from quizsvc.services import resolve_now
from quizsvc.services.errors import N_, InvalidInput

# Rating mix of a diligent learner: mostly Good, some Again.
RATING_PROBABILITIES = (0.12, 0.08, 0.72, 0.08)
LEARNERS_PER_CHUNK = 200
CARD_COLUMNS = (
    "id", "user_id", "item_id", "state", "step", "stability", "difficulty", "due",
    "last_review", "reps", "lapses", "created_at", "updated_at",
)  # fmt: skip
REVIEW_COLUMNS = (
    "id", "user_id", "item_id", "card_id", "reviewed_at", "rating", "rating_source",
    "correct", "score", "duration_ms", "answer_text", "hint_used", "problem_kind",
    "problem_seed", "problem_level", "misconception", "idempotency_key",
    "state_before", "state_after", "stability_after", "difficulty_after", "due_after",
)  # fmt: skip


@dataclass(frozen=True)
class DemoSummary:
    """What the seeder wrote."""

    learners: int
    cards: int
    reviews: int
    usernames: tuple[str, ...]


def seed_demo_data(
    engine: Engine,
    *,
    learners: int,
    reviews: int,
    prefix: str = "demo",
    seed: int = 0,
    days: int = 120,
    now: datetime | None = None,
    progress: Callable[[int], Any] | None = None,
) -> DemoSummary:
    """Add `learners` learners sharing `reviews` reviews of the synced items."""
    now = resolve_now(now)
    if learners < 1 or reviews < 0 or days < 1:
        raise InvalidInput(
            N_("Need at least one learner, no negative counts, and days >= 1.")
        )
    with engine.connect() as connection:
        items = connection.execute(
            select(Item.id, Item.type)
            .where(Item.retired_at.is_(None))
            .order_by(Item.position)
        ).all()
        if not items:
            raise InvalidInput(
                N_("No items in the database: run `quizsvc questions sync` first.")
            )
        usernames = [f"{prefix}-{i:05d}" for i in range(1, learners + 1)]
        taken = connection.scalar(
            select(func.count()).where(User.username.in_(usernames))
        )
        if taken:
            raise InvalidInput(
                N_(
                    "Learners named %(prefix)s-NNNNN already exist; choose another "
                    "prefix."
                ),
                prefix=prefix,
            )
    shares = _split(reviews, learners)
    card_total = review_total = 0
    for start in range(0, learners, LEARNERS_PER_CHUNK):
        chunk = range(start, min(start + LEARNERS_PER_CHUNK, learners))
        with engine.begin() as connection:
            user_ids = _insert_learners(connection, [usernames[i] for i in chunk], now)
            next_card, next_review = _next_ids(connection)
            cards, log = [], []
            for user_id, index in zip(user_ids, chunk, strict=True):
                rng = np.random.default_rng([seed, index])
                history = _learner_history(rng, shares[index], len(items), days, now)
                for item_index, moments, ratings in history:
                    item_id, item_type = items[item_index]
                    card_rows, review_rows = _card_rows(
                        user_id, item_id, item_type, next_card, next_review,
                        moments, ratings, rng,
                    )  # fmt: skip
                    cards.append(card_rows)
                    log.extend(review_rows)
                    next_card += 1
                    next_review += len(review_rows)
            _states_from_fsrs(cards, log)
            _copy(connection, Card.__table__.name, CARD_COLUMNS, cards)
            _copy(connection, Review.__table__.name, REVIEW_COLUMNS, log)
            card_total += len(cards)
            review_total += len(log)
        if progress is not None:
            progress(len(log))
    with engine.begin() as connection:
        _after_bulk_load(connection)
    return DemoSummary(learners, card_total, review_total, tuple(usernames))


def _split(total: int, parts: int) -> list[int]:
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def _insert_learners(
    connection: Connection, usernames: Sequence[str], now: datetime
) -> list[int]:
    connection.execute(
        insert(User),
        [
            {"username": name, "role": "learner", "locale": "zh-CN",
             "timezone": "Asia/Shanghai", "created_at": now}
            for name in usernames
        ],
    )  # fmt: skip
    ids = dict(
        connection.execute(
            select(User.username, User.id).where(User.username.in_(usernames))
        ).all()
    )
    user_ids = [ids[name] for name in usernames]
    connection.execute(
        insert(LearnerSettings),
        [
            {"user_id": user_id, "desired_retention": 0.9, "new_per_day": 10,
             "reviews_per_day": 100, "rollover_hour": 4, "timezone": "Asia/Shanghai",
             "two_button_mode": False, "language": "zh-CN", "updated_at": now}
            for user_id in user_ids
        ],
    )  # fmt: skip
    return user_ids


def _next_ids(connection: Connection) -> tuple[int, int]:
    card = connection.scalar(select(func.coalesce(func.max(Card.id), 0)))
    review = connection.scalar(select(func.coalesce(func.max(Review.id), 0)))
    return card + 1, review + 1


def _learner_history(
    rng: np.random.Generator, review_count: int, item_count: int, days: int,
    now: datetime,
) -> Iterator[tuple[int, list[datetime], list[int]]]:  # fmt: skip
    """Yield (item index, review times, ratings) for each card the learner has."""
    if review_count == 0:
        return
    # About eight reviews per card, but never more cards than items.
    card_count = min(item_count, max(1, math.ceil(review_count / 8)))
    items = rng.choice(item_count, size=card_count, replace=False)
    counts = 1 + rng.multinomial(
        review_count - card_count, [1 / card_count] * card_count
    )
    span = timedelta(days=days)
    for item_index, count in zip(items, counts, strict=True):
        start = now - span * rng.uniform(0.3, 1.0)
        # Minutes apart on the first day, then gaps that grow about 2.2× a time
        # (capped: a card with many reviews would otherwise overflow timedelta).
        gaps = [
            timedelta(minutes=float(rng.uniform(1, 15)))
            for _ in range(min(2, count - 1))
        ]
        gaps += [
            timedelta(days=float(1.2 * 2.2 ** min(i, 10) * rng.uniform(0.7, 1.3)))
            for i in range(count - 1 - len(gaps))
        ]
        total = sum(gaps, timedelta(0))
        room = now - timedelta(hours=1) - start
        scale = min(1.0, room / total) if total > timedelta(0) else 1.0
        moments, moment = [start], start
        for gap in gaps:
            moment += gap * scale
            moments.append(moment)
        ratings = rng.choice([1, 2, 3, 4], size=count, p=RATING_PROBABILITIES).tolist()
        yield int(item_index), moments, ratings


def _card_rows(
    user_id: int, item_id: str, item_type: str, card_id: int, first_review_id: int,
    moments: list[datetime], ratings: list[int], rng: np.random.Generator,
) -> tuple[dict, list[dict]]:  # fmt: skip
    graded = not item_types.of(item_type).self_rated
    reviews = []
    for i, (moment, rating) in enumerate(zip(moments, ratings, strict=True)):
        correct = rating > 1
        reviews.append(
            {
                "id": first_review_id + i, "user_id": user_id, "item_id": item_id,
                "card_id": card_id, "reviewed_at": moment, "rating": rating,
                "rating_source": "graded" if graded else "learner",
                "correct": correct,
                "score": (1.0 if correct else 0.0) if graded else None,
                "duration_ms": int(rng.lognormal(9.6, 0.5)), "answer_text": None,
                "hint_used": False, "problem_kind": None, "problem_seed": None,
                "problem_level": None, "misconception": None, "idempotency_key": None,
                "state_before": STATE_NEW if i == 0 else STATE_REVIEW,
            }
        )  # fmt: skip
    card = {
        "id": card_id, "user_id": user_id, "item_id": item_id, "step": None,
        "reps": len(reviews), "lapses": sum(1 for r in ratings[1:] if r == 1),
        "created_at": moments[0], "updated_at": moments[-1],
        "last_review": moments[-1],
    }  # fmt: skip
    return card, reviews


def _states_from_fsrs(cards: list[dict], log: list[dict]) -> None:
    """Fill each review's after-state and each card's state from FSRS-6 (fsrs-rs)."""
    from fsrs_rs_python import FSRS, FSRSItem, FSRSReview

    by_card: dict[int, list[dict]] = {}
    for review in log:
        by_card.setdefault(review["card_id"], []).append(review)
    items = []
    for card in cards:
        rows = by_card[card["id"]]
        previous = rows[0]["reviewed_at"]
        reviews = []
        for row in rows:
            reviews.append(
                FSRSReview(row["rating"], (row["reviewed_at"] - previous).days)
            )
            previous = row["reviewed_at"]
        items.append(FSRSItem(reviews))
    states = FSRS(list(scheduling.DEFAULT_PARAMETERS)).historical_memory_state_batch(
        items
    )
    for card, memory in zip(cards, states, strict=True):
        rows = by_card[card["id"]]
        for i, (row, state) in enumerate(zip(rows, memory, strict=True)):
            if row["rating"] == 1:
                after = STATE_LEARNING if i == 0 else STATE_RELEARNING
                due = row["reviewed_at"] + scheduling.RELEARNING_STEPS[0]
            else:
                after = STATE_REVIEW
                # At 90% desired retention FSRS-6's interval equals the stability.
                due = row["reviewed_at"] + timedelta(
                    days=max(1, round(state.stability))
                )
            row["state_after"] = after
            row["stability_after"] = float(state.stability)
            row["difficulty_after"] = float(state.difficulty)
            row["due_after"] = due
            if i + 1 < len(rows):
                rows[i + 1]["state_before"] = after
        last = rows[-1]
        card.update(
            state=last["state_after"],
            step=0 if last["state_after"] != STATE_REVIEW else None,
            stability=last["stability_after"],
            difficulty=last["difficulty_after"],
            due=last["due_after"],
        )


def _sqlite_time(moment: datetime) -> str:
    # The exact text SQLAlchemy's SQLite DATETIME writes for a UTC instant.
    moment = moment.astimezone(UTC)
    return f"{moment:%Y-%m-%d %H:%M:%S}.{moment.microsecond:06d}"


def _copy(
    connection: Connection, table: str, columns: Sequence[str], rows: list[dict]
) -> None:
    """Write rows with the driver's fastest bulk path."""
    if not rows:
        return
    if is_sqlite(connection):
        placeholders = ", ".join("?" for _ in columns)
        values = [
            tuple(
                _sqlite_time(value) if isinstance(value, datetime) else value
                for value in (row[c] for c in columns)
            )
            for row in rows
        ]
        connection.exec_driver_sql(
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({placeholders})",
            values,
        )
        return
    cursor = connection.connection.driver_connection.cursor()
    with cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row([row[c] for c in columns])
    cursor.close()


def _after_bulk_load(connection: Connection) -> None:
    """Refresh planner statistics (and PostgreSQL's id sequences) after a load."""
    if is_sqlite(connection):
        connection.exec_driver_sql("ANALYZE")
        return
    for table in (Card.__table__.name, Review.__table__.name):
        connection.execute(
            text(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                f"(SELECT COALESCE(MAX(id), 1) FROM {table}))"
            )
        )
    connection.exec_driver_sql("ANALYZE")
